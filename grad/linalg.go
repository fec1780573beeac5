package grad

import (
	"fmt"
	"slices"
	"strings"

	"github.com/gocu-dev/gocu/array"
	"github.com/gocu-dev/gocu/array/linalg"
)

// The gradients of package linalg's functions. Cholesky and Eigh read only
// the lower triangle of their matrix, so their gradients are the exact
// derivatives of that: zero above the diagonal, the sum of the two
// symmetric contributions below it. For a matrix computed symmetric (A =
// X·Xᵀ), the gradient with respect to what made it is the same as with
// PyTorch's symmetric convention.

// Einsum is linalg.Einsum with its gradient: the gradient of each operand
// is the Einsum of the output's gradient with the other operands, spread
// back over the operand's diagonals (repeated labels) and broadcast over
// the labels only it had (summed in the forward pass).
func Einsum(subscripts string, xs ...*Var) *Var {
	vals := make([]*array.Array, len(xs))
	for i, x := range xs {
		if x == nil {
			return record("Einsum", array.Failed(fmt.Errorf("grad: Einsum: operand %d is nil", i)), nil, nil)
		}
		vals[i] = x.arr()
	}
	out := linalg.Einsum(subscripts, vals...)
	explicit, err := linalg.ExplicitEinsum(subscripts, vals...)
	if err != nil {
		return record("Einsum", out, nil, nil)
	}
	lhs, outL, _ := strings.Cut(explicit, "->")
	ins := strings.Split(lhs, ",")
	return record("Einsum", out, xs, func(g *array.Array) []*array.Array {
		gs := make([]*array.Array, len(xs))
		for i, x := range xs {
			if x.req {
				gs[i] = einsumGrad(g, outL, ins, vals, i)
			}
		}
		return gs
	})
}

// einsumGrad is the gradient of operand i.
func einsumGrad(g *array.Array, outL string, ins []string, vals []*array.Array, i int) *array.Array {
	labels := []rune(ins[i])
	shape := vals[i].Shape()
	// The operand's distinct labels, in order of first appearance, and
	// which of them the other terms (output included) know.
	var distinct []rune
	for _, l := range labels {
		if !slices.Contains(distinct, l) {
			distinct = append(distinct, l)
		}
	}
	avail := outL
	terms := []string{outL}
	ops := []*array.Array{g}
	for j, in := range ins {
		if j != i {
			avail += in
			terms = append(terms, in)
			ops = append(ops, vals[j])
		}
	}
	var target []rune
	for _, l := range distinct {
		if strings.ContainsRune(avail, l) {
			target = append(target, l)
		}
	}
	gr := linalg.Einsum(strings.Join(terms, ",")+"->"+string(target), ops...)
	size := func(l rune) int { return shape[slices.Index(labels, l)] }
	// Broadcast over the labels only operand i had.
	full := make([]int, 0, len(distinct))
	for k, l := range distinct {
		if !slices.Contains(target, l) {
			gr = gr.ExpandDims(k)
		}
		full = append(full, size(l))
	}
	gr = gr.BroadcastTo(full...)
	// Spread over the diagonals of repeated labels: a new axis for each
	// repeat, masked by the identity against the label's first axis.
	if len(distinct) == len(labels) {
		return gr
	}
	mk := array.On(g.Device())
	for p, l := range labels {
		q := slices.Index(labels, l)
		if q == p {
			continue
		}
		gr = gr.ExpandDims(p)
		s := make([]int, p+1)
		for k := range s {
			s[k] = 1
		}
		n := size(l)
		s[q], s[p] = n, n
		for len(s) < gr.Ndim() {
			s = append(s, 1)
		}
		gr = gr.Mul(mk.Eye(g.DType(), n).Reshape(s...))
	}
	return gr
}

// Solve is linalg.Solve with its gradient: for x = A⁻¹b, the gradient of
// b is A⁻ᵀg and that of A is -(A⁻ᵀg)·xᵀ.
func Solve(a *Var, b any) *Var {
	o := opnd(b)
	bv, _ := o.x.(*array.Array)
	if bv == nil {
		return record("Solve", array.Failed(fmt.Errorf("grad: Solve: b is %T, not a *Var or *array.Array", b)), nil, nil)
	}
	av := a.arr()
	x := linalg.Solve(av, bv)
	vec := bv.Ndim() == 1
	return record("Solve", x, []*Var{a, o.v}, func(g *array.Array) []*array.Array {
		gc, xc := g, x
		if vec {
			gc, xc = g.ExpandDims(-1), x.ExpandDims(-1)
		}
		gb := linalg.Solve(av.SwapAxes(-1, -2), gc)
		var ga *array.Array
		if a.req {
			ga = gb.MatMul(xc.SwapAxes(-1, -2)).Neg()
		}
		if vec {
			gb = gb.Squeeze(-1)
		}
		if o.v == nil || !o.v.req {
			gb = nil
		}
		return []*array.Array{ga, gb}
	})
}

