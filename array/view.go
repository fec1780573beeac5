package array

import (
	"github.com/gocu-dev/gocu"
	"runtime"
	"slices"

	"github.com/gocu-dev/gocu/array/internal/backend"
)

// Views share memory with the array they come from (a pending expression
// is evaluated first). Writing through Assign into one is seen by all.

// layoutOp evaluates a and returns a view with the layout f computes.
func (a *Array) layoutOp(op string, f func(l backend.Layout) (backend.Layout, error)) *Array {
	defer runtime.KeepAlive(a)
	s, err := a.force(op)
	if err != nil {
		return failed(err)
	}
	l, err := f(s.lay)
	if err != nil {
		return failed(err)
	}
	return a.dev.view(s.st, l, a.dt)
}

// Reshape returns the array with a new shape of the same size; one
// dimension may be -1 (inferred). It is a view when the strides allow it
// (always for a contiguous array) and a copy otherwise, as NumPy.
func (a *Array) Reshape(shape ...int) *Array {
	const op = "Reshape"
	defer runtime.KeepAlive(a)
	s, err := a.force(op)
	if err != nil {
		return failed(err)
	}
	newShape, err := inferShape(op, backend.Size(a.shape), a.shape, shape)
	if err != nil {
		return failed(err)
	}
	if st, ok := reshapeStrides(s.lay, newShape); ok {
		return a.dev.view(s.st, backend.Layout{Shape: newShape, Strides: st, Offset: s.lay.Offset}, a.dt)
	}
	c := a.Copy()
	defer c.Close()
	return c.Reshape(newShape...)
}

func inferShape(op string, size int, old, shape []int) ([]int, error) {
	out := append([]int(nil), shape...)
	neg := -1
	for i, d := range out {
		switch {
		case d == -1 && neg < 0:
			neg = i
		case d < 0:
			return nil, errorf(op, ErrValue, "bad dimension %d in shape %s", d, shapeString(shape))
		}
	}
	known, ok := sizeOf(slices.Delete(slices.Clone(out), max(neg, 0), max(neg+1, 0)))
	if !ok {
		return nil, valueToo(errorf(op, ErrShape, "cannot reshape array of size %d into shape %s: its size overflows an int", size, shapeString(shape)))
	}
	if neg >= 0 {
		if known == 0 || size%known != 0 {
			return nil, errorf(op, ErrShape, "cannot reshape array of size %d into shape %s", size, shapeString(shape))
		}
		out[neg] = size / known
	}
	if n, ok := sizeOf(out); !ok || n != size {
		return nil, errorf(op, ErrShape, "cannot reshape array of size %d into shape %s", size, shapeString(shape))
	}
	return out, nil
}

// reshapeStrides finds strides that view l with the new shape without
// copying, if they exist (NumPy's _attempt_nocopy_reshape).
func reshapeStrides(l backend.Layout, shape []int) ([]int, bool) {
	if backend.Size(shape) == 0 || l.IsContiguous() {
		st := backend.ContiguousStrides(shape)
		return st, true
	}
	var od, os []int
	for i, d := range l.Shape {
		if d != 1 {
			od = append(od, d)
			os = append(os, l.Strides[i])
		}
	}
	ns := make([]int, len(shape))
	oi, oj, ni, nj := 0, 1, 0, 1
	for ni < len(shape) && oi < len(od) {
		np, op := shape[ni], od[oi]
		for np != op {
			if np < op {
				np *= shape[nj]
				nj++
			} else {
				op *= od[oj]
				oj++
			}
		}
		for k := oi; k < oj-1; k++ {
			if os[k] != od[k+1]*os[k+1] {
				return nil, false
			}
		}
		ns[nj-1] = os[oj-1]
		for k := nj - 1; k > ni; k-- {
			ns[k-1] = ns[k] * shape[k]
		}
		ni, nj = nj, nj+1
		oi, oj = oj, oj+1
	}
	last := 1
	if ni > 0 {
		last = ns[ni-1]
	}
	for k := ni; k < len(shape); k++ {
		ns[k] = last
	}
	return ns, true
}

// Transpose permutes the axes: new axis i is old axis axes[i]; with no
// arguments it reverses them (the matrix transpose for 2-D).
func (a *Array) Transpose(axes ...int) *Array {
	const op = "Transpose"
	return a.layoutOp(op, func(l backend.Layout) (backend.Layout, error) {
		r := len(l.Shape)
		perm := axes
		if len(perm) == 0 {
			perm = make([]int, r)
			for i := range perm {
				perm[i] = r - 1 - i
			}
		}
		if len(perm) != r {
			return l, errorf(op, ErrAxis, "axes %v don't match an array of dimension %d", axes, r)
		}
		seen := make([]bool, r)
		norm := make([]int, r)
		for i, p := range perm {
			q, err := normAxis(op, p, r)
			if err != nil {
				return l, err
			}
			if seen[q] {
				return l, errorf(op, ErrAxis, "repeated axis %d in %v", p, perm)
			}
			seen[q] = true
			norm[i] = q
		}
		return l.Permute(norm), nil
	})
}

