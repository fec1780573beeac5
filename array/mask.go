package array

import (
	"runtime"

	"github.com/gocu-dev/gocu/array/internal/backend"
)

// Operations whose result size depends on the values (Nonzero, ArgWhere,
// Mask, Slice with a boolean mask) wait for the device to count the
// selected elements. Their Static forms (NonzeroStatic, MaskStatic, ...)
// take the result size instead, as JAX's size argument, and never wait.

// flatNonzero returns the flat positions of a's nonzero elements (at most
// size of them, the rest fill, when static) and their count as a 0-d
// int64 array.
func (a *Array) flatNonzero(op string, static bool, size int, fill int64) (*Array, *Array, error) {
	defer runtime.KeepAlive(a)
	if _, err := a.use(op); err != nil {
		return nil, nil, err
	}
	d := a.dev
	ixb, err := d.indexer(op)
	if err != nil {
		return nil, nil, err
	}
	m := a
	if a.dt != Bool {
		m = a.Ne(0)
		defer m.Close()
	}
	mc := m.Contiguous()
	defer mc.Close()
	ms, err := mc.force(op)
	if err != nil {
		return nil, nil, err
	}
	n := mc.Size()
	if !static && n > 0 {
		// A first pass that only counts (Cap 0), then the device waits.
		c := d.Empty(Int64)
		cs, err := c.force(op)
		if err == nil {
			err = ixb.Nonzero(&backend.Nonzero{Mask: ms.st.buf, MaskOffset: ms.lay.Offset, N: n, Out: cs.st.buf,
				Cap: 0, Count: cs.st.buf, CountOffset: cs.lay.Offset})
		}
		var cnt int64
		if err == nil {
			cnt, err = ItemOf[int64](c)
		}
		c.Close()
		if err != nil {
			return nil, nil, ixErr(op, err)
		}
		size = int(cnt)
	}
	if size < 0 {
		return nil, nil, errorf(op, ErrValue, "negative size %d", size)
	}
	var out *Array
	if static {
		out = d.Full(Int64, fill, size).Eval()
	} else {
		out = d.Empty(Int64, size)
	}
	cnt := d.Empty(Int64)
	os, err := out.force(op)
	if err != nil {
		return nil, nil, err
	}
	cs, err := cnt.force(op)
	if err != nil {
		return nil, nil, err
	}
	z := &backend.Nonzero{Mask: ms.st.buf, MaskOffset: ms.lay.Offset, N: n, Out: os.st.buf, OutOffset: os.lay.Offset,
		Cap: size, Count: cs.st.buf, CountOffset: cs.lay.Offset}
	if n > 0 {
		err = ixb.Nonzero(z)
	} else {
		err = cnt.Assign(0)
	}
	if err != nil {
		out.Close()
		cnt.Close()
		return nil, nil, ixErr(op, err)
	}
	return out, cnt, nil
}

// unravel turns flat row-major positions into one coordinate array per
// axis of shape.
func unravel(flat *Array, shape []int) []*Array {
	out := make([]*Array, len(shape))
	st := backend.ContiguousStrides(shape)
	for j := range shape {
		switch {
		case len(shape) == 1:
			out[j] = flat.Copy()
		case j == 0:
			out[j] = flat.FloorDiv(st[j])
		default:
			q := flat.FloorDiv(st[j])
			out[j] = q.Mod(max(shape[j], 1))
			q.Close()
		}
	}
	return out
}

// nonzero is Nonzero and NonzeroStatic.
func (a *Array) nonzero(op string, static bool, size int, fill int64) []*Array {
	if _, err := a.use(op); err != nil {
		return []*Array{failed(err)}
	}
	if len(a.shape) == 0 {
		return []*Array{failed(errorf(op, ErrShape, "calling nonzero on 0-d arrays is not allowed; use AtLeast1D or Reshape(1)"))}
	}
	flat, cnt, err := a.flatNonzero(op, static, size, fill)
	if err != nil {
		return failAll(len(a.shape), err)
	}
	cnt.Close()
	if !static && len(a.shape) == 1 {
		return []*Array{flat} // the flat positions are the coordinates
	}
	defer flat.Close()
	if static {
		// Fill positions stay fill on every axis, as JAX.
		co := unravel(flat, a.shape)
		isFill := flat.Eq(fill)
		defer isFill.Close()
		for j, c := range co {
			co[j] = Where(isFill, fill, c)
			c.Close()
		}
		return co
	}
	return unravel(flat, a.shape)
}

