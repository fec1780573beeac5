package grad

import (
	"slices"

	"github.com/gocu-dev/gocu/array"
)

// Reductions take axes as package array's (none: all; negative counts from
// the end). Their gradients are broadcast back over the reduced axes.

// Sum adds over the axes.
func (v *Var) Sum(axes ...int) *Var { return v.Reduce(array.OpSum, false, axes...) }

// Mean averages over the axes.
func (v *Var) Mean(axes ...int) *Var { return v.Reduce(array.OpMean, false, axes...) }

// Prod multiplies over the axes.
func (v *Var) Prod(axes ...int) *Var { return v.Reduce(array.OpProd, false, axes...) }

// Max takes the maximum over the axes; the gradient goes to the element
// that ArgMax chooses (the first maximum in row-major order of the reduced
// axes), as torch.max along a dimension.
func (v *Var) Max(axes ...int) *Var { return v.Reduce(array.OpMax, false, axes...) }

// Min takes the minimum over the axes; the gradient goes to the first
// minimum.
func (v *Var) Min(axes ...int) *Var { return v.Reduce(array.OpMin, false, axes...) }

// Reduce applies Sum, Mean, Prod, Max or Min over the axes, keeping them
// as length 1 with keepDims. Other reductions (ArgMax, Any, ...) are not
// differentiable: their results carry no history.
func (v *Var) Reduce(op array.ReduceOp, keepDims bool, axes ...int) *Var {
	out := v.arr().Reduce(op, keepDims, axes...)
	name := "Reduce"
	switch op {
	case array.OpSum, array.OpMean, array.OpProd, array.OpMax, array.OpMin:
	default:
		return record(name, out, nil, nil)
	}
	shape := v.arr().Shape()
	red, keep := reduced(shape, axes)
	return v.unary(reduceName(op), out, func(g *array.Array) *array.Array {
		gk := g.Reshape(keep...) // the gradient with the reduced axes as length 1
		switch op {
		case array.OpSum:
			return gk.BroadcastTo(shape...)
		case array.OpMean:
			n := 1
			for _, ax := range red {
				n *= shape[ax]
			}
			return gk.BroadcastTo(shape...).Mul(1 / float64(max(n, 1)))
		case array.OpProd:
			return prodGrad(v.arr(), gk, out.Reshape(keep...), red)
		}
		return array.Where(choice(v.arr(), op, red), gk, 0)
	})
}

func reduceName(op array.ReduceOp) string {
	switch op {
	case array.OpSum:
		return "Sum"
	case array.OpMean:
		return "Mean"
	case array.OpProd:
		return "Prod"
	case array.OpMax:
		return "Max"
	}
	return "Min"
}

// reduced returns the (sorted, non-negative) reduced axes and the shape
// with them kept as length 1. Invalid axes do not matter: the forward
// array operation has failed then, and nothing reaches the gradient.
func reduced(shape, axes []int) ([]int, []int) {
	r := len(shape)
	var red []int
	if len(axes) == 0 {
		for i := range r {
			red = append(red, i)
		}
	} else {
		for _, a := range axes {
			if a < 0 {
				a += r
			}
			if a >= 0 && a < r && !slices.Contains(red, a) {
				red = append(red, a)
			}
		}
		slices.Sort(red)
	}
	keep := slices.Clone(shape)
	for _, a := range red {
		keep[a] = 1
	}
	return red, keep
}

// prodGrad is the gradient of a product: prod/x where x is not zero; where
// one element of a reduced group is zero it gets the product of the others
// and the rest get zero; with two zeros every element gets zero.
func prodGrad(x, gk, pk *array.Array, red []int) *array.Array {
	zero := x.Eq(0)
	nz := array.Where(zero, 1, x).Reduce(array.OpProd, true, red...) // product of the nonzero elements
	zeros := zero.Reduce(array.OpSum, true, red...)                  // zeros per group
	d := array.Where(zeros.Eq(0), pk.Div(array.Where(zero, 1, x)),
		array.Where(zeros.Eq(1).LogicalAnd(zero), nz, 0))
	return gk.Mul(d)
}

// choice marks, for Max or Min over axes red, the element ArgMax (ArgMin)
// would choose in each group: the reduced axes are moved to the end and
// flattened, so that one ArgMax over the last axis picks the first extreme
// in row-major order of the reduced axes.
func choice(x *array.Array, op array.ReduceOp, red []int) *array.Array {
	shape := x.Shape()
	var kept []int
	for i := range shape {
		if !slices.Contains(red, i) {
			kept = append(kept, i)
		}
	}
	perm := append(slices.Clone(kept), red...)
	ps := make([]int, 0, len(kept)+1)
	n := 1
	for _, a := range kept {
		ps = append(ps, shape[a])
	}
	for _, a := range red {
		n *= shape[a]
	}
	ps = append(ps, n)
	flat := x.Transpose(perm...).Reshape(ps...)
	var idx *array.Array
	if op == array.OpMax {
		idx = flat.ArgMax(-1)
	} else {
		idx = flat.ArgMin(-1)
	}
	pos := array.On(x.Device()).Arange(array.Int64, float64(n))
	mask := idx.ExpandDims(-1).Eq(pos) // (kept..., n)
	pshape := make([]int, 0, len(shape))
	for _, a := range perm {
		pshape = append(pshape, shape[a])
	}
	inv := make([]int, len(perm))
	for i, a := range perm {
		inv[a] = i
	}
	return mask.Reshape(pshape...).Transpose(inv...)
}

// Softmax returns the softmax along the axis.
func (v *Var) Softmax(axis int) *Var {
	out := v.arr().Softmax(axis)
	return v.unary("Softmax", out, func(g *array.Array) *array.Array {
		s := g.Mul(out).Reduce(array.OpSum, true, axis)
		return out.Mul(g.Sub(s))
	})
}

// LogSoftmax returns the log of the softmax along the axis, computed
// stably.
func (v *Var) LogSoftmax(axis int) *Var {
	out := v.arr().LogSoftmax(axis)
	return v.unary("LogSoftmax", out, func(g *array.Array) *array.Array {
		s := g.Reduce(array.OpSum, true, axis)
		return g.Sub(out.Exp().Mul(s))
	})
}

// LogSumExp returns log(sum(exp(v))) along the axis (removed), computed
// stably; its gradient is the softmax.
func (v *Var) LogSumExp(axis int) *Var {
	out := v.arr().LogSumExp(axis)
	return v.unary("LogSumExp", out, func(g *array.Array) *array.Array {
		ax := axis
		if ax < 0 {
			ax += v.arr().Ndim()
		}
		return g.ExpandDims(ax).Mul(v.arr().Sub(out.ExpandDims(ax)).Exp())
	})
}
