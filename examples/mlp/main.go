// Command mlp runs the forward pass of a two-layer perceptron with package
// array: softmax(relu(x·W1 + b1)·W2 + b2), with MNIST-like sizes (784
// inputs, 256 hidden units, 10 classes). It runs on the CPU (all cores)
// and, when there is one, on the GPU, prints the time of each, and checks
// both against the same network computed in float64. Weights and inputs
// are drawn on each device from one seed (Philox gives the same bits on
// every device), so both devices compute the same network.
//
//	go run ./examples/mlp [-batch 8192] [-hidden 256] [-tf32]
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

type mlp struct {
	w1, b1, w2, b2 *array.Array
}

func newMLP(rng *array.RNG, hidden int) *mlp {
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

func (m *mlp) asType(dt array.DType) *mlp {
	return &mlp{m.w1.AsType(dt), m.b1.AsType(dt), m.w2.AsType(dt), m.b2.AsType(dt)}
}

func main() {
	batch := flag.Int("batch", 8192, "batch size")
	hidden := flag.Int("hidden", 256, "hidden units")
	reps := flag.Int("reps", 5, "timed repetitions")
	tf32 := flag.Bool("tf32", false, "let the GPU use TF32 tensor cores for the products")
	flag.Parse()
	if *tf32 {
		array.SetMatMulPrecision(array.TF32)
	}

	devs := []*array.Maker{array.CPU()}
	if g, err := array.GPU(0); err == nil {
		devs = append(devs, g)
	} else {
		s, _, _ := strings.Cut(err.Error(), "\n")
		s, _, _ = strings.Cut(s, "; tried")
		fmt.Printf("no GPU (%s): CPU only\n", s)
	}

	// The float64 reference, on the CPU.
	rng := array.CPU().NewRNG(7)
	ref64 := newMLP(rng, *hidden).asType(array.Float64)
	x64 := rng.Uniform(array.Float32, 0, 1, *batch, in).AsType(array.Float64)
	ref, err := ref64.forward(x64).Float64s()
	if err != nil {
		log.Fatal(err)
	}

	flops := 2 * float64(*batch) * (in*float64(*hidden) + float64(*hidden)*out)
	var times []time.Duration
	var probs *array.Array
	for _, dev := range devs {
		rng := dev.NewRNG(7)
		net := newMLP(rng, *hidden)
		x := rng.Uniform(array.Float32, 0, 1, *batch, in)
		p := net.forward(x).Eval() // warm-up: compiles the GPU's kernels
		if err := dev.Sync(); err != nil {
			log.Fatalf("%v: %v", dev, err)
		}
		best := time.Duration(math.MaxInt64)
		for r := 0; r < *reps; r++ {
			t0 := time.Now()
			q := net.forward(x).Eval()
			if err := dev.Sync(); err != nil {
				log.Fatal(err)
			}
			best = min(best, time.Since(t0))
			q.Close()
		}
		times = append(times, best)
		got, err := p.Float32s()
		if err != nil {
			log.Fatal(err)
		}
		diff := 0.0
		for i, v := range ref {
			diff = math.Max(diff, math.Abs(float64(got[i])-v))
		}
		fmt.Printf("%-7v MLP %d-%d-%d forward, batch %d: %10v (best of %d), %7.1f GFLOP/s; max |p - p64| = %.2g\n",
			dev.String()+":", in, *hidden, out, *batch, best.Round(time.Microsecond), *reps, flops/best.Seconds()/1e9, diff)
		probs = p
	}
	if len(times) == 2 {
		fmt.Printf("GPU speedup over the CPU: %.1fx\n", float64(times[0])/float64(times[1]))
	}
	rowSums := probs.Sum(1)
	lo, _ := rowSums.Min().Item()
	hi, _ := rowSums.Max().Item()
	fmt.Printf("row sums in [%.7f, %.7f]\n", lo, hi)
	fmt.Printf("first sample: %.3v\n", probs.Slice(array.Idx(0)))
	fmt.Printf("mean confidence %.4v, classes predicted: %v\n", probs.Max(1).Mean(), probs.ArgMax(1).Slice(array.S(0, 12)))
}
