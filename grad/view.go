package grad

import (
	"slices"

	"github.com/gocu-dev/gocu/array"
)

// Views share memory with the value they come from, as in package array;
// their gradients are the inverse views, or, for slices, zeros with the
// gradient written into the selected positions.

// Reshape returns the value with a new shape (one dimension may be -1).
func (v *Var) Reshape(shape ...int) *Var {
	old := v.arr().Shape()
	return v.unary("Reshape", v.arr().Reshape(shape...), func(g *array.Array) *array.Array { return g.Reshape(old...) })
}

// Ravel returns the value as 1-D.
func (v *Var) Ravel() *Var { return v.Reshape(-1) }

// Flatten returns a 1-D copy.
func (v *Var) Flatten() *Var {
	old := v.arr().Shape()
	return v.unary("Flatten", v.arr().Flatten(), func(g *array.Array) *array.Array { return g.Reshape(old...) })
}

// Transpose permutes the axes (no axes: reverses them).
func (v *Var) Transpose(axes ...int) *Var {
	r := v.arr().Ndim()
	perm := slices.Clone(axes)
	if len(perm) == 0 {
		for i := range r {
			perm = append(perm, r-1-i)
		}
	}
	inv := make([]int, len(perm))
	for i, p := range perm {
		if p < 0 {
			p += r
		}
		if p >= 0 && p < len(inv) {
			inv[p] = i
		}
	}
	return v.unary("Transpose", v.arr().Transpose(axes...), func(g *array.Array) *array.Array { return g.Transpose(inv...) })
}

// T reverses the axes (the matrix transpose).
func (v *Var) T() *Var { return v.Transpose() }

// SwapAxes exchanges two axes.
func (v *Var) SwapAxes(i, j int) *Var {
	return v.unary("SwapAxes", v.arr().SwapAxes(i, j), func(g *array.Array) *array.Array { return g.SwapAxes(i, j) })
}

// MoveAxis moves axis src to position dst.
func (v *Var) MoveAxis(src, dst int) *Var {
	return v.unary("MoveAxis", v.arr().MoveAxis(src, dst), func(g *array.Array) *array.Array { return g.MoveAxis(dst, src) })
}

// Squeeze removes axes of length 1 (the given ones, or all).
func (v *Var) Squeeze(axes ...int) *Var {
	old := v.arr().Shape()
	return v.unary("Squeeze", v.arr().Squeeze(axes...), func(g *array.Array) *array.Array { return g.Reshape(old...) })
}

// ExpandDims inserts an axis of length 1.
func (v *Var) ExpandDims(axis int) *Var {
	old := v.arr().Shape()
	return v.unary("ExpandDims", v.arr().ExpandDims(axis), func(g *array.Array) *array.Array { return g.Reshape(old...) })
}

// BroadcastTo broadcasts to shape; the gradient is summed back.
func (v *Var) BroadcastTo(shape ...int) *Var {
	return v.unary("BroadcastTo", v.arr().BroadcastTo(shape...), func(g *array.Array) *array.Array { return g })
}

// Contiguous returns a contiguous array with the same values.
func (v *Var) Contiguous() *Var {
	return v.unary("Contiguous", v.arr().Contiguous(), func(g *array.Array) *array.Array { return g })
}

// Copy returns a copy.
func (v *Var) Copy() *Var {
	return v.unary("Copy", v.arr().Copy(), func(g *array.Array) *array.Array { return g })
}

// Slice indexes with NumPy basic indexing (array.Idx, array.S with steps,
// array.All, array.NewAxis, array.Ellipsis; array.Fancy as Fancy does);
// the gradient is zero outside the selected positions.
func (v *Var) Slice(idx ...array.Index) *Var {
	for _, i := range idx {
		if i.IsFancy() {
			return v.Fancy(idx...)
		}
	}
	x := v.arr()
	return recordErr("Slice", x.Slice(idx...), []*Var{v}, func(g *array.Array) ([]*array.Array, error) {
		z := array.On(x.Device()).Zeros(x.DType(), x.Shape()...).Copy()
		dst := z.Slice(idx...)
		err := dst.Assign(g)
		dst.Close()
		if err != nil {
			z.Close()
			return nil, err
		}
		return []*array.Array{z}, nil
	})
}

// At returns the element at a position as a 0-d Var.
func (v *Var) At(pos ...int) *Var {
	idx := make([]array.Index, len(pos))
	for i, p := range pos {
		idx[i] = array.Idx(p)
	}
	if len(pos) != v.arr().Ndim() {
		return record("At", v.arr().At(pos...), nil, nil)
	}
	return v.Slice(idx...)
}

// Concat joins Vars along an existing axis; each gets its slice of the
// gradient.
func Concat(axis int, vs ...*Var) *Var {
	arrs := make([]*array.Array, len(vs))
	for i, x := range vs {
		arrs[i] = x.Value()
	}
	out := array.Concat(axis, arrs...)
	if out.Err() != nil {
		return record("Concat", out, nil, nil)
	}
	r := out.Ndim()
	ax := axis
	if ax < 0 {
		ax += r
	}
	return record("Concat", out, vs, func(g *array.Array) []*array.Array {
		res := make([]*array.Array, len(vs))
		idx := make([]array.Index, r)
		for d := range idx {
			idx[d] = array.All
		}
		off := 0
		for i, a := range arrs {
			n := a.Shape()[ax]
			if vs[i] != nil && vs[i].req {
				idx[ax] = array.S(off, off+n)
				res[i] = g.Slice(idx...)
			}
			off += n
		}
		return res
	})
}

// Stack joins Vars of one shape along a new axis.
func Stack(axis int, vs ...*Var) *Var {
	arrs := make([]*array.Array, len(vs))
	for i, x := range vs {
		arrs[i] = x.Value()
	}
	out := array.Stack(axis, arrs...)
	if out.Err() != nil {
		return record("Stack", out, nil, nil)
	}
	r := out.Ndim()
	ax := axis
	if ax < 0 {
		ax += r
	}
	return record("Stack", out, vs, func(g *array.Array) []*array.Array {
		res := make([]*array.Array, len(vs))
		idx := make([]array.Index, r)
		for d := range idx {
			idx[d] = array.All
		}
		for i := range vs {
			if vs[i] != nil && vs[i].req {
				idx[ax] = array.Idx(i)
				res[i] = g.Slice(idx...)
			}
		}
		return res
	})
}
