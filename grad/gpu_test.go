package grad_test

import (
	"testing"

	"github.com/gocu-dev/gocu/array"
	"github.com/gocu-dev/gocu/grad"
	"github.com/gocu-dev/gocu/internal/gputest"
)

// TestGPUMatchesCPU computes the same float32 gradients on the GPU and on
// the CPU (inputs drawn from one seed: Philox gives the same bits on both)
// and compares them.
func TestGPUMatchesCPU(t *testing.T) {
	devs := []*array.Maker{array.CPU()}
	if g, err := gpuOnce(); gputest.Usable(t, err) {
		devs = append(devs, g)
	}
	fs := map[string]func(x ...*grad.Var) *grad.Var{
		"mlp": func(x ...*grad.Var) *grad.Var {
			return x[0].MatMul(x[1]).Add(x[2]).ReLU().MatMul(x[1].T()).Tanh().LogSoftmax(1).Mean()
		},
		"softmax-max-slice": func(x ...*grad.Var) *grad.Var {
			s := x[0].Slice(array.S(0, 8, 2), array.S(array.None, array.None, -1)).Softmax(0)
			return s.Max(1).Sum().Add(x[2].Mul(x[2]).Prod()).Add(x[0].LogSumExp(-1).Min())
		},
		"batched": func(x ...*grad.Var) *grad.Var {
			b := x[0].Reshape(2, 4, 6)
			return b.SwapAxes(-1, -2).MatMul(b).Sigmoid().Sum(0).Mean()
		},
	}
	for name, f := range fs {
		t.Run(name, func(t *testing.T) {
			var got [2][][]float64
			for k, d := range devs {
				r := d.NewRNG(42)
				xs := []*grad.Var{
					grad.Param(r.Normal(array.Float32, 0, 1, 8, 6)),
					grad.Param(r.Normal(array.Float32, 0, 0.5, 6, 6)),
					grad.Param(r.Uniform(array.Float32, 0.5, 1.5, 6)),
				}
				if err := f(xs...).Backward(); err != nil {
					t.Fatal(err)
				}
				for _, x := range xs {
					g := x.Grad()
					if g == nil {
						got[k] = append(got[k], nil)
						continue
					}
					got[k] = append(got[k], vals(t, g))
				}
			}
			if len(devs) < 2 {
				return
			}
			for i := range got[0] {
				near(t, "gradient", got[1][i], got[0][i], 2e-5)
			}
		})
	}
}
