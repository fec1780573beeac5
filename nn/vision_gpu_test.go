package nn_test

import (
	"fmt"
	"testing"

	"github.com/gocu-dev/gocu/array"
	"github.com/gocu-dev/gocu/grad"
	"github.com/gocu-dev/gocu/nn"
)

// gpuVersusCPU runs f on float32 inputs on the GPU and on their float64
// copies on the CPU, and compares the outputs and the inputs' gradients
// (of the output's sum with random weights).
func gpuVersusCPU(t *testing.T, name string, xs []*array.Array, f func(m *array.Maker, v []*grad.Var) *grad.Var, tol float64) {
	t.Helper()
	gpu := testGPU(t)
	var outs, grads [2][]float64
	for k, m := range []*array.Maker{gpu, array.CPU()} {
		dt := []array.DType{array.Float32, array.Float64}[k]
		vs := make([]*grad.Var, len(xs))
		for i, x := range xs {
			vs[i] = grad.Param(array.FromSliceOn(m.Device(), f64(t, x), x.Shape()...).AsType(dt).Copy())
		}
		y := f(m, vs)
		w := array.FromSliceOn(m.Device(), f64(t, array.CPU().NewRNG(99).Normal(array.Float64, 0, 1, y.Shape()...)), y.Shape()...).AsType(dt)
		if err := y.Mul(w).Sum().Backward(); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		outs[k] = f64(t, y.Value())
		for _, v := range vs {
			grads[k] = append(grads[k], f64(t, v.Grad())...)
		}
	}
	near(t, name+" value", outs[0], outs[1], tol)
	near(t, name+" gradient", grads[0], grads[1], tol)
}

// on copies a CPU array to m's device.
func on(t *testing.T, m *array.Maker, a *array.Array) *array.Array {
	t.Helper()
	if a == nil {
		return nil
	}
	if a.DType().IsInt() {
		return array.FromSliceOn(m.Device(), ints64(a), a.Shape()...)
	}
	return array.FromSliceOn(m.Device(), f64(t, a), a.Shape()...)
}

// TestGPULossesMatchCPU compares every loss and option on the GPU, in
// float32, with the CPU in float64.
func TestGPULossesMatchCPU(t *testing.T) {
	testGPU(t)
	rng := array.CPU().NewRNG(31)
	x := rng.Normal(array.Float64, 0, 3, 64, 10)
	x4 := rng.Normal(array.Float64, 0, 3, 4, 10, 3, 5)
	labels := rng.Uniform(array.Float64, 0, 10, 64).AsType(array.Int64)
	labels4 := rng.Uniform(array.Float64, 0, 10, 4, 3, 5).AsType(array.Int64)
	weight := rng.Uniform(array.Float64, 0.5, 2, 10)
	for _, red := range []nn.Reduction{nn.ReduceMean, nn.ReduceSum, nn.ReduceNone} {
		for _, o := range []nn.CrossEntropyOptions{
			{},
			{Weight: weight},
			{Ignore: true, IgnoreIndex: 3, LabelSmoothing: 0.1},
			{Weight: weight, Ignore: true, IgnoreIndex: 7, LabelSmoothing: 0.25},
		} {
			o.Reduction = red
			opts := func(m *array.Maker) *nn.CrossEntropyOptions {
				p := o
				p.Weight = on(t, m, o.Weight)
				return &p
			}
			name := fmt.Sprintf("%v weight=%v ignore=%v eps=%v", red, o.Weight != nil, o.Ignore, o.LabelSmoothing)
			gpuVersusCPU(t, "CrossEntropy "+name, []*array.Array{x}, func(m *array.Maker, v []*grad.Var) *grad.Var {
				return nn.CrossEntropyWith(v[0], on(t, m, labels), opts(m))
			}, 1e-5)
			gpuVersusCPU(t, "CrossEntropy (N, C, d1, d2) "+name, []*array.Array{x4}, func(m *array.Maker, v []*grad.Var) *grad.Var {
				return nn.CrossEntropyWith(v[0], on(t, m, labels4), opts(m))
			}, 1e-5)
			if o.LabelSmoothing == 0 {
				gpuVersusCPU(t, "NLLLoss "+name, []*array.Array{x}, func(m *array.Maker, v []*grad.Var) *grad.Var {
					return nn.NLLLoss(v[0].LogSoftmax(1), on(t, m, labels), opts(m))
				}, 1e-5)
			}
		}
		p := rng.Uniform(array.Float64, 0.01, 0.99, 32, 6)
		y := rng.Uniform(array.Float64, 0, 1, 32, 6)
		w := rng.Uniform(array.Float64, 0.5, 2, 6)
		pw := rng.Uniform(array.Float64, 0.5, 4, 6)
		gpuVersusCPU(t, fmt.Sprintf("BCE %v", red), []*array.Array{p}, func(m *array.Maker, v []*grad.Var) *grad.Var {
			return nn.BCE(v[0], on(t, m, y).AsType(v[0].DType()), &nn.BCEOptions{Weight: on(t, m, w), Reduction: red})
		}, 1e-5)
		gpuVersusCPU(t, fmt.Sprintf("BCEWithLogits %v", red), []*array.Array{x.Slice(array.S(0, 32), array.S(0, 6))}, func(m *array.Maker, v []*grad.Var) *grad.Var {
			return nn.BCEWithLogits(v[0], on(t, m, y).AsType(v[0].DType()), &nn.BCEOptions{Weight: on(t, m, w), PosWeight: on(t, m, pw), Reduction: red})
		}, 1e-5)
	}
}
