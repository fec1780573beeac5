package array

import (
	"errors"
	"math"
	"runtime"

	"github.com/gocu-dev/gocu/array/internal/backend"
)

// Sorting, searching, counting and scans. Each runs on the array's device
// (on the GPU, with no host round trip) except where its result's size
// depends on the data: Unique, Bincount and Histogram without a range
// read a count or an extreme from the device first, so they synchronise.
// UniqueN and BincountN take a static size and do not.

// ssFloat is the float dtype statistics compute in: the dtype for floats
// (float32 for the low-precision ones), float64 for the rest (NumPy).
func ssFloat(d DType) DType {
	if d.IsFloating() {
		return d.Compute()
	}
	return Float64
}

// ssCompute is the dtype a sort, search or scan of d runs in: storage
// types widen to their compute type.
func ssCompute(d DType) DType {
	if d.IsStorage() {
		return d.Compute()
	}
	return d
}

// ssContig returns a contiguous array of a's values in dtype dt and its
// operand (a new array the caller closes).
func ssContig(op string, a *Array, dt DType) (*Array, backend.Operand, error) {
	x := a
	if a.dt != dt {
		x = a.AsType(dt)
	}
	c := x.Contiguous()
	if x != a {
		x.Close()
	}
	s, err := c.force(op)
	if err != nil {
		return nil, backend.Operand{}, err
	}
	return c, backend.Operand{Buf: s.st.buf, Layout: s.lay}, nil
}

// ssOut allocates a contiguous result and its operand.
func (m *Maker) ssOut(op string, dt DType, shape []int) (*Array, backend.Operand, error) {
	st, err := m.alloc(op, dt, shape)
	if err != nil {
		return nil, backend.Operand{}, err
	}
	lay := backend.Contiguous(shape)
	return m.wrap(st, lay, dt), backend.Operand{Buf: st.buf, Layout: lay}, nil
}

// sortRows sorts a along axis: keys and/or int64 positions, ascending or
// descending, stable.
func (a *Array) sortRows(op string, axis int, desc, wantKeys, wantIdx bool) (keys, idx *Array) {
	defer runtime.KeepAlive(a)
	if _, err := a.use(op); err != nil {
		return failed(err), failed(err)
	}
	if len(a.shape) == 0 {
		err := errorf(op, ErrAxis, "needs an array of at least one dimension")
		return failed(err), failed(err)
	}
	ax, err := normAxis(op, axis, len(a.shape))
	if err != nil {
		return failed(err), failed(err)
	}
	if a.dt == Uint64 {
		f := flipU64(a, Int64)
		defer f.Close()
		keys, idx = f.sortRows(op, axis, desc, wantKeys, wantIdx)
		if keys != nil {
			defer keys.Close()
			keys = flipU64(keys, Uint64)
		}
		return keys, idx
	}
	cdt := ssCompute(a.dt)
	if !backend.Sortable(cdt.be()) {
		err := errorf(op, ErrDType, "cannot sort %v", a.dt)
		return failed(err), failed(err)
	}
	moved := a.MoveAxis(ax, -1)
	defer moved.Close()
	shape := moved.Shape()
	L := shape[len(shape)-1]
	x, in, err := ssContig(op, moved, cdt)
	if err != nil {
		return failed(err), failed(err)
	}
	defer x.Close()
	req := backend.Sort{Keys: in, Len: L, Descending: desc}
	if L > 0 {
		req.Rows = backend.Size(shape) / L
	}
	if wantKeys {
		keys, req.OutKeys, err = a.dev.ssOut(op, cdt, shape)
		if err != nil {
			return failed(err), failed(err)
		}
	}
	if wantIdx {
		idx, req.OutVals, err = a.dev.ssOut(op, Int64, shape)
		if err != nil {
			closeAll(keys)
			return failed(err), failed(err)
		}
	}
	if err := a.dev.be.Sort(&req); err != nil {
		closeAll(keys, idx)
		err = deviceErr(op, err)
		return failed(err), failed(err)
	}
	back := func(r *Array) *Array {
		if r == nil || ax == len(a.shape)-1 {
			return r
		}
		v := r.MoveAxis(-1, ax)
		r.Close()
		return v
	}
	keys, idx = back(keys), back(idx)
	if keys != nil && cdt != a.dt {
		k := keys.AsType(a.dt)
		keys.Close()
		keys = k
	}
	return keys, idx
}

// Sort returns the values sorted along axis (negative counts from the
// end), stably, as NumPy's sort: NaN last; -0 before +0.
func (a *Array) Sort(axis int) *Array {
	k, _ := a.sortRows("Sort", axis, false, true, false)
	return k
}

// Argsort returns the int64 positions that sort a along axis, stably (see
// Sort): equal values keep their order.
func (a *Array) Argsort(axis int) *Array {
	_, i := a.sortRows("Argsort", axis, false, false, true)
	return i
}

// SortDescending sorts along axis from the largest value to the smallest
// (NaN first), stably, and returns the values and their int64 positions.
func (a *Array) SortDescending(axis int) (values, indices *Array) {
	return a.sortRows("SortDescending", axis, true, true, true)
}

