// Softmax is a custom array operation written as a Go kernel: an array
// chain computes logits, the kernel SoftmaxRows (kernel.go, translated by
// gocu gen) turns them into probabilities in place of array.Softmax, and
// the chain goes on with the kernel's output. The arrays go into the
// kernel and come back without a copy (array.AsBuffer), and on a GPU
// everything is queued on the device's one stream, in order, without the
// host waiting in between.
//
//	go run ./examples/softmax                  # the default device: the GPU, or the CPU
//	GOCU_DEVICE=sim go run ./examples/softmax  # the simulator, with race detection
//
// It checks the kernel against the array library's own Softmax and times
// both.
package main

import (
	"flag"
	"fmt"
	"log"
	"math"
	"time"

	"github.com/gocu-dev/gocu"
	"github.com/gocu-dev/gocu/array"
	"github.com/gocu-dev/gocu/cuda"
)

func main() {
	rows := flag.Int("rows", 0, "rows of the logits (default: 8192 on a GPU, 512 on the CPU, 64 on the simulator)")
	cols := flag.Int("cols", 1000, "columns (classes)")
	flag.Parse()
	dev, err := gocu.Default()
	if err != nil {
		log.Fatal(err)
	}
	if *rows == 0 {
		*rows = map[gocu.Kind]int{gocu.CUDA: 8192, gocu.CPU: 512, gocu.Sim: 64}[dev.Kind()]
	}
	rep, err := run(dev, *rows, *cols, 1)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(rep)
}

// report is what one run found.
type report struct {
	dev        *gocu.Device
	rows, cols int
	probs      []float32 // the kernel's output
	logits     []float32 // its input, for a reference in float64
	maxDiff    float64   // largest |kernel - array.Softmax|
	entropy    float64   // mean entropy of the rows, computed by arrays from the kernel's output
	kernel     time.Duration
	library    time.Duration
}

func (r *report) String() string {
	return fmt.Sprintf("softmax of %dx%d logits on %v:\n  Go kernel SoftmaxRows %v, array.Softmax %v\n  max |kernel - array.Softmax| = %.2g; mean entropy of the rows %.4f",
		r.rows, r.cols, r.dev, r.kernel.Round(100*time.Nanosecond), r.library.Round(100*time.Nanosecond), r.maxDiff, r.entropy)
}

// run computes softmax(1.5 x·w) with the Go kernel inside an array chain
// on dev, checks it against array.Softmax and times both.
func run(dev *gocu.Device, rows, cols int, seed uint64) (*report, error) {
	arrays := array.On(dev)
	const k = 64
	x := arrays.NewRNG(seed).Normal(array.Float32, 0, 1, rows, k)
	w := arrays.NewRNG(seed+1).Normal(array.Float32, 0, 0.3, k, cols)
	logits := x.MatMul(w).Mul(1.5).Eval() // array operations
	// NaN-filled, so that an element the kernel does not write shows.
	probs := arrays.Full(array.Float32, math.NaN(), rows, cols).Eval()
	cfg := gocu.Config{
		Grid:    gocu.Dim3{X: int32(rows)},
		Block:   gocu.Dim3{X: Threads},
		Checked: dev.Kind() == gocu.Sim, // race detection on the simulator
	}
	softmax := func() error {
		return LaunchSoftmaxRows(dev, cfg, logits, probs, int32(rows), int32(cols)) // arrays go in directly
	}
	if err := softmax(); err != nil {
		return nil, err
	}
	// The chain goes on with the kernel's output: the rows' entropy.
	entropy := probs.Mul(probs.Log()).Sum(1).Neg().Mean()
	ref := logits.Softmax(1)
	r := &report{dev: dev, rows: rows, cols: cols}
	var err error
	if r.entropy, err = entropy.Item(); err != nil {
		return nil, err
	}
	if r.maxDiff, err = probs.Sub(ref).Abs().Max().Item(); err != nil {
		return nil, err
	}
	if r.probs, err = probs.Float32s(); err != nil {
		return nil, err
	}
	if r.logits, err = logits.Float32s(); err != nil {
		return nil, err
	}
	cfg.Checked = false // time the plain simulator
	if r.kernel, err = timeIt(dev, softmax); err != nil {
		return nil, err
	}
	r.library, err = timeIt(dev, func() error {
		y := logits.Softmax(1).Eval()
		defer y.Close()
		return y.Err()
	})
	return r, err
}

// timeIt returns the median time of f: on a GPU between CUDA events on the
// device's stream, after a warm-up; elsewhere by the wall clock.
func timeIt(dev *gocu.Device, f func() error) (time.Duration, error) {
	reps := 21
	if !dev.IsGPU() {
		reps = 3
	}
	if err := f(); err != nil { // warm-up: compiles on a GPU
		return 0, err
	}
	times := make([]time.Duration, 0, reps)
	for range reps {
		var d time.Duration
		if s := dev.Stream().CUDA(); s != nil {
			t0, err := dev.CUDA().NewEvent(0)
			if err != nil {
				return 0, err
			}
			t1, err := dev.CUDA().NewEvent(0)
			if err != nil {
				return 0, err
			}
			if err := t0.Record(s); err != nil {
				return 0, err
			}
			if err := f(); err != nil {
				return 0, err
			}
			if err := t1.Record(s); err != nil {
				return 0, err
			}
			if err := t1.Synchronize(); err != nil {
				return 0, err
			}
			if d, err = cuda.Elapsed(t0, t1); err != nil {
				return 0, err
			}
			t0.Close()
			t1.Close()
		} else {
			t0 := time.Now()
			if err := f(); err != nil {
				return 0, err
			}
			d = time.Since(t0)
		}
		times = append(times, d)
	}
	for i := range times { // insertion sort: a handful of samples
		for j := i; j > 0 && times[j] < times[j-1]; j-- {
			times[j], times[j-1] = times[j-1], times[j]
		}
	}
	return times[len(times)/2], nil
}
