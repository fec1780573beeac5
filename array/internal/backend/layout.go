package backend

// Layout maps a multi-index to an element of a buffer:
// element(i) = Offset + sum(i[d] * Strides[d]). Strides and Offset count
// elements, not bytes. A stride may be zero (broadcast) or negative
// (reversed view).
type Layout struct {
	Shape   []int
	Strides []int
	Offset  int
}

// Size is the number of elements of a shape (1 for rank 0).
func Size(shape []int) int {
	n := 1
	for _, d := range shape {
		n *= d
	}
	return n
}

// ContiguousStrides returns the row-major (C order) strides of shape.
func ContiguousStrides(shape []int) []int {
	s := make([]int, len(shape))
	st := 1
	for i := len(shape) - 1; i >= 0; i-- {
		s[i] = st
		st *= shape[i]
	}
	return s
}

// Contiguous returns the C-order layout of shape at offset 0.
func Contiguous(shape []int) Layout {
	return Layout{Shape: append([]int(nil), shape...), Strides: ContiguousStrides(shape)}
}

// Size is the number of elements the layout addresses.
func (l Layout) Size() int { return Size(l.Shape) }

// IsContiguous reports whether the layout is C-contiguous: element i of the
// row-major order lies at Offset+i. Strides of size-1 dimensions are ignored.
func (l Layout) IsContiguous() bool {
	st := 1
	for i := len(l.Shape) - 1; i >= 0; i-- {
		if l.Shape[i] == 0 {
			return true
		}
		if l.Shape[i] != 1 && l.Strides[i] != st {
			return false
		}
		st *= l.Shape[i]
	}
	return true
}

// IsConstant reports whether every element maps to the same buffer element
// (all strides of dimensions longer than one are zero).
func (l Layout) IsConstant() bool {
	for i, d := range l.Shape {
		if d > 1 && l.Strides[i] != 0 {
			return false
		}
	}
	return true
}

// Extent returns the lowest and one past the highest element index the
// layout touches; for an empty layout lo == hi == Offset.
func (l Layout) Extent() (lo, hi int) {
	lo, hi = l.Offset, l.Offset+1
	for i, d := range l.Shape {
		if d == 0 {
			return l.Offset, l.Offset
		}
		s := l.Strides[i] * (d - 1)
		if s < 0 {
			lo += s
		} else {
			hi += s
		}
	}
	return lo, hi
}

// Clone returns a deep copy.
func (l Layout) Clone() Layout {
	return Layout{Shape: append([]int(nil), l.Shape...), Strides: append([]int(nil), l.Strides...), Offset: l.Offset}
}

// BroadcastTo returns the layout viewed with the (broadcast-compatible)
// shape: leading dimensions are added with stride 0 and size-1 dimensions
// get stride 0. The caller has checked compatibility.
func (l Layout) BroadcastTo(shape []int) Layout {
	r := len(shape)
	out := Layout{Shape: append([]int(nil), shape...), Strides: make([]int, r), Offset: l.Offset}
	k := r - len(l.Shape)
	for i := range l.Shape {
		if l.Shape[i] != 1 || shape[k+i] == 1 {
			out.Strides[k+i] = l.Strides[i]
		}
	}
	return out
}

// Permute returns the layout with its dimensions reordered: new dimension i
// is old dimension perm[i].
func (l Layout) Permute(perm []int) Layout {
	out := Layout{Shape: make([]int, len(perm)), Strides: make([]int, len(perm)), Offset: l.Offset}
	for i, p := range perm {
		out.Shape[i] = l.Shape[p]
		out.Strides[i] = l.Strides[p]
	}
	return out
}

// Collapse merges adjacent dimensions that are contiguous with each other in
// every layout (all sharing one shape), dropping size-1 dimensions, so that
// kernels see the lowest rank that addresses the same elements. A shape with
// a zero dimension collapses to rank-1 layouts of size 0; a shape of one
// element collapses to rank 0.
func Collapse(ls []Layout) []Layout {
	if len(ls) == 0 {
		return nil
	}
	shape := ls[0].Shape
	if Size(shape) == 0 {
		out := make([]Layout, len(ls))
		for i, l := range ls {
			out[i] = Layout{Shape: []int{0}, Strides: []int{1}, Offset: l.Offset}
		}
		return out
	}
	type dim struct {
		n  int
		st []int
	}
	var dims []dim
	for d := 0; d < len(shape); d++ {
		if shape[d] == 1 {
			continue
		}
		st := make([]int, len(ls))
		for i, l := range ls {
			st[i] = l.Strides[d]
		}
		if len(dims) > 0 {
			prev := &dims[len(dims)-1]
			ok := true
			for i := range ls {
				if prev.st[i] != st[i]*shape[d] {
					ok = false
					break
				}
			}
			if ok {
				prev.n *= shape[d]
				copy(prev.st, st)
				continue
			}
		}
		dims = append(dims, dim{shape[d], st})
	}
	out := make([]Layout, len(ls))
	for i, l := range ls {
		o := Layout{Shape: make([]int, len(dims)), Strides: make([]int, len(dims)), Offset: l.Offset}
		for j, dm := range dims {
			o.Shape[j] = dm.n
			o.Strides[j] = dm.st[i]
		}
		out[i] = o
	}
	return out
}
