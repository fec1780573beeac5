package array

import (
	"errors"
	"runtime"

	"github.com/gocu-dev/gocu/array/internal/backend"
)

// Indexing by integer arrays and boolean masks. Gathers and scatters check
// every index against its axis: on the CPU the operation fails at once;
// on a GPU the kernel raises a device-side flag (it never reads or writes
// out of bounds), and the error surfaces at the next synchronisation
// (Host, a read, Sync), like PyTorch's device-side asserts.

// indexer returns the device's gather/scatter backend.
func (m *Maker) indexer(op string) (backend.Indexer, error) {
	ix, ok := m.be.(backend.Indexer)
	if !ok {
		return nil, errorf(op, ErrDevice, "%v cannot index by arrays", m)
	}
	return ix, nil
}

// ixErr converts a backend failure of an indexing operation.
func ixErr(op string, err error) error {
	var ie *backend.IndexError
	if errors.As(err, &ie) {
		return &Error{Op: op, Kind: ErrIndex, Msg: ie.Error()}
	}
	return deviceErr(op, err)
}

// ixIndices returns x as a contiguous Int32 or Int64 array, or an ErrDType
// error for a non-integer index array.
func ixIndices(op string, x *Array) (*Array, error) {
	if _, err := x.use(op); err != nil {
		return nil, err
	}
	switch {
	case x.dt == Int32 || x.dt == Int64:
		c := x.Contiguous()
		return c, c.Err()
	case x.dt.IsInt():
		c := x.AsType(Int64)
		defer c.Close()
		c2 := c.Contiguous()
		return c2, c2.Err()
	}
	return nil, errorf(op, ErrDType, "arrays used as indices must be of integer type, got %v", x.dt)
}

// prod multiplies dimensions.
func prod(s []int) int {
	n := 1
	for _, d := range s {
		n *= d
	}
	return n
}

// ixGather gathers from src along its axes [ax, ax+len(idx)). Each index
// array (contiguous Int32/Int64) has strides over the [O, M, I] space;
// the result has outShape (O*M*I elements).
func ixGather(op string, src *Array, ax int, idx []*Array, strides [][3]int, M int, outShape []int) *Array {
	return ixGatherNamed(op, src, ax, idx, strides, M, outShape, nil)
}

// ixGatherNamed is ixGather naming axes[j] (not ax+j) in index errors.
func ixGatherNamed(op string, src *Array, ax int, idx []*Array, strides [][3]int, M int, outShape []int, axes []int) *Array {
	defer runtime.KeepAlive(src)
	for _, x := range idx {
		defer runtime.KeepAlive(x)
	}
	d := src.dev
	ixb, err := d.indexer(op)
	if err != nil {
		return failed(err)
	}
	c := src.Contiguous()
	defer c.Close()
	s, err := c.force(op)
	if err != nil {
		return failed(err)
	}
	k := len(idx)
	O, I := prod(c.shape[:ax]), prod(c.shape[ax+k:])
	if err := checkShape(op, src.dt, outShape); err != nil {
		return failed(err)
	}
	st, err := d.alloc(op, src.dt, outShape)
	if err != nil {
		return failed(err)
	}
	g := &backend.Gather{Src: s.st.buf, SrcOffset: s.lay.Offset, Out: st.buf, O: O, M: M, I: I}
	for j, x := range idx {
		xs, err := x.force(op)
		if err != nil {
			st.release()
			return failed(err)
		}
		name := ax + j
		if axes != nil {
			name = axes[j]
		}
		g.Idx = append(g.Idx, backend.Index{Buf: xs.st.buf, Offset: xs.lay.Offset, Strides: strides[j], Len: c.shape[ax+j], Axis: name})
	}
	if O*M*I > 0 {
		if err := ixb.Gather(g); err != nil {
			st.release()
			return failed(ixErr(op, err))
		}
	}
	return d.wrap(st, contiguousLayout(outShape), src.dt)
}

