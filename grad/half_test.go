package grad_test

import (
	"fmt"
	"math"
	"testing"

	"github.com/gocu-dev/gocu/array"
	"github.com/gocu-dev/gocu/grad"
)

// halfRelErr is ||got - want|| / ||want|| of two arrays, in float64.
func halfRelErr(t *testing.T, got, want *array.Array) float64 {
	t.Helper()
	g, err1 := got.AsType(array.Float64).Float64s()
	w, err2 := want.AsType(array.Float64).Float64s()
	if err1 != nil || err2 != nil {
		t.Fatal(err1, err2)
	}
	var num, den float64
	for i := range w {
		num += (g[i] - w[i]) * (g[i] - w[i])
		den += w[i] * w[i]
	}
	return math.Sqrt(num / den)
}

// Gradients flow through float16 and bfloat16 values: a chain computed
// in the half dtype gives the float32 chain's gradients within the half
// dtype's rounding, both for float32 master weights cast in the forward
// pass and for parameters that are half themselves (whose gradients are
// half, as PyTorch's), on the CPU and on a GPU.
func TestHalfGradients(t *testing.T) {
	for name, d := range devices(t) {
		for _, dt := range []array.DType{array.BFloat16, array.Float16} {
			t.Run(fmt.Sprint(name, " ", dt), func(t *testing.T) {
				rng := d.NewRNG(6)
				x := rng.Normal(array.Float32, 0, 1, 8, 16)
				w0 := rng.Normal(array.Float32, 0, 0.3, 16, 12)
				b0 := rng.Normal(array.Float32, 0, 0.3, 12)
				f := func(x, w, b *grad.Var) *grad.Var {
					h := x.MatMul(w).Add(b).Tanh()
					return h.Softmax(1).Mul(h.Exp()).Sum(1).Square().Mean()
				}
				tol := 3e-2 // bfloat16 keeps 8 bits
				if dt == array.Float16 {
					tol = 5e-3
				}
				// The float32 reference.
				w, b := grad.Param(w0), grad.Param(b0)
				if err := f(grad.Const(x), w, b).Backward(); err != nil {
					t.Fatal(err)
				}
				// Float32 master weights, products in dt.
				mw, mb := grad.Param(w0), grad.Param(b0)
				l := f(grad.Const(x).AsType(dt), mw.AsType(dt), mb.AsType(dt))
				if l.DType() != dt || !l.RequiresGrad() {
					t.Fatalf("loss %v, requires a gradient: %v", l.DType(), l.RequiresGrad())
				}
				if err := l.Backward(); err != nil {
					t.Fatal(err)
				}
				// Parameters of dt.
				hw, hb := grad.Param(w0.AsType(dt)), grad.Param(b0.AsType(dt))
				if err := f(grad.Const(x.AsType(dt)), hw, hb).Backward(); err != nil {
					t.Fatal(err)
				}
				for _, c := range []struct {
					what      string
					got, want *grad.Var
					dt        array.DType
				}{{"master w", mw, w, array.Float32}, {"master b", mb, b, array.Float32}, {"half w", hw, w, dt}, {"half b", hb, b, dt}} {
					g := c.got.Grad()
					if g == nil || g.DType() != c.dt {
						t.Fatalf("%s: gradient %v, want dtype %v", c.what, g, c.dt)
					}
					if e := halfRelErr(t, g, c.want.Grad()); !(e < tol) {
						t.Errorf("%s: relative error %.3g against float32 (tolerance %.3g)", c.what, e, tol)
					} else if e == 0 {
						t.Errorf("%s: identical to float32: the chain did not run in %v", c.what, dt)
					}
				}
			})
		}
	}
}

// The 8-bit floats carry no history: they have no arithmetic of their own.
func TestFloat8NoGradient(t *testing.T) {
	p := grad.Param(array.FromSlice([]float32{1, 2}))
	if q := p.AsType(array.Float8E4M3); q.RequiresGrad() {
		t.Fatal("a float8 value requires a gradient")
	}
}
