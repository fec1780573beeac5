package array

import (
	"math"
	"runtime"
)

// Concat joins arrays along an existing axis (np.concatenate): all must
// have the same rank and the same shape except along axis; the result's
// dtype is their promotion. Pending expressions are evaluated straight into
// the result.
func Concat(axis int, arrs ...*Array) *Array {
	const op = "Concat"
	if len(arrs) == 0 {
		return failed(errorf(op, ErrValue, "need at least one array"))
	}
	for _, a := range arrs {
		if _, err := a.use(op); err != nil {
			return failed(err)
		}
		defer runtime.KeepAlive(a)
	}
	first := arrs[0]
	for _, a := range arrs {
		if a.dt.IsComplex() {
			return complexConcat(axis, arrs)
		}
	}
	r := len(first.shape)
	if r == 0 {
		return failed(errorf(op, ErrShape, "zero-dimensional arrays cannot be concatenated"))
	}
	ax, err := normAxis(op, axis, r)
	if err != nil {
		return failed(err)
	}
	dt := first.dt
	total := 0
	for i, a := range arrs {
		if a.dev != first.dev {
			return failed(errorf(op, ErrDevice, "arrays on different devices (%v and %v)", first.dev, a.dev))
		}
		if len(a.shape) != r {
			return failed(errorf(op, ErrShape, "array %d has shape %s, array 0 has %s: ranks differ", i, shapeString(a.shape), shapeString(first.shape)))
		}
		for d := range a.shape {
			if d != ax && a.shape[d] != first.shape[d] {
				return failed(errorf(op, ErrShape, "array %d has shape %s, array 0 has %s: they differ outside axis %d", i, shapeString(a.shape), shapeString(first.shape), ax))
			}
		}
		dt = Promote(dt, a.dt)
		if total > math.MaxInt-a.shape[ax] {
			return failed(errorf(op, ErrValue, "array is too big: the lengths along axis %d add up to more than an int holds", ax))
		}
		total += a.shape[ax]
	}
	shape := append([]int{}, first.shape...)
	shape[ax] = total
	out := first.dev.Empty(dt, shape...)
	idx := make([]Index, r)
	for d := range idx {
		idx[d] = All
	}
	off := 0
	for _, a := range arrs {
		n := a.shape[ax]
		idx[ax] = S(off, off+n)
		dst := out.Slice(idx...)
		err := dst.Assign(a)
		dst.Close()
		if err != nil {
			out.Close()
			return failed(err)
		}
		off += n
	}
	return out
}

// Stack joins arrays of one shape along a new axis (np.stack).
func Stack(axis int, arrs ...*Array) *Array {
	const op = "Stack"
	if len(arrs) == 0 {
		return failed(errorf(op, ErrValue, "need at least one array"))
	}
	ex := make([]*Array, len(arrs))
	for i, a := range arrs {
		if _, err := a.use(op); err != nil {
			return failed(err)
		}
		if len(a.shape) != len(arrs[0].shape) || !sameShape(a.shape, arrs[0].shape) {
			return failed(errorf(op, ErrShape, "all input arrays must have the same shape: %s and %s", shapeString(arrs[0].shape), shapeString(a.shape)))
		}
		ex[i] = a.ExpandDims(axis)
		if err := ex[i].Err(); err != nil {
			return failed(err)
		}
		defer ex[i].Close()
	}
	return Concat(axis, ex...)
}
