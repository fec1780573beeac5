package cpu

import (
	"fmt"
	"math"
	"sync"
	"unsafe"

	"github.com/gocu-dev/gocu/array/internal/backend"
)

// rawBytes returns the buffer's memory as bytes, or nil for a dtype it
// does not know.
func (b *Buffer) rawBytes() []byte {
	var p unsafe.Pointer
	switch b.dt {
	case backend.Int8:
		p = unsafe.Pointer(unsafe.SliceData(b.i8))
	case backend.Int16:
		p = unsafe.Pointer(unsafe.SliceData(b.i16))
	case backend.Uint16:
		p = unsafe.Pointer(unsafe.SliceData(b.u16))
	case backend.Uint32:
		p = unsafe.Pointer(unsafe.SliceData(b.u32))
	case backend.Uint64:
		p = unsafe.Pointer(unsafe.SliceData(b.u64))
	case backend.Float16:
		p = unsafe.Pointer(unsafe.SliceData(b.f16))
	case backend.BFloat16:
		p = unsafe.Pointer(unsafe.SliceData(b.bf16))
	case backend.Float8E4M3:
		p = unsafe.Pointer(unsafe.SliceData(b.e4m3))
	case backend.Float8E5M2:
		p = unsafe.Pointer(unsafe.SliceData(b.e5m2))
	case backend.Float32, backend.Complex64: // complex: (re, im) pairs
		p = unsafe.Pointer(unsafe.SliceData(b.f32))
	case backend.Float64, backend.Complex128:
		p = unsafe.Pointer(unsafe.SliceData(b.f64))
	case backend.Int32:
		p = unsafe.Pointer(unsafe.SliceData(b.i32))
	case backend.Int64:
		p = unsafe.Pointer(unsafe.SliceData(b.i64))
	case backend.Uint8:
		p = unsafe.Pointer(unsafe.SliceData(b.u8))
	case backend.Bool:
		p = unsafe.Pointer(unsafe.SliceData(b.b))
	default:
		return nil
	}
	if p == nil {
		return []byte{}
	}
	return unsafe.Slice((*byte)(p), b.n*b.dt.Size())
}

// w16 is a 16-byte element, a complex128, moved whole by gathers and
// scatters that set.
type w16 [2]uint64

// words views a buffer's memory as elements of W (its element size).
func words[W any](b *Buffer) []W {
	raw := b.rawBytes()
	var w W
	if len(raw) == 0 {
		return nil
	}
	return unsafe.Slice((*W)(unsafe.Pointer(unsafe.SliceData(raw))), len(raw)/int(unsafe.Sizeof(w)))
}

// ixReader reads the index arrays of a request.
type ixReader struct {
	i32 [][]int32
	i64 [][]int64
	idx []backend.Index
}

func newIxReader(idx []backend.Index) (*ixReader, error) {
	if len(idx) < 1 || len(idx) > backend.MaxIndices {
		return nil, fmt.Errorf("cpu: %d index arrays", len(idx))
	}
	r := &ixReader{i32: make([][]int32, len(idx)), i64: make([][]int64, len(idx)), idx: idx}
	for k, x := range idx {
		b := asBuffer(x.Buf)
		switch b.dt {
		case backend.Int32:
			r.i32[k] = b.i32
		case backend.Int64:
			r.i64[k] = b.i64
		default:
			return nil, fmt.Errorf("cpu: index array of %v", b.dt)
		}
	}
	return r, nil
}

// at returns the source row (over the index arrays' axes) of position
// (o, m, i), or an IndexError.
func (r *ixReader) at(o, m, i int) (int, *backend.IndexError) {
	row := 0
	for k := range r.idx {
		x := &r.idx[k]
		p := x.Offset + o*x.Strides[0] + m*x.Strides[1] + i*x.Strides[2]
		var v int64
		if r.i32[k] != nil {
			v = int64(r.i32[k][p])
		} else {
			v = r.i64[k][p]
		}
		n := int64(x.Len)
		if v < -n || v >= n {
			return 0, &backend.IndexError{Index: v, Axis: x.Axis, Len: x.Len}
		}
		if v < 0 {
			v += n
		}
		row = row*x.Len + int(v)
	}
	return row, nil
}

// innerFree reports whether no index array varies along I.
func (r *ixReader) innerFree() bool {
	for _, x := range r.idx {
		if x.Strides[2] != 0 {
			return false
		}
	}
	return true
}

