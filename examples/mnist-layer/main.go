// Command mnist-layer runs the lecture's MNIST-sized dense layer on random
// data with package array: a 50000×784 batch times a 784×10 weight matrix,
// plus a bias, on the default device (all CPU cores when there is no GPU),
// and prints how long it takes.
//
//	go run ./examples/mnist-layer [-n 50000] [-reps 5]
package main

import (
	"flag"
	"fmt"
	"log"
	"time"

	"github.com/gocu-dev/gocu/array"
)

func main() {
	n := flag.Int("n", 50000, "batch size (images)")
	reps := flag.Int("reps", 5, "timed repetitions")
	flag.Parse()
	const in, out = 784, 10

	dev := array.Default()
	rng := dev.NewRNG(2024)
	x := rng.Uniform(array.Float32, 0, 1, *n, in)    // pixel intensities
	w := rng.Normal(array.Float32, 0, 0.05, in, out) // weights
	b := rng.Normal(array.Float32, 0, 0.05, out)     // bias
	if err := x.Err(); err != nil {
		log.Fatal(err)
	}

	layer := func() *array.Array { return x.MatMul(w).Add(b) }
	warm := layer()
	if err := dev.Sync(); err != nil {
		log.Fatal(err)
	}
	warm.Close()

	best := time.Duration(1 << 62)
	var y *array.Array
	for r := 0; r < *reps; r++ {
		y.Close()
		t0 := time.Now()
		y = layer().Eval()
		if err := dev.Sync(); err != nil {
			log.Fatal(err)
		}
		best = min(best, time.Since(t0))
	}
	flops := 2 * float64(*n) * in * out
	fmt.Printf("device %v: (%d×%d) @ (%d×%d) + bias in %v (best of %d), %.1f GFLOP/s\n",
		dev, *n, in, in, out, best.Round(time.Microsecond), *reps, flops/best.Seconds()/1e9)

	// Check one output row against a float64 dot product.
	row, err := x.Slice(array.Idx(0)).AsType(array.Float64).Float64s()
	if err != nil {
		log.Fatal(err)
	}
	wv, _ := w.AsType(array.Float64).Float64s()
	bv, _ := b.AsType(array.Float64).Float64s()
	got, _ := y.Slice(array.Idx(0)).Float32s()
	maxErr := 0.0
	for j := 0; j < out; j++ {
		s := bv[j]
		for k := 0; k < in; k++ {
			s += row[k] * wv[k*out+j]
		}
		maxErr = max(maxErr, abs(float64(got[j])-s))
	}
	fmt.Printf("row 0: %.4v (max abs error vs float64 %.2g)\n", y.Slice(array.Idx(0)), maxErr)
	pred := y.ArgMax(1)
	counts := array.Zeros(array.Int64, out)
	for c := 0; c < out; c++ {
		k, _ := array.ItemOf[int64](pred.Eq(c).Sum())
		counts.Slice(array.Idx(c)).Assign(k)
	}
	fmt.Printf("predicted class histogram: %v\n", counts)
}

func abs(x float64) float64 {
	if x < 0 {
		return -x
	}
	return x
}
