package array

import (
	"github.com/gocu-dev/gocu/array/internal/backend"
	"runtime"
)

// Shape operations of NumPy built from views, gathers and fused
// expressions: no kernel of their own.

// splitAt returns the views of a between the cut positions along axis.
func (a *Array) splitAt(op string, cuts []int, axis int) []*Array {
	if _, err := a.use(op); err != nil {
		return []*Array{failed(err)}
	}
	ax, err := normAxis(op, axis, len(a.shape))
	if err != nil {
		return []*Array{failed(err)}
	}
	n := a.shape[ax]
	out := make([]*Array, 0, len(cuts)+1)
	idx := make([]Index, ax+1)
	for d := range idx {
		idx[d] = All
	}
	prev := 0
	for i := 0; i <= len(cuts); i++ {
		end := n
		if i < len(cuts) {
			end = cuts[i]
		}
		// As NumPy, cuts clip to the axis and may go backwards (empty).
		lo, hi := min(max(prev, 0), n), min(max(end, 0), n)
		hi = max(hi, lo)
		idx[ax] = S(lo, hi)
		out = append(out, a.Slice(idx...))
		prev = end
	}
	return out
}

// SplitAt splits a along axis at the given positions (np.split with a
// list of indices): len(cuts)+1 views.
func (a *Array) SplitAt(cuts []int, axis int) []*Array { return a.splitAt("SplitAt", cuts, axis) }

// Split splits a into n equal views along axis (np.split with a number);
// the axis length must divide by n.
func (a *Array) Split(n, axis int) []*Array {
	const op = "Split"
	if _, err := a.use(op); err != nil {
		return []*Array{failed(err)}
	}
	ax, err := normAxis(op, axis, len(a.shape))
	if err != nil {
		return []*Array{failed(err)}
	}
	if n <= 0 {
		return []*Array{failed(errorf(op, ErrValue, "number of sections must be larger than 0, got %d", n))}
	}
	if a.shape[ax]%n != 0 {
		return failAll(n, errorf(op, ErrValue, "array split does not result in an equal division: %d into %d", a.shape[ax], n))
	}
	return a.ArraySplit(n, axis)
}

// ArraySplit splits a into n views along axis (np.array_split): the first
// len%n have one element more.
func (a *Array) ArraySplit(n, axis int) []*Array {
	const op = "ArraySplit"
	if _, err := a.use(op); err != nil {
		return []*Array{failed(err)}
	}
	ax, err := normAxis(op, axis, len(a.shape))
	if err != nil {
		return []*Array{failed(err)}
	}
	if n <= 0 {
		return []*Array{failed(errorf(op, ErrValue, "number of sections must be larger than 0, got %d", n))}
	}
	l := a.shape[ax]
	each, extra := l/n, l%n
	cuts := make([]int, 0, n-1)
	p := 0
	for i := 0; i < n-1; i++ {
		p += each
		if i < extra {
			p++
		}
		cuts = append(cuts, p)
	}
	return a.splitAt(op, cuts, axis)
}

// Chunk splits a into at most n views of ceil(len/n) elements along axis
// (torch.chunk): the last may be shorter, and there may be fewer than n.
func (a *Array) Chunk(n, axis int) []*Array {
	const op = "Chunk"
	if _, err := a.use(op); err != nil {
		return []*Array{failed(err)}
	}
	ax, err := normAxis(op, axis, len(a.shape))
	if err != nil {
		return []*Array{failed(err)}
	}
	if n <= 0 {
		return []*Array{failed(errorf(op, ErrValue, "chunk expects a positive number of chunks, got %d", n))}
	}
	l := a.shape[ax]
	size := (l + n - 1) / n
	var cuts []int
	for p := size; p < l && size > 0; p += size {
		cuts = append(cuts, p)
	}
	return a.splitAt(op, cuts, axis)
}

// Flip reverses the order of elements along the axes (all of them if none
// is given), as a view (np.flip).
func (a *Array) Flip(axes ...int) *Array {
	const op = "Flip"
	if _, err := a.use(op); err != nil {
		return failed(err)
	}
	ax, err := normAxes(op, axes, len(a.shape))
	if err != nil {
		return failed(err)
	}
	idx := make([]Index, len(a.shape))
	for d := range idx {
		idx[d] = All
	}
	for _, d := range ax {
		idx[d] = S(None, None, -1)
	}
	return a.Slice(idx...)
}

// hostIndex makes an int64 index array on a's device.
func (a *Array) hostIndex(idx []int64) *Array {
	return fromSliceOn(a.dev, idx, len(idx))
}