// T reverses the axes (the matrix transpose).
func (a *Array) T() *Array { return a.Transpose() }

// SwapAxes exchanges two axes.
func (a *Array) SwapAxes(i, j int) *Array {
	const op = "SwapAxes"
	return a.layoutOp(op, func(l backend.Layout) (backend.Layout, error) {
		r := len(l.Shape)
		x, err := normAxis(op, i, r)
		if err != nil {
			return l, err
		}
		y, err := normAxis(op, j, r)
		if err != nil {
			return l, err
		}
		perm := make([]int, r)
		for k := range perm {
			perm[k] = k
		}
		perm[x], perm[y] = y, x
		return l.Permute(perm), nil
	})
}

// MoveAxis moves axis src to position dst, keeping the others in order.
func (a *Array) MoveAxis(src, dst int) *Array {
	const op = "MoveAxis"
	return a.layoutOp(op, func(l backend.Layout) (backend.Layout, error) {
		r := len(l.Shape)
		s, err := normAxis(op, src, r)
		if err != nil {
			return l, err
		}
		d, err := normAxis(op, dst, r)
		if err != nil {
			return l, err
		}
		var perm []int
		for k := 0; k < r; k++ {
			if k != s {
				perm = append(perm, k)
			}
		}
		perm = append(perm[:d], append([]int{s}, perm[d:]...)...)
		return l.Permute(perm), nil
	})
}

// Slice indexes the array with NumPy basic indexing: one Index per axis
// (missing trailing ones mean All), e.g.
//
//	x.Slice(array.S(0, 10, 2), array.All, array.Idx(3))   // x[0:10:2, :, 3]
//	x.Slice(array.S(array.None, array.None, -1))          // x[::-1]
//
// The result is a view, except with a Fancy (integer or boolean array)
// index, which gathers into a new array (NumPy's advanced indexing).
func (a *Array) Slice(idx ...Index) *Array {
	const op = "Slice"
	for _, x := range idx {
		if x.kind == idxArray {
			return a.fancySlice(idx)
		}
	}
	return a.layoutOp(op, func(l backend.Layout) (backend.Layout, error) {
		r := len(l.Shape)
		used, ell := 0, -1
		for k, x := range idx {
			switch x.kind {
			case idxInvalid:
				return l, errorf(op, ErrValue, "%s", x.bad)
			case idxInt, idxSlice:
				used++
			case idxEllipsis:
				if ell >= 0 {
					return l, errorf(op, ErrIndex, "an index can only have a single Ellipsis")
				}
				ell = k
			}
		}
		if used > r {
			return l, errorf(op, ErrIndex, "too many indices for array: array is %d-dimensional, but %d were indexed", r, used)
		}
		var full []Index
		for _, x := range idx {
			if x.kind == idxEllipsis {
				for k := 0; k < r-used; k++ {
					full = append(full, All)
				}
				continue
			}
			full = append(full, x)
		}
		if ell < 0 {
			for k := used; k < r; k++ {
				full = append(full, All)
			}
		}
		out := backend.Layout{Offset: l.Offset}
		d := 0
		for _, x := range full {
			switch x.kind {
			case idxNewAxis:
				out.Shape = append(out.Shape, 1)
				out.Strides = append(out.Strides, 0)
			case idxInt:
				n := l.Shape[d]
				i := x.i
				if i < 0 {
					i += n
				}
				if i < 0 || i >= n {
					return l, errorf(op, ErrIndex, "index %d is out of bounds for axis %d with size %d", x.i, d, n)
				}
				out.Offset += i * l.Strides[d]
				d++
			case idxSlice:
				if x.step == 0 {
					return l, errorf(op, ErrValue, "slice step cannot be zero")
				}
				start, step, count := x.bounds(l.Shape[d])
				if count > 0 {
					out.Offset += start * l.Strides[d]
				}
				stride := l.Strides[d]
				if count > 1 {
					stride *= step // fits: step*(count-1) < the axis's length
				}
				out.Shape = append(out.Shape, count)
				out.Strides = append(out.Strides, stride)
				d++
			}
		}
		if out.Shape == nil {
			out.Shape, out.Strides = []int{}, []int{}
		}
		return out, nil
	})
}

