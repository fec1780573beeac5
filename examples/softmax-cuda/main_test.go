package main

import (
	"errors"
	"math"
	"testing"

	"github.com/gocu-dev/gocu"
	"github.com/gocu-dev/gocu/internal/gputest"
)

// TestSoftmaxCUDA runs the CUDA C kernel inside an array chain on the GPU
// and compares it with a float64 softmax and with array.Softmax.
func TestSoftmaxCUDA(t *testing.T) {
	gputest.Need(t, gocu.GPUUsable())
	dev := gocu.MustOpen("cuda:0")
	for seed := uint64(1); seed <= 3; seed++ {
		rows, cols := 4096, 1000+int(seed)*13
		r, err := run(dev, rows, cols, seed)
		if err != nil {
			t.Fatal(err)
		}
		var num, den float64
		for i := range rows {
			row := r.logits[i*cols : (i+1)*cols]
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
				got := float64(r.probs[i*cols+j])
				if math.IsNaN(got) {
					t.Fatalf("seed %d: p[%d,%d] is NaN: not written", seed, i, j)
				}
				num += (got - want) * (got - want)
				den += want * want
			}
		}
		if rel := math.Sqrt(num / den); rel > 1e-5 {
			t.Errorf("seed %d: relative error %g against float64", seed, rel)
		}
		if r.maxDiff > 1e-6 {
			t.Errorf("seed %d: max |kernel - array.Softmax| = %g", seed, r.maxDiff)
		}
	}
}

// Without a GPU the example reports that CUDA C needs one.
func TestSoftmaxCUDAWithoutGPU(t *testing.T) {
	for _, name := range []string{"cpu", "sim"} {
		_, err := run(gocu.MustOpen(name), 4, 8, 1)
		if !errors.Is(err, gocu.ErrSimulatorCUDA) {
			t.Errorf("%s: %v, want ErrSimulatorCUDA", name, err)
		}
	}
}
