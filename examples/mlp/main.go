// Command mlp runs the forward pass of a two-layer perceptron with package
// array on the default device: softmax(relu(x·W1 + b1)·W2 + b2), with
// MNIST-like sizes (784 inputs, 256 hidden units, 10 classes), and checks
// it against the same network computed in float64.
//
//	go run ./examples/mlp [-batch 8192] [-hidden 256]
package main

import (
	"flag"
	"fmt"
	"log"
	"math"
	"time"

	"github.com/gocu-dev/gocu/array"
)

type mlp struct {
	w1, b1, w2, b2 *array.Array
}

func newMLP(rng *array.RNG, in, hidden, out int) *mlp {
	// He initialisation for the ReLU layer, Xavier for the output layer.
	return &mlp{
		w1: rng.Normal(array.Float32, 0, math.Sqrt(2/float64(in)), in, hidden),
		b1: rng.Normal(array.Float32, 0, 0.01, hidden),
		w2: rng.Normal(array.Float32, 0, math.Sqrt(1/float64(hidden)), hidden, out),
		b2: rng.Normal(array.Float32, 0, 0.01, out),
	}
}

// forward returns class probabilities; the bias adds and the ReLU fuse
// into one pass after each matrix product.
func (m *mlp) forward(x *array.Array) *array.Array {
	h := x.MatMul(m.w1).Add(m.b1).ReLU()
	return h.MatMul(m.w2).Add(m.b2).Softmax(1)
}

func main() {
	batch := flag.Int("batch", 8192, "batch size")
	hidden := flag.Int("hidden", 256, "hidden units")
	reps := flag.Int("reps", 5, "timed repetitions")
	flag.Parse()
	const in, out = 784, 10

	dev := array.Default()
	rng := dev.NewRNG(7)
	net := newMLP(rng, in, *hidden, out)
	x := rng.Uniform(array.Float32, 0, 1, *batch, in)

	probs := net.forward(x)
	if err := probs.Err(); err != nil {
		log.Fatal(err)
	}
	best := time.Duration(1 << 62)
	for r := 0; r < *reps; r++ {
		t0 := time.Now()
		p := net.forward(x).Eval()
		if err := dev.Sync(); err != nil {
			log.Fatal(err)
		}
		best = min(best, time.Since(t0))
		p.Close()
	}
	flops := 2 * float64(*batch) * (in*float64(*hidden) + float64(*hidden)*out)
	fmt.Printf("device %v: MLP %d-%d-%d forward on a batch of %d in %v (best of %d), %.1f GFLOP/s\n",
		dev, in, *hidden, out, *batch, best.Round(time.Microsecond), *reps, flops/best.Seconds()/1e9)

	// The same network in float64 must agree to float32 precision.
	x64, w164, b164, w264, b264 := x.AsType(array.Float64), net.w1.AsType(array.Float64), net.b1.AsType(array.Float64),
		net.w2.AsType(array.Float64), net.b2.AsType(array.Float64)
	ref := x64.MatMul(w164).Add(b164).ReLU().MatMul(w264).Add(b264).Softmax(1)
	diff, err := array.ItemOf[float64](probs.AsType(array.Float64).Sub(ref).Abs().Max())
	if err != nil {
		log.Fatal(err)
	}
	rowSums := probs.Sum(1)
	lo, _ := rowSums.Min().Item()
	hi, _ := rowSums.Max().Item()
	fmt.Printf("max |p32 - p64| = %.2g; row sums in [%.7f, %.7f]\n", diff, lo, hi)
	fmt.Printf("first sample: %.3v\n", probs.Slice(array.Idx(0)))
	fmt.Printf("mean confidence %.4v, classes predicted: %v\n", probs.Max(1).Mean(), probs.ArgMax(1).Slice(array.S(0, 12)))
}