// rows is the product of the index axes' lengths.
func (r *ixReader) rows() int {
	n := 1
	for _, x := range r.idx {
		n *= x.Len
	}
	return n
}

// firstErr keeps the error of the lowest chunk.
type firstErr struct {
	mu  sync.Mutex
	lo  int
	err error
}

func (f *firstErr) set(lo int, err error) {
	f.mu.Lock()
	if f.err == nil || lo < f.lo {
		f.lo, f.err = lo, err
	}
	f.mu.Unlock()
}

// Gather implements backend.Indexer.
func (b *Backend) Gather(g *backend.Gather) error {
	r, err := newIxReader(g.Idx)
	if err != nil {
		return err
	}
	src, out := asBuffer(g.Src), asBuffer(g.Out)
	if src.dt != out.dt {
		return fmt.Errorf("cpu: gather of %v into %v", src.dt, out.dt)
	}
	switch src.dt.Size() {
	case 1:
		return ixGather(b, r, g, words[uint8](src), words[uint8](out))
	case 2:
		return ixGather(b, r, g, words[uint16](src), words[uint16](out))
	case 4:
		return ixGather(b, r, g, words[uint32](src), words[uint32](out))
	case 8:
		return ixGather(b, r, g, words[uint64](src), words[uint64](out))
	case 16:
		return ixGather(b, r, g, words[w16](src), words[w16](out))
	}
	return fmt.Errorf("cpu: gather of %v", src.dt)
}

func ixGather[W any](b *Backend, r *ixReader, g *backend.Gather, src, out []W) error {
	n := r.rows()
	var fe firstErr
	free := r.innerFree()
	if free && len(r.idx) == 1 {
		if r.i64[0] != nil {
			return gather1(b, r.i64[0], &r.idx[0], g, src, out)
		}
		return gather1(b, r.i32[0], &r.idx[0], g, src, out)
	}
	b.parallel(g.O*g.M, max(1, serialBelow/max(g.I, 1)), 1, func(lo, hi int) {
		for om := lo; om < hi; om++ {
			o, m := om/max(g.M, 1), om%max(g.M, 1)
			dst := out[g.OutOffset+om*g.I : g.OutOffset+(om+1)*g.I]
			if free {
				row, ierr := r.at(o, m, 0)
				if ierr != nil {
					fe.set(om, ierr)
					return
				}
				s := g.SrcOffset + (o*n+row)*g.I
				copy(dst, src[s:s+g.I])
				continue
			}
			for i := range dst {
				row, ierr := r.at(o, m, i)
				if ierr != nil {
					fe.set(om, ierr)
					return
				}
				dst[i] = src[g.SrcOffset+(o*n+row)*g.I+i]
			}
		}
	})
	return fe.err
}

// gather1 is the gather by one index array constant along I: a row copy,
// or an element load when I is 1, with no division per element.
func gather1[T int32 | int64, W any](b *Backend, idx []T, x *backend.Index, g *backend.Gather, src, out []W) error {
	var fe firstErr
	M, I, n := max(g.M, 1), g.I, int64(x.Len)
	b.parallel(g.O*g.M, max(1, serialBelow/max(I, 1)), 1, func(lo, hi int) {
		o, m := lo/M, lo%M
		for om := lo; om < hi; om++ {
			v := int64(idx[x.Offset+o*x.Strides[0]+m*x.Strides[1]])
			if v < -n || v >= n {
				fe.set(om, &backend.IndexError{Index: v, Axis: x.Axis, Len: x.Len})
				return
			}
			if v < 0 {
				v += n
			}
			s := g.SrcOffset + (o*x.Len+int(v))*I
			if I == 1 {
				out[g.OutOffset+om] = src[s]
			} else {
				copy(out[g.OutOffset+om*I:g.OutOffset+(om+1)*I], src[s:s+I])
			}
			if m++; m == M {
				m = 0
				o++
			}
		}
	})
	return fe.err
}