// At returns the element at the given position as a 0-d view (negative
// positions count from the end).
func (a *Array) At(pos ...int) *Array {
	idx := make([]Index, len(pos))
	for i, p := range pos {
		idx[i] = Idx(p)
	}
	if a != nil && len(pos) != len(a.shape) && a.err == nil {
		return failed(errorf("At", ErrIndex, "%d indices for an array of dimension %d", len(pos), len(a.shape)))
	}
	return a.Slice(idx...)
}

// BroadcastTo returns a read-only view with the given shape (NumPy
// broadcasting rules; repeated elements share memory).
func (a *Array) BroadcastTo(shape ...int) *Array {
	const op = "BroadcastTo"
	return a.layoutOp(op, func(l backend.Layout) (backend.Layout, error) {
		if err := checkShape(op, a.dt, shape); err != nil {
			return l, err
		}
		bad := len(shape) < len(l.Shape)
		for i := 0; !bad && i < len(l.Shape); i++ {
			d, t := l.Shape[i], shape[len(shape)-len(l.Shape)+i]
			bad = d != t && d != 1
		}
		if bad {
			return l, errorf(op, ErrShape, "cannot broadcast shape %s to %s", shapeString(l.Shape), shapeString(shape))
		}
		return l.BroadcastTo(shape), nil
	})
}

// Broadcast broadcasts arrays against each other (np.broadcast_arrays).
func Broadcast(arrs ...*Array) []*Array {
	shapes := make([][]int, len(arrs))
	for i, a := range arrs {
		if _, err := a.use("Broadcast"); err != nil {
			return failAll(len(arrs), err)
		}
		shapes[i] = a.shape
	}
	shape, err := broadcastShapes("Broadcast", shapes...)
	if err != nil {
		return failAll(len(arrs), err)
	}
	out := make([]*Array, len(arrs))
	for i, a := range arrs {
		out[i] = a.BroadcastTo(shape...)
	}
	return out
}

func failAll(n int, err error) []*Array {
	out := make([]*Array, n)
	for i := range out {
		out[i] = failed(err)
	}
	return out
}

// Squeeze removes the given axes, which must have length 1, or every
// axis of length 1 when none are given.
func (a *Array) Squeeze(axes ...int) *Array {
	const op = "Squeeze"
	return a.layoutOp(op, func(l backend.Layout) (backend.Layout, error) {
		r := len(l.Shape)
		drop := make([]bool, r)
		if len(axes) == 0 {
			for i, d := range l.Shape {
				drop[i] = d == 1
			}
		} else {
			norm, err := normAxes(op, axes, r)
			if err != nil {
				return l, err
			}
			for _, ax := range norm {
				if l.Shape[ax] != 1 {
					return l, valueToo(errorf(op, ErrShape, "cannot select an axis to squeeze out which has size not equal to one (axis %d of shape %s)", ax, shapeString(l.Shape)))
				}
				drop[ax] = true
			}
		}
		out := backend.Layout{Shape: []int{}, Strides: []int{}, Offset: l.Offset}
		for i := range l.Shape {
			if !drop[i] {
				out.Shape = append(out.Shape, l.Shape[i])
				out.Strides = append(out.Strides, l.Strides[i])
			}
		}
		return out, nil
	})
}

// ExpandDims inserts an axis of length 1 at position axis, as
// np.expand_dims and torch.unsqueeze. A negative axis counts from the end
// of the result.
func (a *Array) ExpandDims(axis int) *Array {
	const op = "ExpandDims"
	return a.layoutOp(op, func(l backend.Layout) (backend.Layout, error) {
		ax, err := normAxis(op, axis, len(l.Shape)+1)
		if err != nil {
			return l, err
		}
		out := backend.Layout{Offset: l.Offset}
		out.Shape = append(append(append([]int{}, l.Shape[:ax]...), 1), l.Shape[ax:]...)
		out.Strides = append(append(append([]int{}, l.Strides[:ax]...), 0), l.Strides[ax:]...)
		return out, nil
	})
}

// Ravel returns the array as 1-D: a view when contiguous, else a copy.
func (a *Array) Ravel() *Array { return a.Reshape(-1) }

// Flatten returns a 1-D copy.
func (a *Array) Flatten() *Array {
	c := a.Copy()
	defer c.Close()
	return c.Reshape(-1)
}

