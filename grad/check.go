package grad

import (
	"errors"
	"fmt"
	"math"

	"github.com/gocu-dev/gocu/array"
)

// Check compares the gradients of f at xs with central finite differences,
// as torch.autograd.gradcheck: it differentiates L = sum(f(xs)·w) for a
// fixed random w of f's shape (so that every entry of the Jacobian counts)
// and, for each element of each input, compares ∂L/∂x with
// (L(x+h) - L(x-h))/2h, h = 1e-6·max(1, |x|). The inputs should be
// float64 (float32 differences are too coarse for a useful tolerance). An
// element fails when |analytic - numeric| > tol·max(1, |numeric|); the
// error names the worst one.
func Check(f func(xs ...*Var) *Var, xs []*array.Array, tol float64) error {
	if f == nil {
		return errors.New("grad: Check: nil function")
	}
	if len(xs) == 0 {
		return fmt.Errorf("grad: Check: no inputs")
	}
	for i, x := range xs {
		if err := x.Err(); err != nil {
			return fmt.Errorf("grad: Check: input %d: %w", i, err)
		}
	}
	dev := array.On(xs[0].Device())
	vals := make([][]float64, len(xs))
	shapes := make([][]int, len(xs))
	for i, x := range xs {
		v, err := x.AsType(array.Float64).Float64s()
		if err != nil {
			return fmt.Errorf("grad: Check: input %d: %w", i, err)
		}
		vals[i], shapes[i] = v, x.Shape()
	}
	mk := func(i int, v []float64) *array.Array {
		return array.FromSliceOn(dev.Device(), v, shapes[i]...).AsType(xs[i].DType())
	}
	ps := make([]*Var, len(xs))
	for i := range xs {
		ps[i] = Param(mk(i, vals[i]))
	}
	y := f(ps...)
	if y == nil {
		return fmt.Errorf("grad: Check: f returned a nil *Var: %w", ErrNilVar)
	}
	if err := y.Err(); err != nil {
		return fmt.Errorf("grad: Check: f: %w", err)
	}
	w := dev.NewRNG(12345).Normal(y.DType(), 0, 1, y.Shape()...)
	loss := func(y *Var) (float64, error) { return y.Value().Mul(w).Sum().AsType(array.Float64).Item() }
	gs, err := Of(y.Mul(w).Sum(), ps...)
	if err != nil {
		return fmt.Errorf("grad: Check: %w", err)
	}
	worst, where := 0.0, ""
	for i := range xs {
		ana, err := gs[i].AsType(array.Float64).Float64s()
		if err != nil {
			return fmt.Errorf("grad: Check: gradient of input %d: %w", i, err)
		}
		for j, x0 := range vals[i] {
			h := 1e-6 * math.Max(1, math.Abs(x0))
			var l [2]float64
			for s, d := range [2]float64{h, -h} {
				v := append([]float64(nil), vals[i]...)
				v[j] = x0 + d
				in := make([]*Var, len(xs))
				for k := range xs {
					in[k] = Const(mk(k, vals[k]))
				}
				in[i] = Const(mk(i, v))
				var y *Var
				NoGrad(func() { y = f(in...) })
				if l[s], err = loss(y); err != nil {
					return fmt.Errorf("grad: Check: f: %w", err)
				}
			}
			num := (l[0] - l[1]) / (2 * h)
			diff := math.Abs(ana[j]-num) / math.Max(1, math.Abs(num))
			if math.IsNaN(diff) || diff > worst {
				worst = diff
				where = fmt.Sprintf("input %d element %d (of shape %v): analytic %.10g, numeric %.10g", i, j, shapes[i], ana[j], num)
				if math.IsNaN(diff) {
					worst = math.Inf(1)
				}
			}
		}
	}
	if worst > tol {
		return fmt.Errorf("grad: Check: gradient differs by %.3g (tolerance %.3g) at %s", worst, tol, where)
	}
	return nil
}