// Roll shifts the elements along axis by shift, those past the end
// coming back at the start (np.roll with an axis). RollFlat rolls the
// flattened array.
func (a *Array) Roll(shift, axis int) *Array {
	const op = "Roll"
	if _, err := a.use(op); err != nil {
		return failed(err)
	}
	ax, err := normAxis(op, axis, len(a.shape))
	if err != nil {
		return failed(err)
	}
	n := a.shape[ax]
	if n == 0 {
		return a.Copy()
	}
	idx := make([]int64, n)
	for i := range idx {
		idx[i] = int64(((i-shift)%n + n) % n)
	}
	x := a.hostIndex(idx)
	defer x.Close()
	return a.Take(x, ax)
}

// RollFlat is np.roll without an axis: the flattened array rolled and
// given a's shape back.
func (a *Array) RollFlat(shift int) *Array {
	f := a.Reshape(-1)
	defer f.Close()
	if f.Err() == nil && f.Size() == 0 {
		return a.Copy()
	}
	r := f.Roll(shift, 0)
	defer r.Close()
	return r.Reshape(a.Shape()...)
}

// Tile repeats a reps times along each axis (np.tile); a shorter reps is
// padded with leading 1s, a shorter shape with leading axes of length 1.
func (a *Array) Tile(reps ...int) *Array {
	const op = "Tile"
	defer runtime.KeepAlive(a)
	if _, err := a.use(op); err != nil {
		return failed(err)
	}
	for _, r := range reps {
		if r < 0 {
			return failed(errorf(op, ErrValue, "negative repetition %d", r))
		}
	}
	r := max(len(reps), len(a.shape))
	sh := append(ones(r-len(a.shape)), a.shape...)
	rp := append(ones(r-len(reps)), reps...)
	var mid, big, out []int
	for d := 0; d < r; d++ {
		mid = append(mid, 1, sh[d])
		big = append(big, rp[d], sh[d])
		out = append(out, rp[d]*sh[d])
	}
	if err := checkShape(op, a.dt, out); err != nil {
		return failed(err)
	}
	m := a.Reshape(mid...)
	defer m.Close()
	b := m.BroadcastTo(big...)
	defer b.Close()
	c := b.Copy()
	defer c.Close()
	return c.Reshape(out...)
}

// Repeat repeats each element along axis (np.repeat with an axis):
// repeats is an int, the same count for every element, or an []int with
// one count per element of the axis.
func (a *Array) Repeat(repeats any, axis int) *Array {
	const op = "Repeat"
	if _, err := a.use(op); err != nil {
		return failed(err)
	}
	ax, err := normAxis(op, axis, len(a.shape))
	if err != nil {
		return failed(err)
	}
	n := a.shape[ax]
	var idx []int64
	switch r := repeats.(type) {
	case int:
		if r < 0 {
			return failed(errorf(op, ErrValue, "negative repetition %d", r))
		}
		// A broadcast view, copied: no index array.
		sh := append(append(append([]int{}, a.shape[:ax+1]...), 1), a.shape[ax+1:]...)
		big := append([]int{}, sh...)
		big[ax+1] = r
		out := append([]int{}, a.shape...)
		out[ax] = n * r
		if err := checkShape(op, a.dt, out); err != nil {
			return failed(err)
		}
		m := a.Reshape(sh...)
		defer m.Close()
		b := m.BroadcastTo(big...)
		defer b.Close()
		c := b.Copy()
		defer c.Close()
		return c.Reshape(out...)
	case []int:
		if len(r) != n {
			return failed(errorf(op, ErrShape, "%d repeats for an axis of length %d", len(r), n))
		}
		for i, k := range r {
			if k < 0 {
				return failed(errorf(op, ErrValue, "negative repetition %d", k))
			}
			for j := 0; j < k; j++ {
				idx = append(idx, int64(i))
			}
		}
	default:
		return failed(errorf(op, ErrValue, "repeats must be an int or an []int, not %T", repeats))
	}
	x := a.hostIndex(idx)
	defer x.Close()
	return a.Take(x, ax)
}

// PadMode is how Pad fills the border.
type PadMode uint8

// Pad modes, as np.pad's "constant", "edge" and "reflect".
const (
	PadConstant PadMode = iota
	PadEdge
	PadReflect
)

