// Command quantize runs the forward pass of an MNIST-sized perceptron,
// 784-512-512-10 with ReLU, three ways with package array, and prints
// each one's time and its largest difference from the float32 result:
//
//   - float32: x·W + b in float32 (FP32 cuBLAS on a GPU, the AVX2 GEMM on
//     the CPU);
//   - bfloat16: weights, activations and products in bfloat16, products
//     accumulated in float32 (tensor cores on a GPU);
//   - int8: QuantizedLinear layers: weights quantised per output channel
//     once, each layer's input per row on the fly (one kernel), the int8
//     product into int32 (IMMA tensor cores through cuBLASLt on a GPU),
//     then dequantisation, bias and ReLU fused into one pass.
//
// The weights are random (He initialisation) and so are the inputs: there
// is no trained model here, so the figure of merit is the difference from
// float32, relative to the largest output. It runs on the default device
// (GOCU_DEVICE picks one; the GPU when there is one).
//
//	go run ./examples/quantize [-batch 4096] [-reps 10]
package main

import (
	"flag"
	"fmt"
	"log"
	"math"
	"time"

	"github.com/gocu-dev/gocu/array"
	"github.com/gocu-dev/gocu/nn"
)

var sizes = []int{784, 512, 512, 10}

type layer struct{ w, b *array.Array }

func main() {
	batch := flag.Int("batch", 4096, "batch size")
	reps := flag.Int("reps", 10, "timed repetitions (the median is printed)")
	flag.Parse()

	dev := array.Default()
	rng := dev.NewRNG(1)
	var layers []layer
	for i := 0; i+1 < len(sizes); i++ {
		layers = append(layers, layer{
			w: rng.Normal(array.Float32, 0, math.Sqrt(2/float64(sizes[i])), sizes[i], sizes[i+1]),
			b: rng.Normal(array.Float32, 0, 0.01, sizes[i+1]),
		})
	}
	x := rng.Uniform(array.Float32, 0, 1, *batch, sizes[0])

	// float32: bias and ReLU fuse into one pass after each product.
	f32 := func() *array.Array {
		h := x
		for i, l := range layers {
			h = h.MatMul(l.w).Add(l.b)
			if i+1 < len(layers) {
				h = h.ReLU()
			}
		}
		return h
	}

	// bfloat16: the weights converted once; results in bfloat16.
	var bl []layer
	for _, l := range layers {
		bl = append(bl, layer{l.w.AsType(array.BFloat16).Eval(), l.b.AsType(array.BFloat16).Eval()})
	}
	xb := x.AsType(array.BFloat16).Eval()
	bf16 := func() *array.Array {
		h := xb
		for i, l := range bl {
			h = h.MatMul(l.w).Add(l.b)
			if i+1 < len(bl) {
				h = h.ReLU()
			}
		}
		return h
	}

	// int8: each layer quantised once.
	var ql []*nn.QuantizedLinear
	for _, l := range layers {
		q, err := nn.NewQuantizedLinear(l.w, l.b)
		if err != nil {
			log.Fatal(err)
		}
		ql = append(ql, q)
	}
	int8 := func() *array.Array {
		h := x
		for i, l := range ql {
			h = l.Forward(h)
			if i+1 < len(ql) {
				h = h.ReLU() // fuses into the layer's epilogue
			}
		}
		return h
	}

	ref, err := f32().Float32s()
	if err != nil {
		log.Fatal(err)
	}
	top := 0.0
	for _, v := range ref {
		top = math.Max(top, math.Abs(float64(v)))
	}
	flops := 2 * float64(*batch) * float64(sizes[0]*sizes[1]+sizes[1]*sizes[2]+sizes[2]*sizes[3])
	fmt.Printf("MLP %v forward, batch %d, on %v (random weights; differences relative to the largest float32 output, %.3g)\n",
		sizes, *batch, dev, top)
	fmt.Printf("%-9s %10s %10s %14s %14s\n", "precision", "time", "TFLOP/s", "max |diff|", "relative")
	for _, v := range []struct {
		name string
		run  func() *array.Array
	}{{"float32", f32}, {"bfloat16", bf16}, {"int8", int8}} {
		if err := v.run().Eval().Err(); err != nil { // warm up: compile kernels, plan products
			log.Fatalf("%s: %v", v.name, err)
		}
		if err := dev.Sync(); err != nil {
			log.Fatal(err)
		}
		var times []time.Duration
		var last *array.Array
		for range *reps {
			t0 := time.Now()
			y := v.run().Eval()
			if err := dev.Sync(); err != nil {
				log.Fatal(err)
			}
			times = append(times, time.Since(t0))
			if last != nil {
				last.Close()
			}
			last = y
		}
		got, err := last.Float32s()
		if err != nil {
			log.Fatalf("%s: %v", v.name, err)
		}
		worst := 0.0
		for i := range ref {
			worst = math.Max(worst, math.Abs(float64(got[i]-ref[i])))
		}
		med := median(times)
		fmt.Printf("%-9s %10v %10.2f %14.4g %14.3g\n", v.name, med.Round(time.Microsecond), flops/med.Seconds()/1e12, worst, worst/top)
	}
}

func median(ts []time.Duration) time.Duration {
	s := append([]time.Duration(nil), ts...)
	for i := range s {
		for j := i + 1; j < len(s); j++ {
			if s[j] < s[i] {
				s[i], s[j] = s[j], s[i]
			}
		}
	}
	return s[len(s)/2]
}