// TopK returns the k largest (or, with largest false, smallest) values of
// each row along the last axis and their int64 positions, best first; of
// equal values the earlier comes first. NaN counts as the largest value,
// as in PyTorch.
func (a *Array) TopK(k int, largest bool) (values, indices *Array) {
	const op = "TopK"
	if _, err := a.use(op); err != nil {
		return failed(err), failed(err)
	}
	if len(a.shape) == 0 {
		err := errorf(op, ErrAxis, "needs an array of at least one dimension")
		return failed(err), failed(err)
	}
	if n := a.shape[len(a.shape)-1]; k < 0 || k > n {
		err := errorf(op, ErrValue, "k = %d out of range for a last axis of %d", k, n)
		return failed(err), failed(err)
	}
	if a.dt == Uint64 {
		f := flipU64(a, Int64)
		defer f.Close()
		v, i := f.TopK(k, largest)
		defer v.Close()
		return flipU64(v, Uint64), i
	}
	if k > backend.TopKMax {
		v, i := a.sortRows(op, -1, largest, true, true)
		defer closeAll(v, i)
		return v.Slice(Ellipsis, S(0, k)).Copy(), i.Slice(Ellipsis, S(0, k)).Copy()
	}
	defer runtime.KeepAlive(a)
	cdt := ssCompute(a.dt)
	x, in, err := ssContig(op, a, cdt)
	if err != nil {
		return failed(err), failed(err)
	}
	defer x.Close()
	L := a.shape[len(a.shape)-1]
	shape := append(append([]int{}, a.shape[:len(a.shape)-1]...), k)
	req := backend.TopK{Keys: in, Len: L, K: k, Largest: largest}
	if L > 0 {
		req.Rows = a.Size() / L
	}
	values, req.OutKeys, err = a.dev.ssOut(op, cdt, shape)
	if err != nil {
		return failed(err), failed(err)
	}
	indices, req.OutIdx, err = a.dev.ssOut(op, Int64, shape)
	if err != nil {
		values.Close()
		return failed(err), failed(err)
	}
	if err := a.dev.be.TopK(&req); err != nil {
		closeAll(values, indices)
		err = deviceErr(op, err)
		return failed(err), failed(err)
	}
	if cdt != a.dt {
		v := values.AsType(a.dt)
		values.Close()
		values = v
	}
	return values, indices
}

// Partition returns a copy of a in which the element at position kth along
// axis is the one a sorted array has there, with no larger element before
// it and no smaller one after (here: a sorted array, a valid partition).
func (a *Array) Partition(kth, axis int) *Array {
	if err := a.checkKth("Partition", kth, axis); err != nil {
		return failed(err)
	}
	return a.Sort(axis)
}

// ArgPartition returns positions that partition a along axis (see
// Partition).
func (a *Array) ArgPartition(kth, axis int) *Array {
	if err := a.checkKth("ArgPartition", kth, axis); err != nil {
		return failed(err)
	}
	return a.Argsort(axis)
}

func (a *Array) checkKth(op string, kth, axis int) error {
	if _, err := a.use(op); err != nil {
		return err
	}
	if len(a.shape) == 0 {
		return errorf(op, ErrAxis, "needs an array of at least one dimension")
	}
	ax, err := normAxis(op, axis, len(a.shape))
	if err != nil {
		return err
	}
	if n := a.shape[ax]; kth < -n || kth >= n {
		return errorf(op, ErrIndex, "kth %d out of bounds for an axis of %d", kth, n)
	}
	return nil
}

// Unique returns the sorted distinct values of the flattened array, as
// NumPy's unique: NaNs count as one value and -0 as +0. The number of
// values depends on the data: Unique reads it from the device, so it
// synchronises; UniqueN does not. UniqueAll also returns where the values
// are and how many there are of each.
func (a *Array) Unique() *Array {
	v, _, _, _ := a.uniqueSync("Unique", false)
	return v
}

// UniqueAll is Unique with, for each value, the position of its first
// occurrence and its count, and for each element the index of its value
// (the inverse, in a's shape), all int64 (NumPy's unique with
// return_index, return_inverse and return_counts).
func (a *Array) UniqueAll() (values, index, inverse, counts *Array) {
	return a.uniqueSync("UniqueAll", true)
}

func (a *Array) uniqueSync(op string, all bool) (values, index, inverse, counts *Array) {
	n := a.Size()
	u := a.unique(op, n, nil, all)
	if u.err != nil {
		return failed(u.err), failed(u.err), failed(u.err), failed(u.err)
	}
	k, err := ItemOf[int64](u.count)
	u.count.Close()
	if err != nil {
		closeAll(u.values, u.index, u.counts, u.inverse)
		return failed(err), failed(err), failed(err), failed(err)
	}
	cut := func(x *Array) *Array {
		if x == nil {
			return nil
		}
		c := x.Slice(S(0, int(k))).Copy()
		x.Close()
		return c
	}
	return cut(u.values), cut(u.index), u.inverse, cut(u.counts)
}

// UniqueN is Unique with a static size, which does not synchronise: the
// first size distinct values (and their index and count), the slots past
// the number of values holding fill (index and count 0), and that number
// as a 0-d int64 array.
func (a *Array) UniqueN(size int, fill any) (values, index, inverse, counts, count *Array) {
	const op = "UniqueN"
	if size < 0 {
		err := errorf(op, ErrValue, "negative size %d", size)
		return failed(err), failed(err), failed(err), failed(err), failed(err)
	}
	u := a.unique(op, size, fill, true)
	if u.err != nil {
		return failed(u.err), failed(u.err), failed(u.err), failed(u.err), failed(u.err)
	}
	return u.values, u.index, u.inverse, u.counts, u.count
}

type uniqueOut struct {
	values, index, inverse, counts, count *Array
	err                                   error
}

