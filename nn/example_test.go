package nn_test

import (
	"fmt"

	"github.com/gocu-dev/gocu/array"
	"github.com/gocu-dev/gocu/grad"
	"github.com/gocu-dev/gocu/nn"
)

// Train a small network to compute XOR.
func Example() {
	dev := array.CPU()
	rng := dev.NewRNG(1)
	model := nn.NewSequential(nn.NewLinear(rng, 2, 8), nn.Tanh{}, nn.NewLinear(rng, 8, 2))
	x := grad.Const(array.FromSlice([]float32{0, 0, 0, 1, 1, 0, 1, 1}, 4, 2))
	y := array.FromSlice([]int64{0, 1, 1, 0})
	opt := nn.NewAdam(nn.Params(model), 0.05)
	for range 300 {
		loss := nn.CrossEntropy(model.Forward(x), y)
		if err := loss.Backward(); err != nil {
			fmt.Println(err)
			return
		}
		if err := opt.Step(); err != nil {
			fmt.Println(err)
			return
		}
		opt.ZeroGrad()
	}
	var pred *grad.Var
	grad.NoGrad(func() { pred = model.Forward(x) })
	fmt.Println(pred.Value().ArgMax(1))
	// Output: [0 1 1 0]
}

func ExampleNewSequential() {
	rng := array.CPU().NewRNG(1)
	m := nn.NewSequential(nn.NewLinear(rng, 784, 512), nn.ReLU{}, nn.NewLinear(rng, 512, 10))
	for _, p := range m.Named() {
		fmt.Println(p.Name, p.Var.Shape())
	}
	// Output:
	// 0.weight [512 784]
	// 0.bias [512]
	// 2.weight [10 512]
	// 2.bias [10]
}

// Warm up, then decay along a cosine, as GPT training does.
func ExampleNewScheduler() {
	w := grad.Param(array.FromSlice([]float32{1, 2}))
	opt := nn.NewAdam([]*grad.Var{w}, 6e-4)
	sched, err := nn.NewScheduler(opt, nn.WarmupCosine{Warmup: 2, Decay: 6, Min: 6e-5})
	if err != nil {
		fmt.Println(err)
		return
	}
	for range 8 {
		fmt.Printf("%.3g ", opt.LR)
		// forward, Backward, opt.Step(), opt.ZeroGrad()
		if err := sched.Step(); err != nil {
			fmt.Println(err)
			return
		}
	}
	fmt.Println()
	// Output: 0.0002 0.0004 0.0006 0.000521 0.00033 0.000139 6e-05 6e-05
}

// Clip the gradients' total norm to 1 before the step.
func ExampleClipGradNorm() {
	w := grad.Param(array.FromSlice([]float32{3, 4}))
	if err := w.Mul(w).Sum().Mul(0.5).Backward(); err != nil { // gradient (3, 4)
		fmt.Println(err)
		return
	}
	norm, err := nn.ClipGradNorm([]*grad.Var{w}, 1, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(norm, w.Grad()) // scaled by 1/(5+1e-6), as torch
	// Output: 5. [0.5999999  0.79999983]
}

// A bfloat16 MLP block as torch.autocast runs it: the layer norm and the
// first product write bfloat16, GELU reads and writes it, and the
// gradients reach float32 master weights.
func ExampleLinearHalf() {
	dev := array.CPU()
	rng := dev.NewRNG(1)
	x := grad.Param(rng.Normal(array.Float32, 0, 1, 4, 8))
	ln := nn.NewLayerNorm(dev, 8)
	ln.Out = array.BFloat16
	fc := nn.NewLinear(rng, 8, 32)
	h := nn.LinearHalf(ln.Forward(x), fc.Weight, fc.Bias, array.BFloat16)
	h = nn.GELU{Tanh: true}.Forward(h)
	fmt.Println(h.DType(), h.Shape())
	if err := h.AsType(array.Float32).Sum().Backward(); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(fc.Weight.Grad().DType(), ln.Weight.Grad().DType(), x.Grad().DType())
	// Output:
	// bfloat16 [4 32]
	// float32 float32 float32
}

// BiasGELU adds a bias along the last axis and applies GELU: on a GPU one
// fused kernel each way (Fused says whether they run on a device).
func ExampleBiasGELU() {
	dev := array.CPU()
	x := grad.Param(array.FromSlice([]float32{-1, 0, 1, 2}, 2, 2))
	b := grad.Param(array.FromSlice([]float32{0.5, -0.5}, 2))
	y := nn.BiasGELU(x, b, false, 0)
	v, err := y.Value().Float64s()
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%.4f %v\n", v, nn.Fused(dev.Device()))
	// Output: [-0.1543 -0.1543 1.3998 1.3998] false
}