// Nonzero returns, for each axis, the coordinates of the nonzero elements
// in row-major order (np.nonzero; NaN is nonzero), as int64 arrays. It
// waits for the device to count them; NonzeroStatic does not.
func (a *Array) Nonzero() []*Array { return a.nonzero("Nonzero", false, 0, 0) }

// NonzeroStatic is Nonzero with a result length of size, as JAX's
// nonzero(size=, fill_value=): the first size coordinates, padded with
// fill. It does not wait for the device.
func (a *Array) NonzeroStatic(size int, fill int64) []*Array {
	return a.nonzero("NonzeroStatic", true, size, fill)
}

// FlatNonzero returns the flat row-major positions of the nonzero
// elements (np.flatnonzero); it waits for the device.
func (a *Array) FlatNonzero() *Array {
	flat, cnt, err := a.flatNonzero("FlatNonzero", false, 0, 0)
	if err != nil {
		return failed(err)
	}
	cnt.Close()
	return flat
}

// ArgWhere returns the coordinates of the nonzero elements as a (count,
// ndim) int64 array (np.argwhere); it waits for the device.
func (a *Array) ArgWhere() *Array { return a.argWhere("ArgWhere", false, 0, 0) }

// ArgWhereStatic is ArgWhere with count fixed to size (rows past the real
// count hold fill), without waiting for the device.
func (a *Array) ArgWhereStatic(size int, fill int64) *Array {
	return a.argWhere("ArgWhereStatic", true, size, fill)
}

func (a *Array) argWhere(op string, static bool, size int, fill int64) *Array {
	if _, err := a.use(op); err != nil {
		return failed(err)
	}
	if len(a.shape) == 0 {
		return failed(errorf(op, ErrShape, "ArgWhere of a 0-d array; use Reshape(1)"))
	}
	co := a.nonzero(op, static, size, fill)
	for _, c := range co {
		defer c.Close()
	}
	return Stack(1, co...)
}

// maskCheck checks that mask is a boolean array whose shape matches a's
// leading axes, as NumPy's boolean indexing.
func (a *Array) maskCheck(op string, mask *Array) error {
	if _, err := a.use(op); err != nil {
		return err
	}
	if _, err := mask.use(op); err != nil {
		return err
	}
	if mask.dev != a.dev {
		return errorf(op, ErrDevice, "arrays on different devices (%v and %v)", a.dev, mask.dev)
	}
	if mask.dt != Bool {
		return errorf(op, ErrDType, "a mask must be bool, got %v", mask.dt)
	}
	if len(mask.shape) > len(a.shape) {
		return errorf(op, ErrIndex, "too many indices for array: array is %d-dimensional, but %d were indexed", len(a.shape), len(mask.shape))
	}
	for d, n := range mask.shape {
		if n != a.shape[d] {
			return errorf(op, ErrShape, "boolean index did not match indexed array along axis %d; size of axis is %d but size of corresponding boolean axis is %d", d, a.shape[d], n)
		}
	}
	return nil
}

// Mask returns the elements (or sub-arrays) of a where mask is true, as
// NumPy's a[mask]: mask's shape matches a's leading axes, which the result
// replaces by one axis of the selected count. It waits for the device to
// count; MaskStatic does not.
func (a *Array) Mask(mask *Array) *Array { return a.mask("Mask", mask, false, 0, nil) }