// unique runs the backend's Unique into outputs of size slots (the
// positions, counts and inverse only when all is set), the slots past the
// number of values filled with fill unless it is nil.
func (a *Array) unique(op string, size int, fill any, all bool) (u uniqueOut) {
	defer runtime.KeepAlive(a)
	if _, err := a.use(op); err != nil {
		return uniqueOut{err: err}
	}
	flat := a.Reshape(-1)
	defer flat.Close()
	cdt := ssCompute(a.dt)
	x := flat
	switch {
	case cdt.IsFloat():
		x = flat.AsType(cdt).Add(0.0) // -0 + 0 is +0: one value with +0
		defer x.Close()
	case a.dt == Uint64:
		x = flipU64(flat, Int64) // unsigned order (see flipU64)
		defer x.Close()
	case cdt != a.dt:
		x = flat.AsType(cdt)
		defer x.Close()
	}
	keys, perm := x.sortRows(op, 0, false, true, all) // positions only when wanted
	defer closeAll(keys, perm)
	if err := keys.Err(); err != nil {
		return uniqueOut{err: err}
	}
	n := a.Size()
	ks, err := keys.force(op)
	if err != nil {
		return uniqueOut{err: err}
	}
	req := backend.Unique{Sorted: backend.Operand{Buf: ks.st.buf, Layout: ks.lay}, N: n, Cap: size, NoFill: fill == nil}
	if all {
		ps, err := perm.force(op)
		if err != nil {
			return uniqueOut{err: err}
		}
		req.Perm = backend.Operand{Buf: ps.st.buf, Layout: ps.lay}
	}
	if fill != nil {
		s, _, err := scalarOf(fill)
		if err != nil {
			return uniqueOut{err: errorf(op, ErrValue, "fill: %v", err)}
		}
		req.Fill = s.as(cdt)
		if a.dt == Uint64 {
			req.Fill = s.as(Uint64)
			req.Fill.DType, req.Fill.I = backend.Int64, req.Fill.I^math.MinInt64
		}
	}
	d := a.dev
	var outs [5]*Array
	specs := []struct {
		dst   *backend.Operand
		dt    DType
		shape []int
	}{{&req.Values, cdt, []int{size}}, {&req.Index, Int64, []int{size}}, {&req.Inverse, Int64, []int{n}},
		{&req.Counts, Int64, []int{size}}, {&req.Count, Int64, []int{}}}
	for i, s := range specs {
		if !all && i >= 1 && i <= 3 {
			continue // values and the count only
		}
		outs[i], *s.dst, err = d.ssOut(op, s.dt, s.shape)
		if err != nil {
			closeAll(outs[:i]...)
			return uniqueOut{err: err}
		}
	}
	if err := d.be.Unique(&req); err != nil {
		closeAll(outs[:]...)
		return uniqueOut{err: deviceErr(op, err)}
	}
	u = uniqueOut{values: outs[0], index: outs[1], inverse: outs[2], counts: outs[3], count: outs[4]}
	if a.dt == Uint64 {
		v := flipU64(u.values, Uint64)
		u.values.Close()
		u.values = v
	} else if cdt != a.dt {
		v := u.values.AsType(a.dt)
		u.values.Close()
		u.values = v
	}
	if u.inverse != nil {
		inv := u.inverse.Reshape(a.shape...)
		u.inverse.Close()
		u.inverse = inv
	}
	return u
}

// SearchSorted returns, for each element of values, the position in the
// ascending 1-D array sorted where it would be inserted keeping the
// order: the first such position, or with right the last (NumPy's
// searchsorted, NaN sorting last). The result is int64 in values' shape.
func SearchSorted(sorted, values *Array, right bool) *Array {
	const op = "SearchSorted"
	defer runtime.KeepAlive(sorted)
	defer runtime.KeepAlive(values)
	if _, err := sorted.use(op); err != nil {
		return failed(err)
	}
	if _, err := values.use(op); err != nil {
		return failed(err)
	}
	if len(sorted.shape) != 1 {
		return failed(errorf(op, ErrShape, "sorted must be 1-D, got shape %s", shapeString(sorted.shape)))
	}
	if sorted.dev != values.dev {
		return failed(errorf(op, ErrDevice, "arrays on %v and %v", sorted.dev, values.dev))
	}
	if Promote(sorted.dt, values.dt) == Uint64 {
		// Both unsigned: search the flipped keys (see flipU64).
		ks, kv := flipU64(sorted, Int64), flipU64(values, Int64)
		defer closeAll(ks, kv)
		return SearchSorted(ks, kv, right)
	}
	dt := ssCompute(Promote(sorted.dt, values.dt))
	if dt == Bool {
		dt = Uint8
	}
	a, ain, err := ssContig(op, sorted, dt)
	if err != nil {
		return failed(err)
	}
	defer a.Close()
	v, vin, err := ssContig(op, values, dt)
	if err != nil {
		return failed(err)
	}
	defer v.Close()
	out, o, err := values.dev.ssOut(op, Int64, values.shape)
	if err != nil {
		return failed(err)
	}
	req := backend.Search{Sorted: ain, Len: sorted.shape[0], Values: vin, N: values.Size(), Right: right, Out: o}
	if err := values.dev.be.Search(&req); err != nil {
		out.Close()
		return failed(deviceErr(op, err))
	}
	return out
}

// Bincount counts the occurrences of each value of the 1-D non-negative
// integer array a: int64 counts of length max(a)+1 (at least minLength),
// or with weights (a's shape) float64 sums of weights. It reads the
// extremes of a from the device, so it synchronises; BincountN does not.
func (a *Array) Bincount(weights *Array, minLength int) *Array {
	const op = "Bincount"
	if err := a.checkBincount(op, weights); err != nil {
		return failed(err)
	}
	if minLength < 0 {
		return failed(errorf(op, ErrValue, "minLength must be non-negative, got %d", minLength))
	}
	n := minLength
	if a.Size() > 0 {
		lo, err := ItemOf[int64](a.Min())
		if err != nil {
			return failed(err)
		}
		if lo < 0 {
			return failed(errorf(op, ErrValue, "input must be non-negative, got %d", lo))
		}
		hi, err := ItemOf[int64](a.Max())
		if err != nil {
			return failed(err)
		}
		n = max(n, int(hi)+1)
	}
	return a.histogram(op, weights, n, 0, 0)
}