// Pad adds widths[d][0] elements before and widths[d][1] after each axis d
// (np.pad): one pair per axis, or one pair for all. PadConstant fills with
// value (a Go scalar), PadEdge repeats the edge, PadReflect mirrors
// without repeating the edge.
func (a *Array) Pad(widths [][2]int, mode PadMode, value any) *Array {
	const op = "Pad"
	defer runtime.KeepAlive(a)
	if _, err := a.use(op); err != nil {
		return failed(err)
	}
	r := len(a.shape)
	if len(widths) == 1 && r != 1 {
		w := widths[0]
		widths = make([][2]int, r)
		for d := range widths {
			widths[d] = w
		}
	}
	if len(widths) != r {
		return failed(errorf(op, ErrShape, "%d pad widths for an array of dimension %d", len(widths), r))
	}
	out := append([]int{}, a.shape...)
	for d, w := range widths {
		if w[0] < 0 || w[1] < 0 {
			return failed(errorf(op, ErrValue, "negative pad width %v", w))
		}
		out[d] += w[0] + w[1]
	}
	if err := checkShape(op, a.dt, out); err != nil {
		return failed(err)
	}
	switch mode {
	case PadConstant:
		if value == nil {
			value = 0
		}
		res := a.dev.Full(a.dt, value, out...).Eval()
		idx := make([]Index, r)
		for d, w := range widths {
			idx[d] = S(w[0], w[0]+a.shape[d])
		}
		v := res.Slice(idx...)
		err := v.Assign(a)
		v.Close()
		if err != nil {
			res.Close()
			return failed(err)
		}
		return res
	case PadEdge, PadReflect:
	default:
		return failed(errorf(op, ErrValue, "unknown pad mode %d", mode))
	}
	cur := a
	for d, w := range widths {
		n := a.shape[d]
		if w[0] == 0 && w[1] == 0 {
			continue
		}
		if n == 0 {
			return failed(errorf(op, ErrValue, "can't extend empty axis %d using modes other than constant", d))
		}
		idx := make([]int64, n+w[0]+w[1])
		for i := range idx {
			idx[i] = int64(padIndex(i-w[0], n, mode))
		}
		x := a.hostIndex(idx)
		next := cur.Take(x, d)
		x.Close()
		if cur != a {
			cur.Close()
		}
		cur = next
	}
	if cur == a {
		return a.Copy()
	}
	return cur
}

// padIndex maps a position outside [0, n) to the element Pad copies there.
func padIndex(i, n int, mode PadMode) int {
	if mode == PadEdge || n == 1 {
		return min(max(i, 0), n-1)
	}
	p := 2 * (n - 1)
	i = ((i % p) + p) % p
	if i >= n {
		i = p - i
	}
	return i
}

// Diagonal returns the diagonal of the axes axis1 and axis2 with the given
// offset as a view whose last axis is the diagonal (np.diagonal).
func (a *Array) Diagonal(offset, axis1, axis2 int) *Array {
	const op = "Diagonal"
	if _, err := a.use(op); err != nil {
		return failed(err)
	}
	if len(a.shape) < 2 {
		return failed(errorf(op, ErrShape, "diag requires an array of at least two dimensions"))
	}
	x, err := normAxis(op, axis1, len(a.shape))
	if err != nil {
		return failed(err)
	}
	y, err := normAxis(op, axis2, len(a.shape))
	if err != nil {
		return failed(err)
	}
	if x == y {
		return failed(errorf(op, ErrAxis, "axis1 and axis2 cannot be the same"))
	}
	v := a.layoutOp(op, func(l backend.Layout) (backend.Layout, error) {
		n, m := l.Shape[x], l.Shape[y]
		var cnt int
		off := l.Offset
		if offset >= 0 {
			cnt = max(0, min(n, m-offset))
			if cnt > 0 {
				off += offset * l.Strides[y]
			}
		} else {
			cnt = max(0, min(n+offset, m))
			if cnt > 0 {
				off -= offset * l.Strides[x]
			}
		}
		out := backend.Layout{Offset: off}
		for d := range l.Shape {
			if d != x && d != y {
				out.Shape = append(out.Shape, l.Shape[d])
				out.Strides = append(out.Strides, l.Strides[d])
			}
		}
		out.Shape = append(out.Shape, cnt)
		out.Strides = append(out.Strides, l.Strides[x]+l.Strides[y])
		return out, nil
	})
	return v
}

