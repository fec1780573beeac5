package nn_test

import (
	"fmt"
	"testing"

	"github.com/gocu-dev/gocu/array"
	"github.com/gocu-dev/gocu/grad"
	"github.com/gocu-dev/gocu/nn"
)

// TestGradientAccumulation checks that Backward adds into the gradients
// already there: k micro-batches of b examples, each loss scaled by 1/k,
// give the gradients of one batch of k·b (the mean loss), and the same
// optimiser step.
func TestGradientAccumulation(t *testing.T) {
	makers := []*array.Maker{array.CPU()}
	if g, err := gpuOnce(); err == nil {
		makers = append(makers, g)
	}
	const k, b = 3, 4
	for _, d := range makers {
		for _, dt := range []array.DType{array.Float64, array.Float32} {
			t.Run(fmt.Sprintf("%v/%v", d, dt), func(t *testing.T) {
				rng := d.NewRNG(60)
				x := rng.Normal(dt, 0, 1, k*b, 5)
				y := rng.Integers(array.Int64, 0, 3, k*b)
				run := func(micro bool) ([][]float64, [][]float64) {
					r := d.NewRNG(61)
					m := nn.NewSequential(nn.NewLinear(r, 5, 8), nn.NewLayerNorm(d, 8), nn.GELU{}, nn.NewLinear(r, 8, 3))
					if err := nn.Cast(m, dt); err != nil {
						t.Fatal(err)
					}
					opt := nn.NewAdamW(nn.Params(m), 1e-2, 0.1)
					if micro {
						for i := range k {
							xi := x.Slice(array.S(i*b, (i+1)*b))
							yi := y.Slice(array.S(i*b, (i+1)*b))
							loss := nn.CrossEntropy(m.Forward(grad.Const(xi)), yi).Mul(1.0 / k)
							if err := loss.Backward(); err != nil {
								t.Fatal(err)
							}
						}
					} else if err := nn.CrossEntropy(m.Forward(grad.Const(x)), y).Backward(); err != nil {
						t.Fatal(err)
					}
					var grads, vals [][]float64
					for _, p := range nn.Params(m) {
						grads = append(grads, f64(t, p.Grad()))
					}
					if err := opt.Step(); err != nil {
						t.Fatal(err)
					}
					for _, p := range nn.Params(m) {
						vals = append(vals, f64(t, p.Value()))
					}
					return grads, vals
				}
				g1, v1 := run(false)
				gk, vk := run(true)
				tol := 1e-12
				if dt == array.Float32 {
					tol = 1e-6
				}
				for i := range g1 {
					near(t, fmt.Sprintf("gradient %d", i), gk[i], g1[i], tol)
					near(t, fmt.Sprintf("parameter %d after the step", i), vk[i], v1[i], tol)
				}
			})
		}
	}
}