// BincountN is Bincount into length bins, without synchronising: values
// outside [0, length) are dropped.
func (a *Array) BincountN(weights *Array, length int) *Array {
	const op = "BincountN"
	if err := a.checkBincount(op, weights); err != nil {
		return failed(err)
	}
	if length < 0 {
		return failed(errorf(op, ErrValue, "negative length %d", length))
	}
	return a.histogram(op, weights, length, 0, 0)
}

func (a *Array) checkBincount(op string, weights *Array) error {
	if _, err := a.use(op); err != nil {
		return err
	}
	if len(a.shape) != 1 {
		return errorf(op, ErrShape, "input must be 1-D, got shape %s", shapeString(a.shape))
	}
	if !a.dt.IsInt() && a.dt != Bool {
		return errorf(op, ErrDType, "input must be integer, got %v", a.dt)
	}
	if weights != nil {
		if _, err := weights.use(op); err != nil {
			return err
		}
		if !sameShape(weights.shape, a.shape) {
			return errorf(op, ErrShape, "weights of shape %s for input of shape %s", shapeString(weights.shape), shapeString(a.shape))
		}
	}
	return nil
}

// Histogram counts the elements of a (flattened) into bins equal bins over
// [lo, hi] (rng), the last bin including hi, and returns the int64 counts
// and the bin edges, as NumPy's histogram. Elements outside the
// range are not counted; edges have a's float dtype (float64 for the
// others). Without rng the range is a's minimum and maximum,
// which are read from the device (this synchronises).
func (a *Array) Histogram(bins int, rng ...float64) (counts, edges *Array) {
	const op = "Histogram"
	if _, err := a.use(op); err != nil {
		return failed(err), failed(err)
	}
	if bins < 1 {
		err := errorf(op, ErrValue, "bins must be positive, got %d", bins)
		return failed(err), failed(err)
	}
	var lo, hi float64
	switch len(rng) {
	case 0:
		if a.Size() > 0 {
			var err error
			if lo, err = ItemOf[float64](a.Min()); err == nil {
				hi, err = ItemOf[float64](a.Max())
			}
			if err != nil {
				return failed(err), failed(err)
			}
			if math.IsNaN(lo) || math.IsNaN(hi) {
				err := errorf(op, ErrValue, "autodetected range of [%v, %v] is not finite", lo, hi)
				return failed(err), failed(err)
			}
		}
	case 2:
		lo, hi = rng[0], rng[1]
		if lo > hi {
			err := errorf(op, ErrValue, "max must be larger than min in range (%v, %v)", lo, hi)
			return failed(err), failed(err)
		}
	default:
		err := errorf(op, ErrValue, "range takes 2 values (lo, hi), got %d", len(rng))
		return failed(err), failed(err)
	}
	if math.IsInf(lo, 0) || math.IsInf(hi, 0) || math.IsNaN(lo) || math.IsNaN(hi) {
		err := errorf(op, ErrValue, "range (%v, %v) is not finite", lo, hi)
		return failed(err), failed(err)
	}
	if lo == hi {
		lo, hi = lo-0.5, hi+0.5
	}
	flat := a.Reshape(-1)
	defer flat.Close()
	edges = a.dev.Linspace(Float64, lo, hi, bins+1)
	if a.dt.IsFloating() && a.dt != Float64 {
		e := edges.AsType(a.dt) // NumPy: edges in the input's float dtype
		edges.Close()
		edges = e
	}
	return flat.histogram(op, nil, bins, lo, hi), edges
}

// histogram runs the backend's Histogram on the 1-D array a: integer bins
// when lo == hi, even float bins over [lo, hi] otherwise.
func (a *Array) histogram(op string, weights *Array, bins int, lo, hi float64) *Array {
	defer runtime.KeepAlive(a)
	dt := ssCompute(a.dt)
	switch {
	case lo != hi && !dt.IsFloat():
		dt = Float64
	case dt == Bool:
		dt = Uint8
	}
	x, in, err := ssContig(op, a, dt)
	if err != nil {
		return failed(err)
	}
	defer x.Close()
	req := backend.Histogram{In: in, N: a.Size(), Bins: bins, Lo: lo, Hi: hi}
	odt := Int64
	if weights != nil {
		odt = Float64
		w, win, err := ssContig(op, weights, Float64)
		if err != nil {
			return failed(err)
		}
		defer w.Close()
		req.Weights = win
	}
	out, o, err := a.dev.ssOut(op, odt, []int{bins})
	if err != nil {
		return failed(err)
	}
	req.Out = o
	if err := a.dev.be.Histogram(&req); err != nil {
		out.Close()
		return failed(deviceErr(op, err))
	}
	return out
}