// ixScatter scatters val (broadcast to the update space [O, M, I], whose
// shape is updShape) into dst's axes [ax, ax+len(idx)) in place; dst must
// be contiguous.
func ixScatter(op string, sop backend.ScatterOp, dst *Array, ax int, idx []*Array, strides [][3]int, M int, updShape []int, val any) error {
	defer runtime.KeepAlive(dst)
	for _, x := range idx {
		defer runtime.KeepAlive(x)
	}
	d := dst.dev
	ixb, err := d.indexer(op)
	if err != nil {
		return err
	}
	s, err := dst.force(op)
	if err != nil {
		return err
	}
	if !s.lay.IsContiguous() {
		return errorf(op, ErrValue, "internal: scatter into a non-contiguous array")
	}
	if sop != backend.ScatterSet {
		switch dst.dt {
		case Float32, Float64, Int32, Int64:
		default:
			return errorf(op, ErrDType, "scatter-%v is not defined for %v (float32, float64 and the integers but uint64's maximum are)", sop, dst.dt)
		}
	}
	k := len(idx)
	O, I := prod(dst.shape[:ax]), prod(dst.shape[ax+k:])
	o, err := toOperand(op, val)
	if err != nil {
		return err
	}
	var v *Array
	if o.arr != nil {
		if o.arr.dev != d {
			return errorf(op, ErrDevice, "arrays on different devices (%v and %v)", d, o.arr.dev)
		}
		if !broadcastsTo(o.arr.shape, updShape) {
			return errorf(op, ErrShape, "could not broadcast value array from shape %s into shape %s", shapeString(o.arr.shape), shapeString(updShape))
		}
		c := o.arr
		if c.dt != dst.dt {
			c = o.arr.AsType(dst.dt)
			defer c.Close()
		}
		b := c.BroadcastTo(updShape...)
		defer b.Close()
		v = b.Reshape(O, M, I)
	} else {
		if !o.sc.fits(dst.dt) {
			return errorf(op, ErrValue, "Go integer %d is out of range for %v", o.sc.i, dst.dt)
		}
		f := d.Full(dst.dt, val)
		defer f.Close()
		v = f.Reshape(1, 1, 1).BroadcastTo(O, M, I)
	}
	defer v.Close()
	vs, err := v.force(op)
	if err != nil {
		return err
	}
	sc := &backend.Scatter{Op: sop, Dst: s.st.buf, DstOffset: s.lay.Offset, Val: vs.st.buf, ValOffset: vs.lay.Offset,
		O: O, M: M, I: I}
	copy(sc.ValStrides[:], vs.lay.Strides)
	for j := range sc.ValStrides {
		if [3]int{O, M, I}[j] == 1 {
			sc.ValStrides[j] = 0
		}
	}
	for j, x := range idx {
		xs, err := x.force(op)
		if err != nil {
			return err
		}
		sc.Idx = append(sc.Idx, backend.Index{Buf: xs.st.buf, Offset: xs.lay.Offset, Strides: strides[j], Len: dst.shape[ax+j], Axis: ax + j})
	}
	if O*M*I == 0 {
		return nil
	}
	s.st.flushDeps()
	return ixErr(op, ixb.Scatter(sc))
}

// Take returns the elements of a at the given indices along axis
// (np.take(a, indices, axis)): the axis is replaced by the indices' shape.
// Negative indices count from the end; one out of range is an ErrIndex
// error naming the index, the axis and its size. Flatten a first
// (Ravel) for np.take without an axis.
func (a *Array) Take(indices *Array, axis int) *Array {
	const op = "Take"
	if _, err := a.use(op); err != nil {
		return failed(err)
	}
	if indices != nil && indices.dev != a.dev && indices.err == nil {
		return failed(errorf(op, ErrDevice, "arrays on different devices (%v and %v)", a.dev, indices.dev))
	}
	ax, err := normAxis(op, axis, len(a.shape))
	if err != nil {
		return failed(err)
	}
	idx, err := ixIndices(op, indices)
	if err != nil {
		return failed(err)
	}
	defer idx.Close()
	out := append(append(append([]int{}, a.shape[:ax]...), idx.shape...), a.shape[ax+1:]...)
	return ixGather(op, a, ax, []*Array{idx}, [][3]int{{0, 1, 0}}, idx.Size(), out)
}

// IndexSelect returns the slices of a at the 1-D indices along axis
// (torch.index_select); its gradient (package grad) is IndexAdd.
func (a *Array) IndexSelect(axis int, indices *Array) *Array {
	if indices != nil && indices.err == nil && len(indices.shape) != 1 {
		return failed(errorf("IndexSelect", ErrShape, "indices must be 1-D, got shape %s", shapeString(indices.shape)))
	}
	return a.Take(indices, axis)
}

// TakeAlongAxis picks, for every position of indices, the element of a
// along axis at that index (np.take_along_axis): indices has a's rank, and
// the other axes broadcast against a's.
func (a *Array) TakeAlongAxis(indices *Array, axis int) *Array {
	const op = "TakeAlongAxis"
	if _, err := a.use(op); err != nil {
		return failed(err)
	}
	if _, err := indices.use(op); err != nil {
		return failed(err)
	}
	if len(indices.shape) != len(a.shape) {
		return failed(errorf(op, ErrShape, "indices and array must have the same number of dimensions, got %d and %d", len(indices.shape), len(a.shape)))
	}
	ax, err := normAxis(op, axis, len(a.shape))
	if err != nil {
		return failed(err)
	}
	src, ish, err := ixAlong(op, a, indices, ax)
	if err != nil {
		return failed(err)
	}
	defer src.Close()
	idx, err := ixIndices(op, indices.BroadcastTo(ish...))
	if err != nil {
		return failed(err)
	}
	defer idx.Close()
	M, I := ish[ax], prod(ish[ax+1:])
	return ixGather(op, src, ax, []*Array{idx}, [][3]int{{M * I, I, 1}}, M, ish)
}