// Inv is linalg.Inv with its gradient, -A⁻ᵀ·g·A⁻ᵀ.
func Inv(a *Var) *Var {
	y := linalg.Inv(a.arr())
	return record("Inv", y, []*Var{a}, func(g *array.Array) []*array.Array {
		yt := y.SwapAxes(-1, -2)
		return []*array.Array{yt.MatMul(g).MatMul(yt).Neg()}
	})
}

// Slogdet is linalg.Slogdet with the gradient of logabsdet, g·A⁻ᵀ; the
// sign has none.
func Slogdet(a *Var) (sign *array.Array, logabsdet *Var) {
	s, l := linalg.Slogdet(a.arr())
	return s, record("Slogdet", l, []*Var{a}, func(g *array.Array) []*array.Array {
		return []*array.Array{linalg.Inv(a.arr()).SwapAxes(-1, -2).Mul(g.ExpandDims(-1).ExpandDims(-1))}
	})
}

// Cholesky is linalg.Cholesky with its gradient: for A = L·Lᵀ and
// Φ(X) the lower triangle of X with its diagonal halved, the symmetric
// gradient is L⁻ᵀ·Φ(Lᵀ·g)·L⁻¹, folded onto the lower triangle that
// Cholesky reads.
func Cholesky(a *Var) *Var {
	l := linalg.Cholesky(a.arr())
	return record("Cholesky", l, []*Var{a}, func(g *array.Array) []*array.Array {
		n := l.Shape()[l.Ndim()-1]
		mk := array.On(l.Device())
		p := l.SwapAxes(-1, -2).MatMul(g)
		i := mk.Arange(array.Int32, float64(n))
		below, diag := i.ExpandDims(1).Gt(i.ExpandDims(0)), i.ExpandDims(1).Eq(i.ExpandDims(0))
		phi := array.Where(below, p, array.Where(diag, p.Mul(0.5), 0))
		li := linalg.Inv(l)
		s := li.SwapAxes(-1, -2).MatMul(phi).MatMul(li)
		return []*array.Array{lowerGrad(mk, s, n)}
	})
}

// lowerGrad folds a gradient G valid for symmetric perturbations onto the
// lower triangle: G+Gᵀ below the diagonal, G on it, 0 above.
func lowerGrad(mk *array.Maker, s *array.Array, n int) *array.Array {
	i := mk.Arange(array.Int32, float64(n))
	below, diag := i.ExpandDims(1).Gt(i.ExpandDims(0)), i.ExpandDims(1).Eq(i.ExpandDims(0))
	return array.Where(below, s.Add(s.SwapAxes(-1, -2)), array.Where(diag, s, 0))
}

// Eigh is linalg.Eigh with the gradients of both results: for A = V·Λ·Vᵀ,
// V·diag(gw)·Vᵀ from the eigenvalues and V·(F∘(Vᵀ·gV))·Vᵀ from the
// eigenvectors, F[i][j] = 1/(λj - λi) off the diagonal, folded onto the
// lower triangle that Eigh reads.
//
// Degeneracy: where two eigenvalues are equal (or nearly), the
// eigenvectors are not unique and F is infinite (or huge), so the
// eigenvector gradient is Inf/NaN (or dominated by rounding), as in PyTorch
// and JAX. Losses that depend on the eigenvectors only through their
// span or through V·f(Λ)·Vᵀ are safe only with distinct eigenvalues. The
// eigenvalue gradient is always defined. Losses must not depend on the
// eigenvectors' signs, which are arbitrary.
func Eigh(a *Var) (w, v *Var) {
	wa, va := linalg.Eigh(a.arr())
	n := 0
	if s := a.arr().Shape(); len(s) > 0 {
		n = s[len(s)-1]
	}
	w = record("Eigh", wa, []*Var{a}, func(g *array.Array) []*array.Array {
		mk := array.On(va.Device())
		s := va.Mul(g.ExpandDims(-2)).MatMul(va.SwapAxes(-1, -2))
		return []*array.Array{lowerGrad(mk, s, n)}
	})
	v = record("Eigh", va, []*Var{a}, func(g *array.Array) []*array.Array {
		mk := array.On(va.Device())
		d := wa.ExpandDims(-2).Sub(wa.ExpandDims(-1)) // λj - λi
		i := mk.Arange(array.Int32, float64(n))
		f := array.Where(i.ExpandDims(1).Eq(i.ExpandDims(0)), 0, d.Reciprocal())
		inner := va.SwapAxes(-1, -2).MatMul(g).Mul(f)
		s := va.MatMul(inner).MatMul(va.SwapAxes(-1, -2))
		return []*array.Array{lowerGrad(mk, s, n)}
	})
	return w, v
}

