package lecture

import (
	"slices"
	"time"

	"github.com/gocu-dev/gocu"
	"github.com/gocu-dev/gocu/cuda"
)

// Time runs run (work queued on dev's default stream) and returns the time
// of one run. On a GPU it runs it once to warm up (compilation, first-touch
// costs), then reps times between two CUDA events, and returns the average
// GPU time. On the simulator run executes at once; Time returns the median
// wall time of reps runs.
func Time(dev *gocu.Device, reps int, run func() error) (time.Duration, error) {
	reps = max(reps, 1)
	if g := dev.CUDA(); g != nil {
		return timeGPU(dev, g, reps, run)
	}
	times := make([]time.Duration, reps)
	for i := range times {
		t0 := time.Now()
		if err := run(); err != nil {
			return 0, err
		}
		times[i] = time.Since(t0)
	}
	slices.Sort(times)
	return times[reps/2], nil
}

func timeGPU(dev *gocu.Device, g *cuda.Device, reps int, run func() error) (d time.Duration, err error) {
	if err := run(); err != nil {
		return 0, err
	}
	if err := dev.Synchronize(); err != nil {
		return 0, err
	}
	start, err := g.NewEvent(cuda.EventDefault)
	if err != nil {
		return 0, err
	}
	defer closeInto(start, &err)
	end, err := g.NewEvent(cuda.EventDefault)
	if err != nil {
		return 0, err
	}
	defer closeInto(end, &err)
	if err := start.Record(dev.Stream().CUDA()); err != nil {
		return 0, err
	}
	for range reps {
		if err := run(); err != nil {
			return 0, err
		}
	}
	if err := end.Record(dev.Stream().CUDA()); err != nil {
		return 0, err
	}
	if err := end.Synchronize(); err != nil {
		return 0, err
	}
	total, err := cuda.Elapsed(start, end)
	if err != nil {
		return 0, err
	}
	return total / time.Duration(reps), nil
}

func closeInto(e *cuda.Event, err *error) {
	if cerr := e.Close(); *err == nil && cerr != nil {
		*err = cerr
	}
}