// scan runs a cumulative operation along axis.
func (a *Array) scan(op string, kind backend.ScanKind, axis int) *Array {
	defer runtime.KeepAlive(a)
	if _, err := a.use(op); err != nil {
		return failed(err)
	}
	if len(a.shape) == 0 {
		return failed(errorf(op, ErrAxis, "needs an array of at least one dimension"))
	}
	ax, err := normAxis(op, axis, len(a.shape))
	if err != nil {
		return failed(err)
	}
	if a.dt == Uint64 && (kind == backend.CumMax || kind == backend.CumMin) {
		f := flipU64(a, Int64)
		defer f.Close()
		r := f.scan(op, kind, axis)
		defer r.Close()
		return flipU64(r, Uint64)
	}
	final := a.dt
	if kind == backend.CumSum || kind == backend.CumProd {
		_, final = reduceTypes(OpSum, a.dt)
	}
	cdt := ssCompute(final)
	if cdt == Bool {
		cdt = Uint8
	}
	x, in, err := ssContig(op, a, cdt)
	if err != nil {
		return failed(err)
	}
	defer x.Close()
	out, o, err := a.dev.ssOut(op, cdt, a.shape)
	if err != nil {
		return failed(err)
	}
	req := backend.Scan{Kind: kind, In: in, Out: o, Outer: 1, Len: a.shape[ax], Inner: 1}
	for d, n := range a.shape {
		switch {
		case d < ax:
			req.Outer *= n
		case d > ax:
			req.Inner *= n
		}
	}
	if err := a.dev.be.Scan(&req); err != nil {
		out.Close()
		return failed(deviceErr(op, err))
	}
	if cdt != final {
		r := out.AsType(final)
		out.Close()
		return r
	}
	return out
}

// Cumsum returns the running sums along axis. Bool and signed integers
// sum in int64, unsigned integers in uint64 (wrapping on overflow, as
// NumPy's fixed-width integers); floats in their own dtype.
func (a *Array) Cumsum(axis int) *Array { return a.scan("Cumsum", backend.CumSum, axis) }

// Cumprod returns the running products along axis (dtypes as Cumsum).
func (a *Array) Cumprod(axis int) *Array { return a.scan("Cumprod", backend.CumProd, axis) }

// Cummax returns the running maxima along axis, in a's dtype; a NaN
// propagates.
func (a *Array) Cummax(axis int) *Array { return a.scan("Cummax", backend.CumMax, axis) }

// Cummin returns the running minima along axis (see Cummax).
func (a *Array) Cummin(axis int) *Array { return a.scan("Cummin", backend.CumMin, axis) }

// Diff returns the n-th discrete difference along axis: a[1:] - a[:-1]
// applied n times (for bool, a[1:] != a[:-1]), as NumPy's diff.
func (a *Array) Diff(n, axis int) *Array {
	const op = "Diff"
	if _, err := a.use(op); err != nil {
		return failed(err)
	}
	if n < 0 {
		return failed(errorf(op, ErrValue, "order must be non-negative, got %d", n))
	}
	if len(a.shape) == 0 {
		return failed(errorf(op, ErrAxis, "needs an array of at least one dimension"))
	}
	ax, err := normAxis(op, axis, len(a.shape))
	if err != nil {
		return failed(err)
	}
	hi := make([]Index, ax+1)
	lo := make([]Index, ax+1)
	for i := range ax {
		hi[i], lo[i] = All, All
	}
	hi[ax], lo[ax] = S(1, None), S(None, -1)
	x := a
	for range n {
		var y *Array
		if a.dt == Bool {
			y = x.Slice(hi...).Ne(x.Slice(lo...))
		} else {
			y = x.Slice(hi...).Sub(x.Slice(lo...))
		}
		x = y
	}
	if x == a {
		return a.Copy()
	}
	return x
}

// reducedCount is the number of elements the axes (all if none) hold.
func (a *Array) reducedCount(op string, axes []int) (int, error) {
	norm, err := normAxes(op, axes, len(a.shape))
	if err != nil {
		return 0, err
	}
	n := 1
	for _, ax := range norm {
		n *= a.shape[ax]
	}
	return n, nil
}

// Var returns the variance over the axes (all if none): the mean squared
// deviation from the mean, divided by N-ddof instead of N. Integers give
// float64 (NumPy).
func (a *Array) Var(ddof int, axes ...int) *Array {
	const op = "Var"
	if _, err := a.use(op); err != nil {
		return failed(err)
	}
	n, err := a.reducedCount(op, axes)
	if err != nil {
		return failed(err)
	}
	if r, ok := a.varRows(op, ddof, axes); ok {
		return r
	}
	fdt := ssFloat(a.dt)
	x := a.AsType(fdt)
	m := x.Reduce(OpMean, true, axes...)
	d := x.Sub(m)
	s := d.Mul(d).Sum(axes...)
	r := s.Div(float64(max(n-ddof, 0)))
	if a.dt.IsLowp() {
		return r.AsType(a.dt)
	}
	return r
}

// rowVarer is a backend with a variance over contiguous rows; one that
// wraps another returns errors.ErrUnsupported where that one has none.
type rowVarer interface {
	VarRows(x, out backend.Operand, rows, n, ddof int) error
}

// varRows is Var by the backend's VarRows, when it has one, a has dtype
// Float32 or Float64 and the axes are trailing ones over at least two
// rows of at least one element; ok is false otherwise.
func (a *Array) varRows(op string, ddof int, axes []int) (r *Array, ok bool) {
	vr, can := a.dev.be.(rowVarer)
	if !can || (a.dt != Float32 && a.dt != Float64) {
		return nil, false
	}
	norm, err := normAxes(op, axes, len(a.shape))
	if err != nil {
		return nil, false
	}
	k := len(a.shape) - len(norm)
	rows, n := 1, 1
	for d, ax := range norm {
		if ax != k+d {
			return nil, false
		}
		n *= a.shape[ax]
	}
	for _, s := range a.shape[:k] {
		rows *= s
	}
	if rows < 2 || n < 1 {
		return nil, false
	}
	defer runtime.KeepAlive(a)
	x, in, err := ssContig(op, a, a.dt)
	if err != nil {
		return failed(err), true
	}
	defer x.Close()
	out, o, err := a.dev.ssOut(op, a.dt, append([]int{}, a.shape[:k]...))
	if err != nil {
		return failed(err), true
	}
	if err := vr.VarRows(in, o, rows, n, ddof); err != nil {
		out.Close()
		if errors.Is(err, errors.ErrUnsupported) {
			return nil, false
		}
		return failed(deviceErr(op, err)), true
	}
	return out, true
}