// Contiguous returns a C-contiguous array with the same values: a view of
// a if it already is one, else a copy.
func (a *Array) Contiguous() *Array {
	defer runtime.KeepAlive(a)
	s, err := a.force("Contiguous")
	if err != nil {
		return failed(err)
	}
	if s.lay.IsContiguous() {
		return a.dev.view(s.st, s.lay, a.dt)
	}
	return a.Copy()
}

// Copy returns a new contiguous array with the same values (evaluating a
// pending expression straight into it).
func (a *Array) Copy() *Array {
	const op = "Copy"
	defer runtime.KeepAlive(a)
	if a != nil && a.dt.IsComplex() {
		return a.complexCopy()
	}
	var pn pins
	defer pn.release()
	e, err := a.exprOf(op, &pn)
	if err != nil {
		return failed(err)
	}
	st, err := a.dev.alloc(op, a.dt, a.shape)
	if err != nil {
		return failed(err)
	}
	lay := backend.Contiguous(a.shape)
	if err := a.dev.evalInto(e, a.shape, backend.Operand{Buf: st.buf, Layout: lay}); err != nil {
		st.release()
		return failed(deviceErr(op, err))
	}
	return a.dev.wrap(st, lay, a.dt)
}

// Assign writes src (an array or Go scalar, broadcast to a's shape and
// converted to a's dtype) into a's memory, so every view of that memory
// sees it (NumPy's a[...] = src). Pending expressions that read the memory
// are evaluated first, so they see the old values.
func (a *Array) Assign(src any) error {
	const op = "Assign"
	defer runtime.KeepAlive(a)
	s, err := a.force(op)
	if err != nil {
		return err
	}
	for i, d := range s.lay.Shape {
		if d > 1 && s.lay.Strides[i] == 0 {
			return errorf(op, ErrValue, "destination is a broadcast view; assignment would write one element several times")
		}
	}
	if a.dt.IsComplex() || isComplexOperand(src) {
		if c, ok := src.(*Array); !ok || c == nil || c.dt != a.dt {
			return a.complexAssign(src)
		}
	}
	o, err := toOperand(op, src)
	if err != nil {
		return err
	}
	defer runtime.KeepAlive(o.arr)
	if o.arr != nil && o.arr.dev != a.dev {
		return errorf(op, ErrDevice, "arrays on different devices (%v and %v)", a.dev, o.arr.dev)
	}
	if !broadcastsTo(o.shape(), a.shape) {
		return errorf(op, ErrShape, "could not broadcast input array from shape %s into shape %s", shapeString(o.shape()), shapeString(a.shape))
	}
	if o.isScalar() && !o.sc.fits(a.dt) {
		return errorf(op, ErrValue, "Go integer %d is out of range for %v", o.sc.i, a.dt)
	}
	var es [1]*expr
	var pn pins
	defer pn.release()
	if err := exprs(es[:], &pn, op, a.shape, a.dt, []operand{o}); err != nil {
		return err
	}
	e := es[0]
	for _, st := range e.leaves() {
		if st.root() == s.st.root() {
			// Source and destination share memory: evaluate the source first.
			l := a.dev.lazy(e)
			tmp := l.Copy()
			l.Close()
			defer tmp.Close()
			ts, err := tmp.force(op)
			if err != nil {
				return err
			}
			e = leafExpr(ts, a.dt)
			break
		}
	}
	s.st.flushDeps()
	return deviceErr(op, a.dev.evalInto(e, a.shape, backend.Operand{Buf: s.st.buf, Layout: s.lay}))
}

func broadcastsTo(from, to []int) bool {
	if len(from) > len(to) {
		return false
	}
	for i, d := range from {
		if t := to[len(to)-len(from)+i]; d != t && d != 1 {
			return false
		}
	}
	return true
}

// To returns a copy of the array on dev (through host memory between
// different devices).
func (a *Array) To(dev *gocu.Device) *Array { return a.to(On(dev)) }

func (a *Array) to(d *Maker) *Array {
	const op = "To"
	defer runtime.KeepAlive(a)
	if err := d.check(op); err != nil {
		return failed(err)
	}
	if a != nil && a.err == nil && a.dev == d {
		return a.Copy()
	}
	if a != nil && a.dt.IsComplex() {
		v := a.ViewAsReal()
		defer v.Close()
		w := v.to(d)
		defer w.Close()
		return w.ViewAsComplex()
	}
	host, err := a.hostData(op)
	if err != nil {
		return failed(err)
	}
	st, err := d.alloc(op, a.dt, a.shape)
	if err != nil {
		return failed(err)
	}
	if err := d.be.Write(st.buf, 0, host); err != nil {
		st.release()
		return failed(deviceErr(op, err))
	}
	return d.wrap(st, backend.Contiguous(a.shape), a.dt)
}