// MaskStatic is Mask with the selected count fixed to size: the first
// size selections, then fill (a Go scalar) in the positions past the real
// count. It does not wait for the device.
func (a *Array) MaskStatic(mask *Array, size int, fill any) *Array {
	return a.mask("MaskStatic", mask, true, size, fill)
}

func (a *Array) mask(op string, mask *Array, static bool, size int, fill any) *Array {
	if err := a.maskCheck(op, mask); err != nil {
		return failed(err)
	}
	k := len(mask.shape)
	flat, cnt, err := mask.flatNonzero(op, static, size, -1)
	if err != nil {
		return failed(err)
	}
	defer flat.Close()
	defer cnt.Close()
	rest := a.shape[k:]
	src := a.Reshape(append([]int{prod(a.shape[:k])}, rest...)...)
	defer src.Close()
	if !static {
		out := append([]int{flat.Size()}, rest...)
		return ixGather(op, src, 0, []*Array{flat}, [][3]int{{0, 1, 0}}, flat.Size(), out)
	}
	// Fill positions read element 0 (valid when there is one) and are
	// replaced by fill.
	isFill := flat.Lt(0)
	defer isFill.Close()
	safe := Where(isFill, 0, flat).Eval()
	defer safe.Close()
	if src.Size() == 0 {
		return a.dev.Full(a.dt, fill, append([]int{size}, rest...)...)
	}
	sidx, err := ixIndices(op, safe)
	if err != nil {
		return failed(err)
	}
	defer sidx.Close()
	out := append([]int{size}, rest...)
	g := ixGather(op, src, 0, []*Array{sidx}, [][3]int{{0, 1, 0}}, size, out)
	defer g.Close()
	cond := isFill.Reshape(append([]int{size}, ones(len(rest))...)...)
	defer cond.Close()
	r := Where(cond, fill, g)
	if r.Err() == nil && r.dt != a.dt {
		defer r.Close()
		return r.AsType(a.dt)
	}
	return r
}

func ones(n int) []int {
	s := make([]int, n)
	for i := range s {
		s[i] = 1
	}
	return s
}

// SetMask writes v into a where mask is true, in place (NumPy's a[mask] =
// v). v is a Go scalar or an array that broadcasts to a's trailing axes
// (no waiting for the device), or one of shape (count, trailing axes...)
// with one row per selected element (which waits to count them).
func (a *Array) SetMask(mask *Array, v any) error {
	const op = "SetMask"
	if err := a.maskCheck(op, mask); err != nil {
		return err
	}
	k := len(mask.shape)
	rest := a.shape[k:]
	o, err := toOperand(op, v)
	if err != nil {
		return err
	}
	if o.arr == nil || len(o.arr.shape) <= len(rest) && broadcastsTo(o.arr.shape, rest) ||
		len(o.arr.shape) == len(rest)+1 && o.arr.shape[0] == 1 && broadcastsTo(o.arr.shape[1:], rest) {
		cond := mask.Reshape(append(append([]int{}, mask.shape...), ones(len(rest))...)...)
		defer cond.Close()
		w := Where(cond, v, a)
		defer w.Close()
		return a.Assign(w)
	}
	flat, cnt, err := mask.flatNonzero(op, false, 0, 0)
	if err != nil {
		return err
	}
	defer flat.Close()
	defer cnt.Close()
	idx, err := ixIndices(op, flat)
	if err != nil {
		return err
	}
	defer idx.Close()
	n := idx.Size()
	upd := append([]int{n}, rest...)
	if !broadcastsTo(o.arr.shape, upd) {
		return errorf(op, ErrShape, "cannot assign %s input values to the %d output values where the mask is true", shapeString(o.arr.shape), n)
	}
	return a.inPlace(op, func(dst *Array) error {
		r := dst.Reshape(append([]int{prod(a.shape[:k])}, rest...)...)
		defer r.Close()
		return ixScatter(op, backend.ScatterSet, r, 0, []*Array{idx}, [][3]int{{0, 1, 0}}, n, upd, v)
	})
}