// Std is the square root of Var.
func (a *Array) Std(ddof int, axes ...int) *Array {
	v := a.Var(ddof, axes...)
	if a.dt.IsLowp() {
		return v.AsType(Float32).Sqrt().AsType(a.dt)
	}
	return v.Sqrt()
}

// sortedLast moves the axes (all if none) to the end, merges them and
// sorts along the merged axis.
func (a *Array) sortedLast(op string, axes []int) (*Array, error) {
	norm, err := normAxes(op, axes, len(a.shape))
	if err != nil {
		return nil, err
	}
	if len(axes) == 0 {
		norm = norm[:0]
		for d := range a.shape {
			norm = append(norm, d)
		}
	}
	red := make([]bool, len(a.shape))
	for _, d := range norm {
		red[d] = true
	}
	var perm, keep []int
	n := 1
	for d := range a.shape {
		if !red[d] {
			perm = append(perm, d)
			keep = append(keep, a.shape[d])
		}
	}
	for _, d := range norm {
		perm = append(perm, d)
		n *= a.shape[d]
	}
	t := a.Transpose(perm...)
	defer t.Close()
	r := t.Reshape(append(keep, n)...)
	defer r.Close()
	return r.Sort(-1), nil
}

// Quantile returns the q-th quantile (0 <= q <= 1) over the axes (all if
// none) with linear interpolation between the closest ranks, as NumPy's
// quantile; a NaN in the values gives NaN. Integers give float64.
func (a *Array) Quantile(q float64, axes ...int) *Array {
	const op = "Quantile"
	if _, err := a.use(op); err != nil {
		return failed(err)
	}
	if !(q >= 0 && q <= 1) {
		return failed(errorf(op, ErrValue, "quantile %v is not in [0, 1]", q))
	}
	fdt := ssFloat(a.dt)
	x := a.AsType(fdt)
	defer x.Close()
	s, err := x.sortedLast(op, axes)
	if err != nil {
		return failed(err)
	}
	defer s.Close()
	sh := s.Shape()
	L := sh[len(sh)-1]
	if L == 0 {
		return a.dev.Full(fdt, math.NaN(), sh[:len(sh)-1]...)
	}
	v := q * float64(L-1)
	lo := int(math.Floor(v))
	hi := min(lo+1, L-1)
	t := v - float64(lo)
	x0, x1 := s.Slice(Ellipsis, Idx(lo)), s.Slice(Ellipsis, Idx(hi))
	diff := x1.Sub(x0)
	var r *Array
	if t >= 0.5 { // NumPy's _lerp, exact at t = 1
		r = x1.Sub(diff.Mul(1 - t))
	} else {
		r = x0.Add(diff.Mul(t))
	}
	if fdt.IsFloating() {
		last := s.Slice(Ellipsis, Idx(L-1))
		r = Where(last.IsNaN(), math.NaN(), r)
	}
	if a.dt.IsLowp() {
		return r.AsType(a.dt)
	}
	return r.Eval()
}

// Percentile is Quantile with q given in percent.
func (a *Array) Percentile(p float64, axes ...int) *Array {
	if !(p >= 0 && p <= 100) {
		return failed(errorf("Percentile", ErrValue, "percentile %v is not in [0, 100]", p))
	}
	return a.Quantile(p/100, axes...)
}

// Median is the 0.5 quantile over the axes (all if none).
func (a *Array) Median(axes ...int) *Array { return a.Quantile(0.5, axes...) }

// nanTo replaces NaN by v (integers have none).
func (a *Array) nanTo(v float64) *Array {
	if !a.dt.IsFloating() {
		return a
	}
	return Where(a.IsNaN(), v, a)
}

// notNaN counts the elements that are not NaN over the axes.
func (a *Array) notNaN(axes []int) *Array {
	if !a.dt.IsFloating() {
		return a.AsType(Bool).LogicalOr(true).Sum(axes...)
	}
	return a.IsNaN().LogicalNot().Sum(axes...)
}

// NanSum is Sum with NaN counted as zero.
func (a *Array) NanSum(axes ...int) *Array { return a.nanTo(0).Sum(axes...) }

// NanProd is Prod with NaN counted as one.
func (a *Array) NanProd(axes ...int) *Array { return a.nanTo(1).Prod(axes...) }

// NanMean is Mean over the elements that are not NaN (NaN where all are).
func (a *Array) NanMean(axes ...int) *Array {
	if !a.dt.IsFloating() {
		return a.Mean(axes...)
	}
	return a.NanSum(axes...).Div(a.notNaN(axes).AsType(a.dt.Compute()))
}

// NanMax is Max ignoring NaN (NaN where all are).
func (a *Array) NanMax(axes ...int) *Array { return a.nanExtreme(true, axes) }

// NanMin is Min ignoring NaN (NaN where all are).
func (a *Array) NanMin(axes ...int) *Array { return a.nanExtreme(false, axes) }

