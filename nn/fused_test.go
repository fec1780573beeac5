package nn_test

import (
	"errors"
	"testing"

	"github.com/gocu-dev/gocu/array"
	"github.com/gocu-dev/gocu/grad"
	"github.com/gocu-dev/gocu/nn"
)

// TestFusedOnlyOnGPU: the CPU runs the composed operations.
func TestFusedOnlyOnGPU(t *testing.T) {
	if nn.Fused(array.CPU().Device()) {
		t.Fatal("Fused on the CPU")
	}
}

// TestOutDTypes checks LayerNorm's and GELU's Out and LinearHalf on the
// CPU: the composed result, rounded once to the requested dtype, and the
// gradients of the unrounded path rounded as the half result passes them.
func TestOutDTypes(t *testing.T) {
	cpu := array.CPU()
	rng := cpu.NewRNG(5)
	x := grad.Param(rng.Normal(array.Float32, 0, 1, 4, 6, 8))
	w := grad.Param(rng.Normal(array.Float32, 0, 1, 5, 8))
	b := grad.Param(rng.Normal(array.Float32, 0, 1, 5))
	ln := nn.NewLayerNorm(cpu, 8)
	ln.Weight = grad.Param(rng.Normal(array.Float32, 1, 0.5, 8))
	for _, c := range []struct {
		name      string
		half, ref func() *grad.Var
	}{
		{"LayerNorm", func() *grad.Var { l := *ln; l.Out = array.BFloat16; return l.Forward(x) },
			func() *grad.Var { return ln.Forward(x).AsType(array.BFloat16) }},
		{"GELU", func() *grad.Var { return nn.GELU{Tanh: true, Out: array.BFloat16}.Forward(x) },
			func() *grad.Var { return nn.GELU{Tanh: true}.Forward(x).AsType(array.BFloat16) }},
		{"LinearHalf", func() *grad.Var { return nn.LinearHalf(x, w, b, array.BFloat16) },
			func() *grad.Var { return nn.LinearMixed(x, w, b, array.BFloat16).AsType(array.BFloat16) }},
	} {
		var got, want [][]float64
		for k, f := range []func() *grad.Var{c.half, c.ref} {
			for _, p := range []*grad.Var{x, w, b, ln.Weight, ln.Bias} {
				p.ZeroGrad()
			}
			y := f()
			if y.DType() != array.BFloat16 {
				t.Fatalf("%s: result %v, want bfloat16", c.name, y.DType())
			}
			// One upstream gradient for both paths.
			r := cpu.NewRNG(11).Normal(array.Float32, 0, 1, y.Shape()...)
			if err := y.AsType(array.Float32).Mul(r).Sum().Backward(); err != nil {
				t.Fatal(err)
			}
			vals := [][]float64{f64(t, y.Value())}
			for _, p := range []*grad.Var{x, w, b, ln.Weight, ln.Bias} {
				if p.Grad() != nil {
					vals = append(vals, f64(t, p.Grad()))
				}
			}
			if k == 0 {
				got = vals
			} else {
				want = vals
			}
		}
		for i := range got {
			near(t, c.name, got[i], want[i], 1e-6)
		}
	}
}

// TestOutDTypeErrors: an Out that is not a float dtype is ErrHyper.
func TestOutDTypeErrors(t *testing.T) {
	x := grad.Param(array.CPU().NewRNG(1).Normal(array.Float32, 0, 1, 2, 4))
	ln := nn.NewLayerNorm(array.CPU(), 4)
	ln.Out = array.Int32
	for name, y := range map[string]*grad.Var{
		"LayerNorm": ln.Forward(x),
		"GELU":      nn.GELU{Out: array.Bool}.Forward(x),
	} {
		if err := y.Err(); !errors.Is(err, nn.ErrHyper) {
			t.Errorf("%s: %v, want ErrHyper", name, err)
		}
	}
}

// TestBiasGELU checks BiasGELU's composed path against GELU of x + b, and
// its error for a bias of the wrong shape.
func TestBiasGELU(t *testing.T) {
	rng := array.CPU().NewRNG(3)
	x := grad.Param(rng.Normal(array.Float32, 0, 1, 3, 5, 7))
	b := grad.Param(rng.Normal(array.Float32, 0, 1, 7))
	r := rng.Normal(array.Float32, 0, 1, 3, 5, 7)
	var got, want [][]float64
	for k, f := range []func() *grad.Var{
		func() *grad.Var { return nn.BiasGELU(x, b, true, 0) },
		func() *grad.Var { return nn.GELU{Tanh: true}.Forward(x.Add(b)) },
	} {
		x.ZeroGrad()
		b.ZeroGrad()
		y := f()
		if err := y.Mul(r).Sum().Backward(); err != nil {
			t.Fatal(err)
		}
		v := [][]float64{f64(t, y.Value()), f64(t, x.Grad()), f64(t, b.Grad())}
		if k == 0 {
			got = v
		} else {
			want = v
		}
	}
	for i := range got {
		near(t, "BiasGELU", got[i], want[i], 1e-6)
	}
	if y := nn.BiasGELU(x, grad.Param(rng.Normal(array.Float32, 0, 1, 5)), false, 0); y.Err() == nil {
		t.Error("a bias of 5 for rows of 7: no error")
	}
	if y := nn.BiasGELU(x, b, false, array.BFloat16); y.DType() != array.BFloat16 {
		t.Errorf("out bfloat16: result %v", y.DType())
	}
}
