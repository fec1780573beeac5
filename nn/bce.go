package nn

import (
	"fmt"
	"math"
	"slices"

	"github.com/gocu-dev/gocu"
	"github.com/gocu-dev/gocu/array"
	"github.com/gocu-dev/gocu/grad"
)

// BCEOptions are the keyword arguments of PyTorch's F.binary_cross_entropy
// and F.binary_cross_entropy_with_logits. The zero value is torch's
// default.
type BCEOptions struct {
	// Weight, when not nil, multiplies each element's term: a float array
	// that broadcasts to the input's shape, without gradient. The mean
	// still divides by the number of elements, as torch's.
	Weight *array.Array

	// PosWeight, when not nil, weights the positive term of each class:
	// a float array that broadcasts to the input's shape (torch's
	// pos_weight, one value per class of the last axis). BCEWithLogits
	// only: BCE refuses it.
	PosWeight *array.Array

	Reduction Reduction
}

// BCE is the binary cross-entropy of probabilities p against targets of
// p's shape, as PyTorch's F.binary_cross_entropy: -w·(y·log p +
// (1-y)·log(1-p)), each log clamped at -100 as torch clamps it, reduced
// as o says (nil: the mean). It is one recorded operation whose gradient
// is torch's, w·(p-y)/max(p·(1-p), 1e-12), one fused pass. Prefer
// BCEWithLogits on logits: it is exact where p rounds to 0 or 1.
//
// A probability outside [0, 1] is an error. On the CPU and the simulator
// the loss fails at once; on a GPU, where checking would make the host
// wait, the element's term and gradient are NaN instead.
func BCE(p *grad.Var, target *array.Array, o *BCEOptions) *grad.Var {
	return bce(p, target, o, p.Value().Device().Kind() != gocu.CUDA)
}

// bce is BCE; check says whether to read p on the host and fail on a
// value outside [0, 1], or to poison its term.
func bce(p *grad.Var, target *array.Array, o *BCEOptions, check bool) *grad.Var {
	if o == nil {
		o = &BCEOptions{}
	}
	if o.PosWeight != nil {
		return badInput("BCE", "PosWeight is BCEWithLogits's: BCE takes none")
	}
	w, y, fail := binaryArgs("BCE", p, target, o)
	if fail != nil {
		return fail
	}
	pv := p.Value()
	if check {
		out := pv.Ge(0).LogicalAnd(pv.Le(1)).LogicalNot().Ravel() // NaN too
		at, err := out.ArgMax().Item()
		if err == nil && pv.Size() > 0 {
			var bad float64
			if bad, err = out.At(int(at)).Item(); err == nil && bad != 0 {
				v, _ := pv.Ravel().At(int(at)).Item()
				return badInput("BCE", fmt.Sprintf("probability %v at flat index %d is outside [0, 1]", v, int(at)))
			}
		}
		if err != nil {
			return grad.Const(array.Failed(fmt.Errorf("nn: BCE: %w", err)))
		}
	}
	poison := func(a *array.Array) *array.Array {
		if check {
			return a
		}
		return array.Where(pv.Ge(0).LogicalAnd(pv.Le(1)), a, math.NaN())
	}
	terms := func() *array.Array {
		lp := pv.Log().Maximum(-100)
		lq := pv.Neg().Log1p().Maximum(-100)
		t := y.Mul(lp).Add(y.Neg().Add(1).Mul(lq)).Neg()
		if w != nil {
			t = t.Mul(w)
		}
		return poison(t)
	}
	dp := func() *array.Array {
		d := pv.Sub(y).Div(pv.Neg().Add(1).Mul(pv).Maximum(1e-12))
		if w != nil {
			d = d.Mul(w)
		}
		return poison(d)
	}
	return binaryLoss("BCE", p, terms, dp, o.Reduction)
}

