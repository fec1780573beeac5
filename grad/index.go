package grad

import "github.com/gocu-dev/gocu/array"

// Gathers by index arrays: each gradient is a scatter-add of the output
// gradient into zeros of the input's shape (duplicate indices add up).

// zerosLike returns zeros of x's dtype and shape, materialised.
func zerosLike(x *array.Array) *array.Array {
	return array.ZerosLike(x).Eval()
}

// Take selects along axis by integer indices (array.Take).
func (v *Var) Take(indices *array.Array, axis int) *Var {
	x := v.val
	return recordErr("Take", x.Take(indices, axis), []*Var{v}, func(g *array.Array) ([]*array.Array, error) {
		ax := axis
		if ax < 0 {
			ax += x.Ndim()
		}
		// g has x's shape with axis replaced by the indices' shape:
		// flatten those axes to one for IndexAdd.
		shape := append(append(append([]int{}, x.Shape()[:ax]...), indices.Size()), x.Shape()[ax+1:]...)
		flat := indices.Reshape(-1)
		defer flat.Close()
		gr := g.Reshape(shape...)
		defer gr.Close()
		z := zerosLike(x)
		defer z.Close()
		out := z.IndexAdd(ax, flat, gr)
		return []*array.Array{out}, out.Err()
	})
}

// IndexSelect selects along axis by 1-D indices (torch.index_select).
func (v *Var) IndexSelect(axis int, indices *array.Array) *Var {
	if indices != nil && indices.Ndim() != 1 {
		return record("IndexSelect", v.val.IndexSelect(axis, indices), nil, nil)
	}
	return v.Take(indices, axis)
}

// TakeAlongAxis picks along axis at indices (array.TakeAlongAxis).
func (v *Var) TakeAlongAxis(indices *array.Array, axis int) *Var {
	x := v.val
	out := x.TakeAlongAxis(indices, axis)
	return recordErr("TakeAlongAxis", out, []*Var{v}, func(g *array.Array) ([]*array.Array, error) {
		// x may have been broadcast against the indices: scatter into
		// zeros of the broadcast shape (the engine sums it back).
		shape := g.Shape()
		ax := axis
		if ax < 0 {
			ax += len(shape)
		}
		shape[ax] = x.Shape()[ax]
		z := array.On(x.Device()).Zeros(x.DType(), shape...)
		defer z.Close()
		idx := indices.BroadcastTo(g.Shape()...)
		defer idx.Close()
		r := z.ScatterAdd(ax, idx, g)
		return []*array.Array{r}, r.Err()
	})
}

// positions returns x's flat positions selected by f (a gather of an
// index array shaped like x).
func positions(x *array.Array, f func(p *array.Array) *array.Array) *array.Array {
	n := x.Size()
	p := array.On(x.Device()).Arange(array.Int64, float64(n))
	defer p.Close()
	ps := p.Reshape(x.Shape()...)
	defer ps.Close()
	return f(ps)
}

// scatterPositions adds g at x's flat positions pos into zeros of x's shape.
func scatterPositions(x, pos, g *array.Array) ([]*array.Array, error) {
	flat := pos.Reshape(-1)
	defer flat.Close()
	gf := g.Reshape(-1)
	defer gf.Close()
	z := array.On(x.Device()).Zeros(x.DType(), x.Size())
	defer z.Close()
	s := z.IndexAdd(0, flat, gf)
	defer s.Close()
	r := s.Reshape(x.Shape()...)
	return []*array.Array{r}, r.Err()
}

// Fancy is Slice with integer or boolean array indices (array.Fancy) as
// well as basic ones; the gradient adds into the selected positions.
func (v *Var) Fancy(idx ...array.Index) *Var {
	x := v.val
	return recordErr("Fancy", x.Slice(idx...), []*Var{v}, func(g *array.Array) ([]*array.Array, error) {
		pos := positions(x, func(p *array.Array) *array.Array { return p.Slice(idx...) })
		defer pos.Close()
		return scatterPositions(x, pos, g)
	})
}

// Mask selects where mask is true (array.Mask).
func (v *Var) Mask(mask *array.Array) *Var {
	x := v.val
	return recordErr("Mask", x.Mask(mask), []*Var{v}, func(g *array.Array) ([]*array.Array, error) {
		pos := positions(x, func(p *array.Array) *array.Array { return p.Mask(mask) })
		defer pos.Close()
		return scatterPositions(x, pos, g)
	})
}

// IndexAdd adds src's slices at the 1-D indices along axis
// (array.IndexAdd); src's gradient gathers the output gradient back.
func (v *Var) IndexAdd(axis int, indices *array.Array, src *Var) *Var {
	var sv *array.Array
	if src != nil {
		sv = src.val
	}
	return record("IndexAdd", v.val.IndexAdd(axis, indices, sv), []*Var{v, src}, func(g *array.Array) []*array.Array {
		return []*array.Array{g, g.Take(indices, axis)}
	})
}

// ScatterAdd adds src at index along axis (array.ScatterAdd); src has
// index's shape here, and its gradient gathers the output gradient.
func (v *Var) ScatterAdd(axis int, index *array.Array, src *Var) *Var {
	var sv *array.Array
	if src != nil {
		sv = src.val
		if !sameInts(sv.Shape(), index.Shape()) {
			return record("ScatterAdd", array.Failed(&array.Error{Op: "ScatterAdd", Kind: array.ErrShape,
				Msg: "src must have index's shape to be differentiated"}), nil, nil)
		}
	}
	return record("ScatterAdd", v.val.ScatterAdd(axis, index, sv), []*Var{v, src}, func(g *array.Array) []*array.Array {
		return []*array.Array{g, g.TakeAlongAxis(index, axis)}
	})
}

func sameInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