// Diag extracts the k-th diagonal of a 2-D array (a copy), or builds a
// 2-D array with the 1-D a on its k-th diagonal (np.diag).
func (a *Array) Diag(k int) *Array {
	const op = "Diag"
	if _, err := a.use(op); err != nil {
		return failed(err)
	}
	switch len(a.shape) {
	case 1:
		n := a.shape[0] + ixAbs(k)
		res := a.dev.Zeros(a.dt, n, n).Eval()
		v := res.Diagonal(k, 0, 1)
		err := v.Assign(a)
		v.Close()
		if err != nil {
			res.Close()
			return failed(err)
		}
		return res
	case 2:
		v := a.Diagonal(k, 0, 1)
		defer v.Close()
		return v.Copy()
	}
	return failed(errorf(op, ErrShape, "input must be 1- or 2-d, got %d dimensions", len(a.shape)))
}

func ixAbs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

// Trace sums the diagonal with the given offset of the first two axes
// (np.trace): the sum's dtype (int64 for integers and bool).
func (a *Array) Trace(offset int) *Array {
	v := a.Diagonal(offset, 0, 1)
	defer v.Close()
	return v.Sum(-1)
}

// triMask is true where col - row <= k (lower) or >= k (upper) over the
// last two axes of shape.
func (a *Array) tri(op string, k int, lower bool) *Array {
	if _, err := a.use(op); err != nil {
		return failed(err)
	}
	if len(a.shape) < 2 {
		return failed(errorf(op, ErrShape, "%s needs at least two dimensions, got %d", op, len(a.shape)))
	}
	n, m := a.shape[len(a.shape)-2], a.shape[len(a.shape)-1]
	rows := a.dev.Arange(Int64, float64(n)).Reshape(n, 1)
	defer rows.Close()
	cols := a.dev.Arange(Int64, float64(m))
	defer cols.Close()
	diff := cols.Sub(rows)
	defer diff.Close()
	var keep *Array
	if lower {
		keep = diff.Le(k)
	} else {
		keep = diff.Ge(k)
	}
	defer keep.Close()
	zero := a.dev.Zeros(a.dt)
	defer zero.Close()
	return Where(keep, a, zero)
}

// Tril keeps the elements on and below the k-th diagonal of the last two
// axes and zeroes the rest (np.tril).
func (a *Array) Tril(k int) *Array { return a.tri("Tril", k, true) }

// Triu keeps the elements on and above the k-th diagonal (np.triu).
func (a *Array) Triu(k int) *Array { return a.tri("Triu", k, false) }

// Meshgrid returns coordinate arrays from 1-D arrays (np.meshgrid): with
// ij false ("xy" indexing) the first two output axes are swapped.
func Meshgrid(ij bool, xs ...*Array) []*Array {
	const op = "Meshgrid"
	shape := make([]int, len(xs))
	for i, x := range xs {
		if _, err := x.use(op); err != nil {
			return failAll(len(xs), err)
		}
		if len(x.shape) != 1 {
			return failAll(len(xs), errorf(op, ErrShape, "input %d has shape %s; Meshgrid takes 1-D arrays", i, shapeString(x.shape)))
		}
		shape[i] = x.shape[0]
	}
	if !ij && len(xs) >= 2 {
		shape[0], shape[1] = shape[1], shape[0]
	}
	out := make([]*Array, len(xs))
	for i, x := range xs {
		pos := i
		if !ij && len(xs) >= 2 && i < 2 {
			pos = 1 - i
		}
		sh := ones(len(xs))
		sh[pos] = x.shape[0]
		r := x.Reshape(sh...)
		b := r.BroadcastTo(shape...)
		out[i] = b.Copy()
		b.Close()
		r.Close()
	}
	return out
}

// ZerosLike returns zeros of a's dtype and shape.
func ZerosLike(a *Array) *Array { return FullLike(a, 0) }

// OnesLike returns ones of a's dtype and shape.
func OnesLike(a *Array) *Array { return FullLike(a, 1) }

// FullLike returns an array of a's dtype and shape filled with value.
func FullLike(a *Array, value any) *Array {
	if _, err := a.use("FullLike"); err != nil {
		return failed(err)
	}
	return a.dev.Full(a.dt, value, a.shape...)
}

// Logspace returns num values base**x for x evenly spaced from start to
// stop inclusive (np.logspace), computed in float64.
func (m *Maker) Logspace(dt DType, start, stop float64, num int, base float64) *Array {
	lin := m.Linspace(Float64, start, stop, num)
	defer lin.Close()
	b := m.Full(Float64, base)
	defer b.Close()
	p := b.Pow(lin)
	if dt == Float64 {
		return p
	}
	defer p.Close()
	return p.AsType(dt)
}

// Logspace is Maker.Logspace on the default device.
func Logspace(dt DType, start, stop float64, num int, base float64) *Array {
	return Default().Logspace(dt, start, stop, num, base)
}