func (a *Array) nanExtreme(isMax bool, axes []int) *Array {
	if !a.dt.IsFloating() {
		if isMax {
			return a.Max(axes...)
		}
		return a.Min(axes...)
	}
	var r *Array
	if isMax {
		r = a.nanTo(math.Inf(-1)).Max(axes...)
	} else {
		r = a.nanTo(math.Inf(1)).Min(axes...)
	}
	return Where(a.notNaN(axes).Eq(0), math.NaN(), r)
}

// NanArgMax is ArgMax ignoring NaN; a slice of only NaN gives -1 (NumPy
// raises; that would need the values on the host).
func (a *Array) NanArgMax(axis ...int) *Array { return a.nanArg(true, axis) }

// NanArgMin is ArgMin ignoring NaN (see NanArgMax).
func (a *Array) NanArgMin(axis ...int) *Array { return a.nanArg(false, axis) }

func (a *Array) nanArg(isMax bool, axes []int) *Array {
	if !a.dt.IsFloating() {
		if isMax {
			return a.ArgMax(axes...)
		}
		return a.ArgMin(axes...)
	}
	var r *Array
	if isMax {
		r = a.nanTo(math.Inf(-1)).ArgMax(axes...)
	} else {
		r = a.nanTo(math.Inf(1)).ArgMin(axes...)
	}
	return Where(a.notNaN(axes).Eq(0), int64(-1), r)
}

// NanVar is Var over the elements that are not NaN.
func (a *Array) NanVar(ddof int, axes ...int) *Array {
	if !a.dt.IsFloating() {
		return a.Var(ddof, axes...)
	}
	if _, err := a.reducedCount("NanVar", axes); err != nil {
		return failed(err)
	}
	x := a.AsType(a.dt.Compute())
	cnt := x.notNaN(axes).AsType(x.dt)
	keep := x.IsNaN().LogicalNot()
	m := x.nanTo(0).Reduce(OpSum, true, axes...).Div(keep.Reduce(OpSum, true, axes...).AsType(x.dt))
	d := Where(keep, x.Sub(m), 0.0)
	dof := cnt.Sub(float64(ddof))
	r := Where(dof.Le(0.0), math.NaN(), d.Mul(d).Sum(axes...).Div(dof)) // NumPy: NaN without degrees of freedom
	if a.dt.IsLowp() {
		return r.AsType(a.dt)
	}
	return r
}

// NanStd is the square root of NanVar.
func (a *Array) NanStd(ddof int, axes ...int) *Array { return a.NanVar(ddof, axes...).Sqrt() }

// CountNonzero counts the nonzero elements over the axes (all if none),
// as int64; NaN is nonzero.
func (a *Array) CountNonzero(axes ...int) *Array { return a.AsType(Bool).Sum(axes...) }

// IsClose reports elementwise whether |x - y| <= atol + rtol*|y|, with
// infinities close only to themselves and NaN close to NaN only with
// equalNaN, as NumPy's isclose.
func IsClose(x, y *Array, rtol, atol float64, equalNaN bool) *Array {
	const op = "IsClose"
	if _, err := x.use(op); err != nil {
		return failed(err)
	}
	if _, err := y.use(op); err != nil {
		return failed(err)
	}
	dt := ssFloat(Promote(x.dt, y.dt))
	if dt.IsLowp() {
		dt = Float32
	}
	xf, yf := x.AsType(dt), y.AsType(dt)
	fin := xf.IsFinite().LogicalAnd(yf.IsFinite())
	near := xf.Sub(yf).Abs().Le(yf.Abs().Mul(rtol).Add(atol))
	r := Where(fin, near, xf.Eq(yf))
	if equalNaN {
		r = r.LogicalOr(xf.IsNaN().LogicalAnd(yf.IsNaN()))
	}
	return r
}

// AllClose reports whether IsClose holds for every element; it reads the
// answer, so it synchronises.
func AllClose(x, y *Array, rtol, atol float64, equalNaN bool) (bool, error) {
	return ItemOf[bool](IsClose(x, y, rtol, atol, equalNaN).All())
}

// axesLast moves the axes (sorted, distinct) to the end and merges them
// into one: the result, the permutation and the permuted shape.
func (a *Array) axesLast(op string, axes []int) (*Array, []int, []int, error) {
	norm, err := normAxes(op, axes, len(a.shape))
	if err != nil {
		return nil, nil, nil, err
	}
	red := make([]bool, len(a.shape))
	for _, d := range norm {
		red[d] = true
	}
	var perm, keep []int
	for d := range a.shape {
		if !red[d] {
			perm = append(perm, d)
			keep = append(keep, a.shape[d])
		}
	}
	n := 1
	for _, d := range norm {
		perm = append(perm, d)
		n *= a.shape[d]
	}
	t := a.Transpose(perm...)
	pshape := t.Shape()
	r := t.Reshape(append(keep, n)...)
	t.Close()
	return r, perm, pshape, nil
}

// LogSumExpAxes is LogSumExp over several axes (all if none).
func (a *Array) LogSumExpAxes(axes ...int) *Array {
	const op = "LogSumExpAxes"
	if _, err := a.use(op); err != nil {
		return failed(err)
	}
	if len(a.shape) == 0 {
		return a.AsType(floatFor(a.dt))
	}
	r, _, _, err := a.axesLast(op, axes)
	if err != nil {
		return failed(err)
	}
	defer r.Close()
	return r.LogSumExp(-1)
}