// ixAlong broadcasts a and indices over every axis but ax: it returns a
// broadcast (a view or a) and the indices' broadcast shape.
func ixAlong(op string, a, indices *Array, ax int) (*Array, []int, error) {
	as := append([]int{}, a.shape...)
	is := append([]int{}, indices.shape...)
	as[ax], is[ax] = 1, 1
	b, err := broadcastShapes(op, as, is)
	if err != nil {
		return nil, nil, err
	}
	sa := append([]int{}, b...)
	sa[ax] = a.shape[ax]
	si := append([]int{}, b...)
	si[ax] = indices.shape[ax]
	src := a.BroadcastTo(sa...)
	return src, si, src.Err()
}

// Put writes values at the flat (row-major) indices of a, in place
// (np.put with mode "raise"); values, an array or a Go scalar, broadcasts
// to the indices' shape. With duplicate indices one value wins: the last
// on the CPU, an unspecified one on a GPU.
func (a *Array) Put(indices *Array, values any) error {
	const op = "Put"
	if _, err := a.use(op); err != nil {
		return err
	}
	idx, err := ixIndices(op, indices)
	if err != nil {
		return err
	}
	defer idx.Close()
	return a.inPlace(op, func(dst *Array) error {
		flat := dst.Reshape(-1)
		defer flat.Close()
		return ixScatter(op, backend.ScatterSet, flat, 0, []*Array{idx}, [][3]int{{0, 1, 0}}, idx.Size(), []int{idx.Size()}, values)
	})
}

// inPlace runs f on a contiguous array with a's values and, if that is a
// copy, writes it back into a.
func (a *Array) inPlace(op string, f func(dst *Array) error) error {
	s, err := a.force(op)
	if err != nil {
		return err
	}
	if s.lay.IsContiguous() {
		return f(a)
	}
	c := a.Copy()
	defer c.Close()
	if err := f(c); err != nil {
		return err
	}
	return a.Assign(c)
}

// scatterAlong is ScatterAdd, ScatterMax and Scatter: a copy of a with
// src's elements combined into it at index along axis (torch.scatter_add,
// torch.scatter_reduce "amax", torch.scatter).
func (a *Array) scatterAlong(op string, sop backend.ScatterOp, axis int, index *Array, src any) *Array {
	if _, err := a.use(op); err != nil {
		return failed(err)
	}
	if _, err := index.use(op); err != nil {
		return failed(err)
	}
	if len(index.shape) != len(a.shape) {
		return failed(errorf(op, ErrShape, "index and array must have the same number of dimensions, got %d and %d", len(index.shape), len(a.shape)))
	}
	ax, err := normAxis(op, axis, len(a.shape))
	if err != nil {
		return failed(err)
	}
	for d := range a.shape {
		if d != ax && index.shape[d] != a.shape[d] {
			return failed(errorf(op, ErrShape, "index shape %s must match the array's shape %s outside axis %d", shapeString(index.shape), shapeString(a.shape), ax))
		}
	}
	if s, ok := src.(*Array); ok && s != nil && s.err == nil && len(s.shape) == len(index.shape) {
		// As torch, only src's leading part of the index's shape is used.
		cut := make([]Index, len(s.shape))
		for d := range cut {
			if s.shape[d] < index.shape[d] {
				return failed(errorf(op, ErrShape, "src shape %s is smaller than index shape %s", shapeString(s.shape), shapeString(index.shape)))
			}
			cut[d] = S(index.shape[d])
		}
		v := s.Slice(cut...)
		defer v.Close()
		src = v
	}
	idx, err := ixIndices(op, index)
	if err != nil {
		return failed(err)
	}
	defer idx.Close()
	out, err := a.scatterCopy(op, sop, src)
	if err != nil {
		return failed(err)
	}
	M, I := index.shape[ax], prod(index.shape[ax+1:])
	if err := ixScatter(op, sop, out, ax, []*Array{idx}, [][3]int{{M * I, I, 1}}, M, index.shape, src); err != nil {
		out.Close()
		return failed(err)
	}
	return out.narrowTo(a.dt)
}

