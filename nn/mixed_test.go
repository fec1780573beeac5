package nn_test

import (
	"math"
	"testing"

	"github.com/gocu-dev/gocu/array"
	"github.com/gocu-dev/gocu/grad"
	"github.com/gocu-dev/gocu/nn"
)

// relErr is ||got - want|| / ||want||.
func relErr(got, want []float64) float64 {
	var num, den float64
	for i := range want {
		num += (got[i] - want[i]) * (got[i] - want[i])
		den += want[i] * want[i]
	}
	return math.Sqrt(num / den)
}

// A Linear layer computing in bfloat16 gives the float32 layer's output
// and gradients within bfloat16's rounding, and its gradients stay float32
// (the master weights' dtype), on the CPU and on a GPU.
func TestLinearMixedPrecision(t *testing.T) {
	makers := map[string]*array.Maker{"cpu": array.CPU()}
	if g, err := gpuOnce(); err == nil {
		makers["gpu"] = g
	}
	for name, d := range makers {
		t.Run(name, func(t *testing.T) {
			for _, c := range []array.DType{array.BFloat16, array.Float16} {
				l := nn.NewLinear(d.NewRNG(3), 96, 40)
				x := grad.Param(d.NewRNG(4).Normal(array.Float32, 0, 1, 32, 96))
				y := d.NewRNG(5).Uniform(array.Float32, 0, 40, 32).AsType(array.Int64)

				run := func(compute array.DType) (out, dx, dw, db []float64) {
					l.Compute = compute
					for _, p := range []*grad.Var{x, l.Weight, l.Bias} {
						p.ZeroGrad()
					}
					z := l.Forward(x)
					if z.Value().DType() != array.Float32 {
						t.Fatalf("%v: output dtype %v, want float32", compute, z.Value().DType())
					}
					loss := nn.CrossEntropy(z, y)
					if err := loss.Backward(); err != nil {
						t.Fatal(err)
					}
					for _, p := range []*grad.Var{x, l.Weight, l.Bias} {
						if g := p.Grad(); g == nil || g.DType() != array.Float32 {
							t.Fatalf("%v: a gradient is %v, want float32", compute, g)
						}
					}
					return f64(t, z.Value()), f64(t, x.Grad()), f64(t, l.Weight.Grad()), f64(t, l.Bias.Grad())
				}
				o32, dx32, dw32, db32 := run(0)
				o16, dx16, dw16, db16 := run(c)
				for _, v := range []struct {
					what      string
					got, want []float64
				}{{"output", o16, o32}, {"dx", dx16, dx32}, {"dw", dw16, dw32}, {"db", db16, db32}} {
					// bfloat16 keeps 8 bits: inputs and products round at
					// about 2^-9 each; float16 at 2^-12.
					if e := relErr(v.got, v.want); e > 2e-2 || math.IsNaN(e) {
						t.Errorf("%v %s: relative error %.3g against float32", c, v.what, e)
					} else if e == 0 && v.what != "db" {
						t.Errorf("%v %s: identical to float32: the products did not run in %v", c, v.what, c)
					}
				}
			}
		})
	}
}