// Scatter implements backend.Indexer.
func (b *Backend) Scatter(s *backend.Scatter) error {
	r, err := newIxReader(s.Idx)
	if err != nil {
		return err
	}
	dst, val := asBuffer(s.Dst), asBuffer(s.Val)
	if dst.dt != val.dt {
		return fmt.Errorf("cpu: scatter of %v into %v", val.dt, dst.dt)
	}
	if len(r.idx) == 1 && (s.I == 1 || r.innerFree()) {
		if ok, err := scatter1(b, r, s, dst, val); ok {
			return err
		}
	}
	if s.Op == backend.ScatterSet {
		switch dst.dt.Size() {
		case 1:
			return ixScatter(b, r, s, words[uint8](dst), words[uint8](val), setW[uint8])
		case 2:
			return ixScatter(b, r, s, words[uint16](dst), words[uint16](val), setW[uint16])
		case 4:
			return ixScatter(b, r, s, words[uint32](dst), words[uint32](val), setW[uint32])
		case 8:
			return ixScatter(b, r, s, words[uint64](dst), words[uint64](val), setW[uint64])
		case 16:
			return ixScatter(b, r, s, words[w16](dst), words[w16](val), setW[w16])
		}
		return fmt.Errorf("cpu: scatter of %v", dst.dt)
	}
	add := s.Op == backend.ScatterAdd
	switch dst.dt {
	case backend.Float32:
		if add {
			return ixScatter(b, r, s, dst.f32, val.f32, addW[float32])
		}
		return ixScatter(b, r, s, dst.f32, val.f32, maxF[float32])
	case backend.Float64:
		if add {
			return ixScatter(b, r, s, dst.f64, val.f64, addW[float64])
		}
		return ixScatter(b, r, s, dst.f64, val.f64, maxF[float64])
	case backend.Int32:
		if add {
			return ixScatter(b, r, s, dst.i32, val.i32, addW[int32])
		}
		return ixScatter(b, r, s, dst.i32, val.i32, maxI[int32])
	case backend.Int64:
		if add {
			return ixScatter(b, r, s, dst.i64, val.i64, addW[int64])
		}
		return ixScatter(b, r, s, dst.i64, val.i64, maxI[int64])
	}
	return fmt.Errorf("cpu: scatter-%v of %v", s.Op, dst.dt)
}

func setW[W any](d *W, v W) { *d = v }

func addW[W int32 | int64 | float32 | float64](d *W, v W) { *d += v }

func maxF[W float32 | float64](d *W, v W) {
	if v > *d || v != v {
		*d = v
	}
}

func maxI[W int32 | int64](d *W, v W) {
	if v > *d {
		*d = v
	}
}

func ixScatter[W any](b *Backend, r *ixReader, s *backend.Scatter, dst, val []W, f func(*W, W)) error {
	n := r.rows()
	var fe firstErr
	// Work splits over (o, a range of i): two tasks never write one
	// element, and each element sees its updates in m order, as serially.
	free := r.innerFree()
	chunk := max(16, (s.I+b.workers-1)/b.workers)
	nc := (s.I + chunk - 1) / chunk
	per := max(s.M*min(chunk, s.I), 1)
	b.parallel(s.O*nc, max(1, serialBelow/per), 1, func(lo, hi int) {
		for task := lo; task < hi; task++ {
			o, c := task/nc, task%nc
			ilo, ihi := c*chunk, min((c+1)*chunk, s.I)
			for m := 0; m < s.M; m++ {
				row := 0
				for i := ilo; i < ihi; i++ {
					if i == ilo || !free {
						var ierr *backend.IndexError
						if row, ierr = r.at(o, m, i); ierr != nil {
							fe.set(task, ierr)
							return
						}
					}
					v := val[s.ValOffset+o*s.ValStrides[0]+m*s.ValStrides[1]+i*s.ValStrides[2]]
					f(&dst[s.DstOffset+(o*n+row)*s.I+i], v)
				}
			}
		}
	})
	return fe.err
}

// scatterParts is how many ranges of destination rows a scatter by one
// index array into n rows splits into: 1 when it is small, has an o for
// every worker, or is too large for int32 positions.
func (b *Backend) scatterParts(s *backend.Scatter, n int) int {
	w := b.workers
	if w < 2 || s.O >= w || s.M > math.MaxInt32 || n > math.MaxInt32 {
		return 1
	}
	return max(1, min(w, n, s.M*s.I/serialBelow))
}

// word is an element type scatter1 combines.
type word interface {
	uint8 | uint16 | uint32 | uint64 | int32 | int64 | float32 | float64
}