// BCEWithLogits is BCE of sigmoid(x), as PyTorch's
// F.binary_cross_entropy_with_logits, computed stably for any logits:
// w·((1-y)·x + l·softplus(-x)), l = 1 + (PosWeight-1)·y, with softplus(-x)
// = log1p(exp(-|x|)) + max(-x, 0). It is one recorded operation whose
// gradient, w·(l·sigmoid(x) - PosWeight·y), is one fused pass.
func BCEWithLogits(x *grad.Var, target *array.Array, o *BCEOptions) *grad.Var {
	if o == nil {
		o = &BCEOptions{}
	}
	w, y, fail := binaryArgs("BCEWithLogits", x, target, o)
	if fail != nil {
		return fail
	}
	xv := x.Value()
	var pw *array.Array
	if o.PosWeight != nil {
		var err *grad.Var
		if pw, err = broadcastable("BCEWithLogits", "PosWeight", o.PosWeight, xv); err != nil {
			return err
		}
	}
	// l is the positive term's weight.
	l := func() *array.Array { return pw.Sub(1).Mul(y).Add(1) }
	terms := func() *array.Array {
		sp := xv.Abs().Neg().Exp().Log1p().Add(xv.Neg().Maximum(0))
		if pw != nil {
			sp = sp.Mul(l())
		}
		t := y.Neg().Add(1).Mul(xv).Add(sp)
		if w != nil {
			t = t.Mul(w)
		}
		return t
	}
	dx := func() *array.Array {
		s := xv.Sigmoid()
		var d *array.Array
		if pw != nil {
			d = s.Mul(l()).Sub(pw.Mul(y))
		} else {
			d = s.Sub(y)
		}
		if w != nil {
			d = d.Mul(w)
		}
		return d
	}
	return binaryLoss("BCEWithLogits", x, terms, dx, o.Reduction)
}

// binaryArgs checks the input, the target and the weight of BCE and
// BCEWithLogits, and returns the weight and the target in x's dtype, or
// a failed Var.
func binaryArgs(name string, x *grad.Var, target *array.Array, o *BCEOptions) (w, y *array.Array, fail *grad.Var) {
	if !x.DType().Valid() {
		return nil, nil, x
	}
	if !target.DType().Valid() {
		return nil, nil, grad.Const(target)
	}
	if o.Reduction > ReduceNone {
		return nil, nil, badHyper(name, "reduction %v: want ReduceMean, ReduceSum or ReduceNone", o.Reduction)
	}
	if !x.DType().IsFloat() {
		return nil, nil, badInput(name, fmt.Sprintf("input of dtype %v, want floats", x.DType()))
	}
	if !slices.Equal(target.Shape(), x.Shape()) {
		return nil, nil, badInput(name, fmt.Sprintf("target of shape %v for input of shape %v: want the same shape", target.Shape(), x.Shape()))
	}
	y = target.AsType(x.DType())
	if o.Weight != nil {
		if w, fail = broadcastable(name, "Weight", o.Weight, x.Value()); fail != nil {
			return nil, nil, fail
		}
	}
	return w, y, nil
}

// broadcastable returns a, a float array that broadcasts to x's shape, in
// x's dtype.
func broadcastable(name, what string, a, x *array.Array) (*array.Array, *grad.Var) {
	if !a.DType().Valid() {
		return nil, grad.Const(a)
	}
	as, xs := a.Shape(), x.Shape()
	ok := a.DType().IsFloat() && len(as) <= len(xs)
	for i := 1; ok && i <= len(as); i++ {
		d := as[len(as)-i]
		ok = d == 1 || d == xs[len(xs)-i]
	}
	if !ok {
		return nil, badInput(name, fmt.Sprintf("%s of shape %v and dtype %v: want floats that broadcast to the input's shape %v", what, as, a.DType(), xs))
	}
	return a.AsType(x.DType()), nil
}

// binaryLoss reduces elementwise terms and records the gradient d, both
// lazy expressions built where they are used.
func binaryLoss(name string, x *grad.Var, terms, d func() *array.Array, r Reduction) *grad.Var {
	inv := 1 / float64(x.Size()) // +Inf for no elements: a NaN mean, as torch's
	var loss *array.Array
	switch r {
	case ReduceNone:
		loss = terms()
	case ReduceSum:
		loss = terms().Sum()
	default:
		loss = terms().Sum().Mul(inv)
	}
	return grad.Func(name, loss, []*grad.Var{x}, func(g *array.Array) []*array.Array {
		if r == ReduceMean {
			g = g.Mul(inv)
		}
		return []*array.Array{d().Mul(g)}
	})
}
