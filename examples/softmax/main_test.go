package main

import (
	"errors"
	"math"
	"testing"

	"github.com/gocu-dev/gocu"
	"github.com/gocu-dev/gocu/array"
	"github.com/gocu-dev/gocu/internal/gputest"
	"github.com/gocu-dev/gocu/sim"
)

// devices are the simulator, the CPU and, when there is one, the GPU.
func devices(t *testing.T) []*gocu.Device {
	ds := []*gocu.Device{gocu.MustOpen("sim"), gocu.MustOpen("cpu")}
	if !gputest.Usable(t, gocu.GPUUsable()) {
		return ds
	}
	if g, err := gocu.Open("cuda:0"); err != nil {
		t.Errorf("a GPU is usable but cuda:0 does not open: %v", err)
	} else {
		ds = append(ds, g)
	}
	return ds
}

// TestSoftmaxRows runs the example on every device: the Go kernel's
// output, reached through the array chain, against a float64 softmax of
// the same logits and against array.Softmax.
func TestSoftmaxRows(t *testing.T) {
	for _, dev := range devices(t) {
		t.Run(dev.ID(), func(t *testing.T) {
			rows, cols := 4096, 1000
			switch dev.Kind() {
			case gocu.Sim:
				rows, cols = 24, 300 // race detection on every shared access
			case gocu.CPU:
				rows = 64
			}
			for seed := uint64(1); seed <= 2; seed++ {
				r, err := run(dev, rows, cols, seed)
				if err != nil {
					t.Fatal(err)
				}
				checkReference(t, r)
				if r.maxDiff > 1e-6 || math.IsNaN(r.maxDiff) {
					t.Errorf("seed %d: max |kernel - array.Softmax| = %g", seed, r.maxDiff)
				}
				if r.entropy <= 0 || r.entropy > math.Log(float64(cols)) {
					t.Errorf("seed %d: mean entropy %g outside (0, log %d]", seed, r.entropy, cols)
				}
				t.Logf("%v", r)
			}
		})
	}
}

// checkReference compares the kernel's probabilities with a float64
// softmax of its input: ||p - ref|| / ||ref|| under 1e-5, and every
// element written (run fills the output with NaN before the kernel).
func checkReference(t *testing.T, r *report) {
	t.Helper()
	var num, den float64
	for i := range r.rows {
		row := r.logits[i*r.cols : (i+1)*r.cols]
		m := math.Inf(-1)
		for _, v := range row {
			m = math.Max(m, float64(v))
		}
		var s float64
		for _, v := range row {
			s += math.Exp(float64(v) - m)
		}
		for j, v := range row {
			want := math.Exp(float64(v)-m) / s
			got := float64(r.probs[i*r.cols+j])
			if math.IsNaN(got) {
				t.Fatalf("p[%d,%d] is NaN: not written", i, j)
			}
			num += (got - want) * (got - want)
			den += want * want
		}
	}
	if rel := math.Sqrt(num / den); rel > 1e-5 {
		t.Errorf("relative error %g against float64", rel)
	}
}

// The kernel's launch takes the arrays' errors: a failed array gives its
// own, a strided view and an array of another device are refused, and the
// simulator names an index beyond the array.
func TestSoftmaxRowsErrors(t *testing.T) {
	dev := gocu.MustOpen("sim")
	a := array.On(dev)
	x := a.Ones(array.Float32, 4, 8)
	bad := x.Add(a.Ones(array.Float32, 5)) // (4,8) + (5,) does not broadcast
	y := a.Empty(array.Float32, 4, 8)
	cfg := gocu.Config{Grid: gocu.Dim3{X: 4}, Block: gocu.Dim3{X: Threads}}
	err := LaunchSoftmaxRows(dev, cfg, array.AsBuffer[float32](bad), array.AsBuffer[float32](y), 4, 8)
	if !errors.Is(err, array.ErrShape) || !errors.Is(err, bad.Err()) {
		t.Errorf("launch with a failed array: %v, want the array's error %v", err, bad.Err())
	}
	// A strided view is refused.
	err = LaunchSoftmaxRows(dev, cfg, array.AsBuffer[float32](x.T()), array.AsBuffer[float32](y), 4, 8)
	if !errors.Is(err, array.ErrValue) {
		t.Errorf("launch with a transposed view: %v, want ErrValue", err)
	}
	// An array of another device.
	other := array.CPU().Ones(array.Float32, 4, 8)
	err = LaunchSoftmaxRows(dev, cfg, array.AsBuffer[float32](other), array.AsBuffer[float32](y), 4, 8)
	if err == nil {
		t.Error("launch with an array of the CPU on the simulator succeeded")
	}
	// Rows beyond the buffer: the simulator names the index.
	err = LaunchSoftmaxRows(dev, cfg, array.AsBuffer[float32](x), array.AsBuffer[float32](y), 5, 8)
	if err != nil {
		t.Errorf("grid of 4 blocks over 5 rows: %v", err)
	}
	cfg.Grid.X = 5
	err = LaunchSoftmaxRows(dev, cfg, array.AsBuffer[float32](x), array.AsBuffer[float32](y), 5, 8)
	var se *sim.Error
	if !errors.As(err, &se) || !errors.Is(err, sim.ErrOutOfRange) {
		t.Errorf("5 rows over a 4x8 array: %v, want the simulator's out-of-range error", err)
	}
}