// Norm is linalg.Norm with its gradient. The vector orders and the
// Frobenius norm are compositions of differentiable operations (at a max
// or min, the gradient goes to the element ArgMax/ArgMin picks; at x = 0
// the 2-norm's gradient is NaN, as sqrt's); the nuclear norm's gradient is
// U·Vᵀ and the matrix 2-norm's (and -2's) the outer product of the first
// (last) singular vectors. Matrix orders 1, -1, ±Inf use the row or column
// sums' extremes.
func Norm(x *Var, ord linalg.Ord, keepDims bool, axes ...int) *Var {
	val := linalg.Norm(x.arr(), ord, keepDims, axes...)
	if err := val.Err(); err != nil {
		return record("Norm", val, nil, nil)
	}
	nd := x.arr().Ndim()
	if x.arr().DType() != array.Float32 && x.arr().DType() != array.Float64 {
		return record("Norm", val, nil, nil) // integers: no gradient
	}
	axes = slices.Clone(axes)
	for i := range axes {
		if axes[i] < 0 {
			axes[i] += nd
		}
	}
	if len(axes) == 0 {
		switch {
		case ord == linalg.Default:
			all := make([]int, nd)
			for i := range all {
				all[i] = i
			}
			if nd == 0 {
				return x.Abs()
			}
			return x.Square().Reduce(array.OpSum, keepDims, all...).Sqrt()
		case nd == 1:
			axes = []int{0}
		default:
			axes = []int{0, 1}
		}
	}
	if len(axes) == 1 {
		return vectorNorm(x, ord, keepDims, axes[0], val)
	}
	return matrixNorm(x, ord, keepDims, axes[0], axes[1], val)
}

func vectorNorm(x *Var, ord linalg.Ord, keep bool, ax int, val *array.Array) *Var {
	sumAbs := func(p float64) *Var { return x.Abs().Pow(p).Reduce(array.OpSum, keep, ax) }
	switch ord {
	case linalg.Default, linalg.P(2):
		return x.Square().Reduce(array.OpSum, keep, ax).Sqrt()
	case linalg.P(1):
		return x.Abs().Reduce(array.OpSum, keep, ax)
	case linalg.Inf:
		return x.Abs().Reduce(array.OpMax, keep, ax)
	case linalg.NegInf:
		return x.Abs().Reduce(array.OpMin, keep, ax)
	case linalg.P(0):
		return record("Norm", val, nil, nil) // a count: no gradient
	}
	// The general order p (a value not listed above).
	p, _ := ord.Value()
	return sumAbs(p).Pow(1 / p)
}

func matrixNorm(x *Var, ord linalg.Ord, keep bool, r, c int, val *array.Array) *Var {
	squeeze := func(y *Var) *Var {
		if keep {
			return y
		}
		return y.Squeeze(r, c)
	}
	switch ord {
	case linalg.Default, linalg.Fro:
		return squeeze(x.Square().Reduce(array.OpSum, true, r, c).Sqrt())
	case linalg.P(1):
		return squeeze(x.Abs().Reduce(array.OpSum, true, r).Reduce(array.OpMax, true, c))
	case linalg.P(-1):
		return squeeze(x.Abs().Reduce(array.OpSum, true, r).Reduce(array.OpMin, true, c))
	case linalg.Inf:
		return squeeze(x.Abs().Reduce(array.OpSum, true, c).Reduce(array.OpMax, true, r))
	case linalg.NegInf:
		return squeeze(x.Abs().Reduce(array.OpSum, true, c).Reduce(array.OpMin, true, r))
	}
	// Spectral norms: through the SVD of x with (r, c) moved last.
	m := x.arr().MoveAxis(max(r, c), -1).MoveAxis(min(r, c), -2)
	return record("Norm", val, []*Var{x}, func(g *array.Array) []*array.Array {
		u, _, vh := linalg.SVD(m, false)
		var d *array.Array
		switch ord {
		case linalg.Nuc:
			d = u.MatMul(vh)
		case linalg.P(2):
			d = u.Slice(array.Ellipsis, array.S(0, 1)).MatMul(vh.Slice(array.Ellipsis, array.S(0, 1), array.All))
		default: // P(-2)
			d = u.Slice(array.Ellipsis, array.S(-1, array.None)).MatMul(vh.Slice(array.Ellipsis, array.S(-1, array.None), array.All))
		}
		if keep {
			g = g.Squeeze(r, c)
		}
		d = d.Mul(g.ExpandDims(-1).ExpandDims(-1))
		// Undo the axis moves (m's rows are the smaller axis).
		d = d.MoveAxis(-2, min(r, c)).MoveAxis(-1, max(r, c))
		return []*array.Array{d}
	})
}
