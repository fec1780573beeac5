// Command mnist-layer runs the lecture's MNIST-sized dense layer on random
// data with package array: a 50000×784 batch times a 784×10 weight matrix,
// plus a bias. It runs on the CPU (all cores) and, when there is one, on
// the GPU, prints the time of each, and checks that they agree with each
// other and with a float64 reference. The random inputs are drawn on each
// device from the same seed: Philox gives the same bits everywhere.
//
//	go run ./examples/mnist-layer [-n 50000] [-reps 5]
package main

import (
	"flag"
	"fmt"
	"log"
	"math"
	"strings"
	"time"

	"github.com/gocu-dev/gocu/array"
)

const in, out = 784, 10

// result is one device's run.
type result struct {
	dev  *array.Maker
	best time.Duration
	y    []float32 // the layer's output, row-major
}

func main() {
	n := flag.Int("n", 50000, "batch size (images)")
	reps := flag.Int("reps", 5, "timed repetitions")
	flag.Parse()

	devs := []*array.Maker{array.CPU()}
	if g, err := array.GPU(0); err == nil {
		devs = append(devs, g)
	} else {
		fmt.Printf("no GPU (%s): CPU only\n", firstLine(err))
	}
	var res []result
	for _, dev := range devs {
		r, err := run(dev, *n, *reps)
		if err != nil {
			log.Fatalf("%v: %v", dev, err)
		}
		res = append(res, r)
		flops := 2 * float64(*n) * in * out
		fmt.Printf("%-7v (%d×%d) @ (%d×%d) + bias: %10v (best of %d), %7.1f GFLOP/s\n",
			dev.String()+":", *n, in, in, out, r.best.Round(time.Microsecond), *reps, flops/r.best.Seconds()/1e9)
	}
	if len(res) == 2 {
		fmt.Printf("GPU speedup over the CPU: %.1fx; max |cpu - gpu| = %.2g\n",
			float64(res[0].best)/float64(res[1].best), maxDiff(res[0].y, res[1].y))
	}

	// Check the CPU's output against float64 on a few rows (the same draws:
	// same seed, same order).
	rng := array.CPU().NewRNG(2024)
	x := rng.Uniform(array.Float32, 0, 1, *n, in)
	w := rng.Normal(array.Float32, 0, 0.05, in, out).AsType(array.Float64)
	b := rng.Normal(array.Float32, 0, 0.05, out).AsType(array.Float64)
	rows := min(*n, 8)
	ref, err := x.Slice(array.S(0, rows)).AsType(array.Float64).MatMul(w).Add(b).Float64s()
	if err != nil {
		log.Fatal(err)
	}
	worst := 0.0
	for i, v := range ref {
		worst = math.Max(worst, math.Abs(float64(res[0].y[i])-v))
	}
	fmt.Printf("first %d rows vs float64: max abs error %.2g\n", rows, worst)
	y := array.FromSlice(res[len(res)-1].y, *n, out)
	fmt.Printf("row 0: %.4v\n", y.Slice(array.Idx(0)))
	counts := array.Zeros(array.Int64, out)
	pred := y.ArgMax(1)
	for c := 0; c < out; c++ {
		k, _ := array.ItemOf[int64](pred.Eq(c).Sum())
		counts.Slice(array.Idx(c)).Assign(k)
	}
	fmt.Printf("predicted class histogram: %v\n", counts)
}

// run times the layer on dev (best of reps, after a warm-up that compiles
// the GPU's kernels) and returns its output.
func run(dev *array.Maker, n, reps int) (result, error) {
	rng := dev.NewRNG(2024)
	x := rng.Uniform(array.Float32, 0, 1, n, in)     // pixel intensities
	w := rng.Normal(array.Float32, 0, 0.05, in, out) // weights
	b := rng.Normal(array.Float32, 0, 0.05, out)     // bias
	defer x.Close()
	layer := func() *array.Array { return x.MatMul(w).Add(b).Eval() }
	warm := layer()
	if err := dev.Sync(); err != nil {
		return result{}, err
	}
	warm.Close()
	r := result{dev: dev, best: time.Duration(math.MaxInt64)}
	var y *array.Array
	for i := 0; i < reps; i++ {
		y.Close()
		t0 := time.Now()
		y = layer()
		if err := dev.Sync(); err != nil {
			return result{}, err
		}
		r.best = min(r.best, time.Since(t0))
	}
	v, err := y.Float32s()
	r.y = v
	return r, err
}

func maxDiff(a, b []float32) float64 {
	m := 0.0
	for i := range a {
		m = math.Max(m, math.Abs(float64(a[i])-float64(b[i])))
	}
	return m
}

func firstLine(err error) string {
	s, _, _ := strings.Cut(err.Error(), "\n")
	s, _, _ = strings.Cut(s, "; tried")
	if len(s) > 120 {
		s = s[:120] + "..."
	}
	return s
}