// scatter1 runs a scatter by one index array, constant along I or with I
// 1, with the operation inlined. It reports false for a dtype it does not
// handle.
func scatter1(b *Backend, r *ixReader, s *backend.Scatter, dst, val *Buffer) (bool, error) {
	if s.Op == backend.ScatterSet {
		switch dst.dt.Size() {
		case 1:
			return true, scatter1T(b, r, s, words[uint8](dst), words[uint8](val))
		case 2:
			return true, scatter1T(b, r, s, words[uint16](dst), words[uint16](val))
		case 4:
			return true, scatter1T(b, r, s, words[uint32](dst), words[uint32](val))
		case 8:
			return true, scatter1T(b, r, s, words[uint64](dst), words[uint64](val))
		}
		return false, nil
	}
	switch dst.dt {
	case backend.Float32:
		return true, scatter1T(b, r, s, dst.f32, val.f32)
	case backend.Float64:
		return true, scatter1T(b, r, s, dst.f64, val.f64)
	case backend.Int32:
		return true, scatter1T(b, r, s, dst.i32, val.i32)
	case backend.Int64:
		return true, scatter1T(b, r, s, dst.i64, val.i64)
	}
	return false, nil
}

func scatter1T[W word](b *Backend, r *ixReader, s *backend.Scatter, dst, val []W) error {
	if r.i64[0] != nil {
		return scatter1I(b, r.i64[0], &r.idx[0], s, dst, val)
	}
	return scatter1I(b, r.i32[0], &r.idx[0], s, dst, val)
}

// scatter1I runs a scatter with fewer o than workers in one of two ways
// that match a serial run bit for bit. Integer sums and maxima accumulate
// chunks of the updates into private copies, combined in chunk order.
// Others bucket the updates by part of the destination rows, keeping
// their order, and each part applies its bucket, so every element sees
// its updates in serial order.
func scatter1I[T int32 | int64, W word](b *Backend, idx []T, x *backend.Index, s *backend.Scatter, dst, val []W) error {
	if p := b.scatterParts(s, x.Len); p > 1 {
		if e, ok := identity[W](s.Op); ok && x.Len*p <= s.M {
			for o := range s.O {
				if err := private(b, p, idx, x, o, s, dst, val, e); err != nil {
					return err
				}
			}
			return nil
		}
		if p >= minBucketParts {
			bk := newBuckets(p, s.M, x.Len)
			defer bk.free()
			for o := range s.O {
				if err := bucketed(b, bk, idx, x, o, s, dst, val); err != nil {
					return err
				}
			}
			return nil
		}
	}
	// Otherwise tasks of (o, a range of i) never write one element.
	var fe firstErr
	chunk := max(16, (s.I+b.workers-1)/b.workers)
	nc := (s.I + chunk - 1) / chunk
	b.parallel(s.O*nc, max(1, serialBelow/max(s.M*min(chunk, s.I), 1)), 1, func(lo, hi int) {
		for task := lo; task < hi; task++ {
			o, c := task/nc, task%nc
			base := s.DstOffset + o*x.Len*s.I
			if m, bad := scatterRange(s.Op, idx, x, o, s, dst[base:base+x.Len*s.I], val, 0, s.M, c*chunk, min((c+1)*chunk, s.I)); bad {
				fe.set(o*s.M+m, indexErr(idx, x, o, m))
				return
			}
		}
	})
	return fe.err
}

// minBucketParts is the fewest parts of a bucketed scatter: its three
// passes cost about three serial runs, so it pays from four cores on.
const minBucketParts = 4

func indexErr[T int32 | int64](idx []T, x *backend.Index, o, m int) error {
	v := int64(idx[x.Offset+o*x.Strides[0]+m*x.Strides[1]])
	return &backend.IndexError{Index: v, Axis: x.Axis, Len: x.Len}
}

// buckets is the scratch of a bucketed scatter: p parts of the rows, as
// many chunks of the updates, and the update positions grouped by part.
type buckets struct {
	p, chunk int
	mul      uint64   // part of row r: r*mul>>32
	off      []int    // [chunk*p+part]: where the chunk's updates of part go
	start    []int    // [part]: where its bucket begins; start[p] is M
	ups      []update // updates by part, each in increasing position
}

// update is a bucketed update: destination row r of the value at m.
type update struct{ r, m int32 }

// updPool keeps the bucket memory of the last scatters.
var updPool sync.Pool