// scatterCopy returns a copy of a for a scatter of sop: in int32 or int64
// where a's integer dtype has no atomic update of its own (the wrapped
// sums and the maxima keep their low bits and order), except uint64's
// maximum, whose order int64 does not keep.
func (a *Array) scatterCopy(op string, sop backend.ScatterOp, src any) (*Array, error) {
	dt := a.dt
	if sop != backend.ScatterSet {
		switch {
		case dt == Uint8 || dt == Int8 || dt == Int16 || dt == Uint16:
			dt = Int32
		case dt == Uint32 || dt == Uint64 && sop == backend.ScatterAdd:
			dt = Int64
		}
	}
	if s, ok, _ := scalarOf(src); ok && !s.fits(a.dt) {
		return nil, errorf(op, ErrValue, "Go integer %d is out of range for %v", s.i, a.dt)
	}
	if dt == a.dt {
		return a.Copy(), nil
	}
	w := a.AsType(dt)
	defer w.Close()
	return w.Copy(), nil
}

// narrowTo converts a scatter's result back to dtype dt (see scatterCopy).
func (a *Array) narrowTo(dt DType) *Array {
	if a.dt == dt {
		return a
	}
	return narrowResult(a, dt)
}

// ScatterAdd returns a copy of a with src added at index along axis
// (torch.scatter_add): for axis 0 of a matrix, out[index[i][j]][j] +=
// src[i][j]. index has a's rank and a's shape outside axis; src is an
// array at least index's shape (its leading part is used) or a scalar.
// Duplicate indices accumulate. Defined for float32, float64, int32 and
// int64.
func (a *Array) ScatterAdd(axis int, index *Array, src any) *Array {
	return a.scatterAlong("ScatterAdd", backend.ScatterAdd, axis, index, src)
}

// ScatterMax is ScatterAdd keeping the maximum (torch.scatter_reduce
// "amax" with include_self): NaN wins.
func (a *Array) ScatterMax(axis int, index *Array, src any) *Array {
	return a.scatterAlong("ScatterMax", backend.ScatterMax, axis, index, src)
}

// Scatter is ScatterAdd storing the values (torch.scatter); with
// duplicate indices one value wins.
func (a *Array) Scatter(axis int, index *Array, src any) *Array {
	return a.scatterAlong("Scatter", backend.ScatterSet, axis, index, src)
}

// IndexAdd returns a copy of a with the slices of src added at the 1-D
// indices along axis (torch.index_add): src has a's shape with axis
// replaced by len(indices). It is the gradient of IndexSelect and Take.
func (a *Array) IndexAdd(axis int, indices *Array, src any) *Array {
	const op = "IndexAdd"
	if _, err := a.use(op); err != nil {
		return failed(err)
	}
	ax, err := normAxis(op, axis, len(a.shape))
	if err != nil {
		return failed(err)
	}
	idx, err := ixIndices(op, indices)
	if err != nil {
		return failed(err)
	}
	defer idx.Close()
	upd := append(append(append([]int{}, a.shape[:ax]...), idx.shape...), a.shape[ax+1:]...)
	out, err := a.scatterCopy(op, backend.ScatterAdd, src)
	if err != nil {
		return failed(err)
	}
	if err := ixScatter(op, backend.ScatterAdd, out, ax, []*Array{idx}, [][3]int{{0, 1, 0}}, idx.Size(), upd, src); err != nil {
		out.Close()
		return failed(err)
	}
	return out.narrowTo(a.dt)
}

// IndexPut writes values into a, in place, at the indices along axis
// (a[..., indices, ...] = values along axis); values broadcasts to a's
// shape with axis replaced by the indices' shape.
func (a *Array) IndexPut(axis int, indices *Array, values any) error {
	const op = "IndexPut"
	if _, err := a.use(op); err != nil {
		return err
	}
	ax, err := normAxis(op, axis, len(a.shape))
	if err != nil {
		return err
	}
	idx, err := ixIndices(op, indices)
	if err != nil {
		return err
	}
	defer idx.Close()
	upd := append(append(append([]int{}, a.shape[:ax]...), idx.shape...), a.shape[ax+1:]...)
	return a.inPlace(op, func(dst *Array) error {
		return ixScatter(op, backend.ScatterSet, dst, ax, []*Array{idx}, [][3]int{{0, 1, 0}}, idx.Size(), upd, values)
	})
}

// stickIndexErr makes an index error a GPU reported at a read of a the
// array's error, so that later reads of a fail too, and returns err.
func (a *Array) stickIndexErr(err error) error {
	if !errors.Is(err, ErrIndex) {
		return err
	}
	a.mu.Lock()
	if a.err == nil {
		a.err = err
		a.leaf.Store(nil)
	}
	a.mu.Unlock()
	return err
}