// SoftmaxAxes is Softmax over several axes (all if none) taken together.
func (a *Array) SoftmaxAxes(axes ...int) *Array {
	const op = "SoftmaxAxes"
	if _, err := a.use(op); err != nil {
		return failed(err)
	}
	if len(a.shape) == 0 {
		return a.Softmax(0)
	}
	r, perm, pshape, err := a.axesLast(op, axes)
	if err != nil {
		return failed(err)
	}
	defer r.Close()
	s := r.Softmax(-1).Reshape(pshape...)
	inv := make([]int, len(perm))
	for i, p := range perm {
		inv[p] = i
	}
	return s.Transpose(inv...)
}

// SortWithIndices returns the values sorted along axis and the int64
// positions they came from (see Sort), from one sort.
func (a *Array) SortWithIndices(axis int) (values, indices *Array) {
	return a.sortRows("SortWithIndices", axis, false, true, true)
}

// SortBy returns values (keys' shape, any dtype) reordered along axis by
// the stable ascending sort of keys: NumPy's
// take_along_axis(values, argsort(keys, kind="stable"), axis), from one
// sort that carries the values.
func SortBy(keys, values *Array, axis int) *Array {
	const op = "SortBy"
	defer runtime.KeepAlive(keys)
	defer runtime.KeepAlive(values)
	if _, err := keys.use(op); err != nil {
		return failed(err)
	}
	if _, err := values.use(op); err != nil {
		return failed(err)
	}
	if !sameShape(keys.shape, values.shape) {
		return failed(errorf(op, ErrShape, "keys of shape %s and values of shape %s", shapeString(keys.shape), shapeString(values.shape)))
	}
	if keys.dev != values.dev {
		return failed(errorf(op, ErrDevice, "arrays on %v and %v", keys.dev, values.dev))
	}
	if len(keys.shape) == 0 {
		return failed(errorf(op, ErrAxis, "needs an array of at least one dimension"))
	}
	if keys.dt == Uint64 {
		f := flipU64(keys, Int64)
		defer f.Close()
		return SortBy(f, values, axis)
	}
	ax, err := normAxis(op, axis, len(keys.shape))
	if err != nil {
		return failed(err)
	}
	mk := keys.MoveAxis(ax, -1)
	defer mk.Close()
	mv := values.MoveAxis(ax, -1)
	defer mv.Close()
	shape := mk.Shape()
	L := shape[len(shape)-1]
	k, kin, err := ssContig(op, mk, ssCompute(keys.dt))
	if err != nil {
		return failed(err)
	}
	defer k.Close()
	vdt := ssCompute(values.dt)
	v, vin, err := ssContig(op, mv, vdt)
	if err != nil {
		return failed(err)
	}
	defer v.Close()
	out, o, err := keys.dev.ssOut(op, vdt, shape)
	if err != nil {
		return failed(err)
	}
	req := backend.Sort{Keys: kin, Len: L, Vals: vin, OutVals: o}
	if L > 0 {
		req.Rows = backend.Size(shape) / L
	}
	if err := keys.dev.be.Sort(&req); err != nil {
		out.Close()
		return failed(deviceErr(op, err))
	}
	r := out.MoveAxis(-1, ax)
	out.Close()
	if vdt != values.dt {
		c := r.AsType(values.dt)
		r.Close()
		return c
	}
	return r
}

// NanQuantile is Quantile over the elements that are not NaN (NaN where
// all are), as NumPy's nanquantile.
func (a *Array) NanQuantile(q float64, axes ...int) *Array {
	const op = "NanQuantile"
	if _, err := a.use(op); err != nil {
		return failed(err)
	}
	if !a.dt.IsFloating() {
		return a.Quantile(q, axes...)
	}
	if !(q >= 0 && q <= 1) {
		return failed(errorf(op, ErrValue, "quantile %v is not in [0, 1]", q))
	}
	x := a.AsType(a.dt.Compute())
	defer x.Close()
	s, err := x.sortedLast(op, axes)
	if err != nil {
		return failed(err)
	}
	defer s.Close()
	sh := s.Shape()
	L := sh[len(sh)-1]
	if L == 0 {
		return a.dev.Full(x.dt, math.NaN(), sh[:len(sh)-1]...)
	}
	// Per row: c values are not NaN (they sort first); the quantile lies
	// between ranks lo and lo+1 of them. A one-hot mask along the row
	// picks each rank (no gather needed).
	c := s.IsNaN().LogicalNot().Sum(-1).AsType(Float64)
	v := c.Sub(1).Maximum(0.0).Mul(q)
	lo := v.Floor()
	t := v.Sub(lo).AsType(x.dt).ExpandDims(-1)
	hi := lo.Add(1).Minimum(c.Sub(1).Maximum(0.0))
	pos := a.dev.Arange(Float64, float64(L))
	pick := func(r *Array) *Array {
		return Where(pos.Eq(r.ExpandDims(-1)), s, 0.0).Sum(-1).AsType(x.dt).ExpandDims(-1)
	}
	x0, x1 := pick(lo), pick(hi)
	diff := x1.Sub(x0)
	r := Where(t.Ge(0.5), x1.Sub(diff.Mul(t.Neg().Add(1.0))), x0.Add(diff.Mul(t))).Squeeze(-1)
	r = Where(c.Eq(0.0), math.NaN(), r)
	if a.dt.IsLowp() {
		return r.AsType(a.dt)
	}
	return r.Eval()
}

// NanMedian is Median over the elements that are not NaN.
func (a *Array) NanMedian(axes ...int) *Array { return a.NanQuantile(0.5, axes...) }

// NanPercentile is Percentile over the elements that are not NaN.
func (a *Array) NanPercentile(p float64, axes ...int) *Array {
	if !(p >= 0 && p <= 100) {
		return failed(errorf("NanPercentile", ErrValue, "percentile %v is not in [0, 100]", p))
	}
	return a.NanQuantile(p/100, axes...)
}