func newBuckets(p, M, n int) *buckets {
	bk := &buckets{
		p: p, chunk: (M + p - 1) / p,
		mul:   uint64(p) << 32 / uint64(n),
		off:   make([]int, p*p),
		start: make([]int, p+1),
	}
	if u, ok := updPool.Get().(*[]update); ok && cap(*u) >= M {
		bk.ups = (*u)[:M]
	} else {
		bk.ups = make([]update, M)
	}
	return bk
}

func (bk *buckets) free() {
	u := bk.ups[:0]
	updPool.Put(&u)
}

// row returns the destination row of update m, or false for a bad index.
func row[T int32 | int64](idx []T, xp int, n int64) (int, bool) {
	v := int64(idx[xp])
	if v < -n || v >= n {
		return 0, false
	}
	return int(v + n&(v>>63)), true
}

// bucketed applies the updates of o with bk's parts in parallel. It
// checks every index before it writes.
func bucketed[T int32 | int64, W word](b *Backend, bk *buckets, idx []T, x *backend.Index, o int, s *backend.Scatter, dst, val []W) error {
	var fe firstErr
	p, n := bk.p, int64(x.Len)
	xp, xs := x.Offset+o*x.Strides[0], x.Strides[1]
	b.parallel(p, 1, 1, func(lo, hi int) {
		for c := lo; c < hi; c++ {
			cnt := make([]int, p)
			for m := c * bk.chunk; m < min((c+1)*bk.chunk, s.M); m++ {
				r, ok := row(idx, xp+m*xs, n)
				if !ok {
					fe.set(o*s.M+m, indexErr(idx, x, o, m))
					return
				}
				cnt[uint64(r)*bk.mul>>32]++
			}
			copy(bk.off[c*p:], cnt)
		}
	})
	if fe.err != nil {
		return fe.err
	}
	k := 0
	for q := range p {
		bk.start[q] = k
		for c := range p {
			cnt := bk.off[c*p+q]
			bk.off[c*p+q] = k
			k += cnt
		}
	}
	bk.start[p] = k
	b.parallel(p, 1, 1, func(lo, hi int) {
		for c := lo; c < hi; c++ {
			off := append([]int(nil), bk.off[c*p:(c+1)*p]...)
			for m := c * bk.chunk; m < min((c+1)*bk.chunk, s.M); m++ {
				r, _ := row(idx, xp+m*xs, n)
				q := uint64(r) * bk.mul >> 32
				bk.ups[off[q]] = update{int32(r), int32(m)}
				off[q]++
			}
		}
	})
	b.parallel(p, 1, 1, func(lo, hi int) {
		for q := lo; q < hi; q++ {
			applyUpdates(s.Op, bk.ups[bk.start[q]:bk.start[q+1]], o, x.Len, s, dst, val)
		}
	})
	return nil
}

// scatterRange applies the updates m in [lo, hi) of o to the elements
// [ilo, ihi) of rows of d, o's block of the destination. It returns the
// position of the first bad index, if any.
func scatterRange[T int32 | int64, W word](op backend.ScatterOp, idx []T, x *backend.Index, o int, s *backend.Scatter, d, val []W, lo, hi, ilo, ihi int) (int, bool) {
	n, I, vi := int64(x.Len), s.I, s.ValStrides[2]
	xp, xs := x.Offset+o*x.Strides[0], x.Strides[1]
	vp, vs := s.ValOffset+o*s.ValStrides[0]+ilo*vi, s.ValStrides[1]
	for m := lo; m < hi; m++ {
		r, ok := row(idx, xp+m*xs, n)
		if !ok {
			return m, true
		}
		apply(op, d[r*I+ilo:r*I+ihi], val, vp+m*vs, vi)
	}
	return 0, false
}

