package grad

import (
	"github.com/gocu-dev/gocu/array"
)

// Sorting, scans and statistics. The gradient of a sort moves each
// output's gradient back to the position its value came from: a second
// sort, of the sort's positions carrying the gradient (array.SortBy).

// Sort sorts along axis (see array.Sort); the gradient of each sorted
// value goes to the element it came from.
func (v *Var) Sort(axis int) *Var {
	vals, idx := v.val.SortWithIndices(axis)
	return v.unary("Sort", vals, func(g *array.Array) *array.Array {
		defer idx.Close()
		return array.SortBy(idx, g, axis)
	})
}

// TopK returns the k largest (or smallest) values of each row along the
// last axis (see array.TopK) and their positions, which carry no history.
// The gradient of each value goes to the element it came from.
func (v *Var) TopK(k int, largest bool) (*Var, *array.Array) {
	var vals, idx *array.Array
	if largest {
		vals, idx = v.val.SortDescending(-1)
	} else {
		vals, idx = v.val.SortWithIndices(-1)
	}
	if err := v.val.Err(); err != nil {
		return record("TopK", array.Failed(err), nil, nil), array.Failed(err)
	}
	shape := v.val.Shape()
	if len(shape) == 0 || k < 0 || k > shape[len(shape)-1] {
		// array.TopK says what is wrong.
		tv, ti := v.val.TopK(k, largest)
		return record("TopK", tv, nil, nil), ti
	}
	L := shape[len(shape)-1]
	top := vals.Slice(array.Ellipsis, array.S(0, k)).Copy()
	vals.Close()
	pos := idx.Slice(array.Ellipsis, array.S(0, k)).Copy()
	out := v.unary("TopK", top, func(g *array.Array) *array.Array {
		defer idx.Close()
		pad := append(append([]int(nil), shape[:len(shape)-1]...), L-k)
		z := array.On(g.Device()).Zeros(g.DType(), pad...)
		full := array.Concat(-1, g, z)
		z.Close()
		defer full.Close()
		return array.SortBy(idx, full, -1)
	})
	return out, pos
}

// flip reverses a along axis (a view).
func flip(a *array.Array, axis int) *array.Array {
	n := a.Ndim()
	ax := (axis%n + n) % n
	idx := make([]array.Index, ax+1)
	for i := range ax {
		idx[i] = array.All
	}
	idx[ax] = array.S(array.None, array.None, -1)
	return a.Slice(idx...)
}

// revCumsum is the running sum from the end of axis.
func revCumsum(g *array.Array, axis int) *array.Array {
	f := flip(g, axis)
	c := f.Cumsum(axis)
	f.Close()
	r := flip(c, axis)
	c.Close()
	return r
}

// Cumsum is the running sum along axis; its gradient is the running sum
// of the gradient from the end.
func (v *Var) Cumsum(axis int) *Var {
	return v.unary("Cumsum", v.val.Cumsum(axis), func(g *array.Array) *array.Array {
		return revCumsum(g, axis)
	})
}

// Cumprod is the running product along axis. Its gradient is exact with
// zeros too: before the first zero of a line it is the running sum from
// the end of g·y over x; at the first zero, the same sum with that zero
// taken as one; after it, zero.
func (v *Var) Cumprod(axis int) *Var {
	x := v.val
	y := x.Cumprod(axis)
	return v.unary("Cumprod", y, func(g *array.Array) *array.Array {
		zero := x.Eq(0)
		seen := zero.Cumsum(axis)
		first := zero.LogicalAnd(seen.Eq(1))
		before := seen.Eq(0)
		safe := array.Where(zero, 1, x)
		a := revCumsum(g.Mul(y), axis).Div(safe)
		y1 := array.Where(first, 1, x).Cumprod(axis)
		b := revCumsum(g.Mul(y1), axis)
		return array.Where(before, a, array.Where(first, b, 0))
	})
}

// Var is the variance over the axes (all if none) with ddof (see
// array.Var), recorded as the operations that compute it.
func (v *Var) Var(ddof int, axes ...int) *Var {
	n := 1
	shape := v.val.Shape()
	red, _ := reduced(shape, axes)
	for _, ax := range red {
		n *= shape[ax]
	}
	x := v
	if dt := v.val.DType(); dt != array.Float32 && dt != array.Float64 {
		x = v.AsType(array.Float64)
	}
	d := x.Sub(x.Reduce(array.OpMean, true, axes...))
	return d.Mul(d).Sum(axes...).Div(float64(max(n-ddof, 0)))
}

// Std is the square root of Var.
func (v *Var) Std(ddof int, axes ...int) *Var { return v.Var(ddof, axes...).Sqrt() }