// private applies the updates of o in p chunks, each into its own copy
// of the destination starting at the identity e, then combines the copies
// in chunk order. This is exact for operations whose grouping does not
// change the result: integer addition, and the maximum (its ties and NaN
// resolve the same way). It checks every index before it writes.
func private[T int32 | int64, W word](b *Backend, p int, idx []T, x *backend.Index, o int, s *backend.Scatter, dst, val []W, e W) error {
	var fe firstErr
	size := x.Len * s.I
	chunk := (s.M + p - 1) / p
	accs := make([][]W, p)
	b.parallel(p, 1, 1, func(lo, hi int) {
		for c := lo; c < hi; c++ {
			acc := make([]W, size)
			if e != 0 {
				for i := range acc {
					acc[i] = e
				}
			}
			if m, bad := scatterRange(s.Op, idx, x, o, s, acc, val, c*chunk, min((c+1)*chunk, s.M), 0, s.I); bad {
				fe.set(o*s.M+m, indexErr(idx, x, o, m))
				return
			}
			accs[c] = acc
		}
	})
	if fe.err != nil {
		return fe.err
	}
	base := s.DstOffset + o*size
	b.parallel(size, serialBelow/4, 8, func(lo, hi int) {
		d := dst[base+lo : base+hi]
		for _, acc := range accs {
			if s.Op == backend.ScatterAdd {
				for i, a := range acc[lo:hi] {
					d[i] += a
				}
				continue
			}
			for i, a := range acc[lo:hi] {
				if a > d[i] || a != a {
					d[i] = a
				}
			}
		}
	})
	return nil
}

// identity returns the start of a private copy for op, and whether op
// on W allows private copies.
func identity[W word](op backend.ScatterOp) (W, bool) {
	var e W
	switch op {
	case backend.ScatterAdd:
		switch any(e).(type) {
		case int32, int64:
			return e, true
		}
	case backend.ScatterMax:
		switch p := any(&e).(type) {
		case *int32:
			*p = math.MinInt32
		case *int64:
			*p = math.MinInt64
		case *float32:
			*p = float32(math.Inf(-1))
		case *float64:
			*p = math.Inf(-1)
		default:
			return e, false
		}
		return e, true
	}
	return e, false
}

// applyUpdates applies bucketed updates of o to dst.
func applyUpdates[W word](op backend.ScatterOp, ups []update, o, n int, s *backend.Scatter, dst, val []W) {
	I := s.I
	vp, vs := s.ValOffset+o*s.ValStrides[0], s.ValStrides[1]
	base := s.DstOffset + o*n*I
	if I == 1 && op == backend.ScatterAdd {
		d := dst[base : base+n]
		for _, u := range ups {
			d[u.r] += val[vp+int(u.m)*vs]
		}
		return
	}
	for _, u := range ups {
		r := int(u.r)
		apply(op, dst[base+r*I:base+r*I+I], val, vp+int(u.m)*vs, s.ValStrides[2])
	}
}

// apply combines the values at v, v+vi, ... into d.
func apply[W word](op backend.ScatterOp, d, val []W, v, vi int) {
	switch op {
	case backend.ScatterAdd:
		for i := range d {
			d[i] += val[v+i*vi]
		}
	case backend.ScatterMax:
		for i := range d {
			if y := val[v+i*vi]; y > d[i] || y != y {
				d[i] = y
			}
		}
	default:
		for i := range d {
			d[i] = val[v+i*vi]
		}
	}
}

// Nonzero implements backend.Indexer: a count per chunk, then each chunk
// writes from its prefix.
func (b *Backend) Nonzero(z *backend.Nonzero) error {
	mask, out, cnt := asBuffer(z.Mask), asBuffer(z.Out), asBuffer(z.Count)
	if mask.dt != backend.Bool || out.dt != backend.Int64 || cnt.dt != backend.Int64 {
		return fmt.Errorf("cpu: nonzero of %v into %v", mask.dt, out.dt)
	}
	m := mask.b[z.MaskOffset : z.MaskOffset+z.N]
	w := max(b.workers, 1)
	chunk := max((z.N+w-1)/w, serialBelow)
	nc := (z.N + chunk - 1) / chunk
	counts := make([]int, nc+1)
	mb := boolBytes(m)
	b.parallel(nc, 1, 1, func(lo, hi int) {
		for c := lo; c < hi; c++ {
			counts[c+1] = countNonzero(mb[c*chunk : min((c+1)*chunk, z.N)])
		}
	})
	for c := 1; c <= nc; c++ {
		counts[c] += counts[c-1]
	}
	cnt.i64[z.CountOffset] = int64(counts[nc])
	if z.Cap <= 0 {
		return nil
	}
	o := out.i64[z.OutOffset:]
	b.parallel(nc, 1, 1, func(lo, hi int) {
		for c := lo; c < hi; c++ {
			if p := counts[c]; p < z.Cap {
				writeNonzero(o[p:min(counts[c+1], z.Cap)], mb[c*chunk:min((c+1)*chunk, z.N)], c*chunk)
			}
		}
	})
	return nil
}
