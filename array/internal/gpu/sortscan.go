package gpu

import (
	"fmt"
	"math"
	"math/bits"

	"github.com/gocu-dev/gocu/array/internal/backend"
	"github.com/gocu-dev/gocu/array/internal/cudagen"
	"github.com/gocu-dev/gocu/cuda"
)

// The sort, scan, search, histogram and unique requests launch the
// hand-written kernels of cudagen's sortscan.go directly: each is a fixed
// short sequence whose scratch the stream-ordered allocator provides.

// ssLimit is the most elements a sort, scan or unique takes: positions
// and digit counts are 32-bit.
const ssLimit = math.MaxInt32

// ssLaunch queues kernel k on grid blocks with the arguments' bits.
func (b *Backend) ssLaunch(k *cudagen.Kernel, grid int, args ...uint64) error {
	if grid < 1 || grid > math.MaxInt32 {
		return fmt.Errorf("gpu: %s: grid of %d blocks", k.Name, grid)
	}
	cfg := cuda.Config{Grid: cuda.Dim3{X: uint32(grid), Y: 1, Z: 1}, Block: cuda.Dim3{X: uint32(k.Block), Y: 1, Z: 1}, Stream: b.stream}
	for try := 0; ; try++ {
		f, err := b.ssFunc(k, try > 0)
		if err != nil {
			return err
		}
		b.mu.Lock()
		if f.mod.dead.Load() && try < 3 {
			b.mu.Unlock()
			continue // evicted between loading and launching
		}
		err = launch(f.fn, &cfg, args)
		b.mu.Unlock()
		return b.note(err)
	}
}

// ssFunc returns k loaded, from b.ssFuncs unless reload is set or the
// module was evicted: cudagen keeps one Kernel per specialisation, so a
// launch need not hash the source to find its module.
func (b *Backend) ssFunc(k *cudagen.Kernel, reload bool) (*kfunc, error) {
	key := k
	if v, ok := b.ssFuncs.Load(key); ok && !reload && !v.(*kfunc).mod.dead.Load() {
		return v.(*kfunc), nil
	}
	f, err := b.load(k)
	if err != nil {
		return nil, err
	}
	b.ssFuncs.Store(key, f)
	return f, nil
}

// strideGrid is the grid of a grid-stride kernel over n elements.
func (b *Backend) strideGrid(n int) int {
	return max(1, min((n+255)/256, 8*max(b.sms, 1)))
}

// addr is the device address of an operand's first element, 0 without a
// buffer.
func (b *Backend) addr(o backend.Operand) (uint64, error) {
	if o.Buf == nil {
		return 0, nil
	}
	g, err := b.buf(o.Buf)
	if err != nil {
		return 0, err
	}
	return g.ptr + uint64(o.Layout.Offset*g.dt.Size()), nil
}

// temp allocates a scratch buffer and returns it with its address.
func (b *Backend) temp(dt backend.DType, n int, keep *[]backend.Buffer) (uint64, error) {
	buf, err := b.Alloc(dt, max(n, 1))
	if err != nil {
		return 0, err
	}
	*keep = append(*keep, buf)
	return buf.(*Buffer).ptr, nil
}

func (b *Backend) freeAll(bufs []backend.Buffer) {
	for _, x := range bufs {
		b.Free(x) // stream-ordered: after the kernels that use it
	}
}

func ll(v int) uint64 { return uint64(int64(v)) }

func flag(v bool) uint64 {
	if v {
		return 1
	}
	return 0
}

// zero clears n 4-byte words at p.
func (b *Backend) zero4(p uint64, n int) error {
	if n == 0 {
		return nil
	}
	return b.ssLaunch(cudagen.ZeroKernel(), b.strideGrid(n), p, ll(n))
}

// Sort implements backend.SortScan: the LSD radix sort.
func (b *Backend) Sort(s *backend.Sort) error {
	if err := b.failed(); err != nil {
		return err
	}
	dt := s.Keys.Buf.DType()
	if !backend.Sortable(dt) {
		return fmt.Errorf("gpu: sort of %v", dt)
	}
	n := s.Rows * s.Len
	if n == 0 {
		return nil
	}
	if n > ssLimit {
		return fmt.Errorf("gpu: sort of %d elements (at most %d): %w", n, ssLimit, backend.ErrUnsupported)
	}
	vsize := 8
	if s.Vals.Buf != nil {
		vsize = s.Vals.Buf.DType().Size()
	}
	// Rows of at least half a tile are sorted apart (segmented): their
	// tiles do not cross rows. Shorter ones are sorted together, the row
	// as the most significant digits.
	seg := s.Rows > 1 && s.Len >= cudagen.SortTile/2
	type pass struct{ shift, byRow int }
	var passes []pass
	for by := 0; by < dt.Size(); by++ {
		passes = append(passes, pass{8 * by, 0})
	}
	rpass := 0
	for sh := 0; !seg && sh < bits.Len(uint(s.Rows-1)); sh += 8 {
		passes = append(passes, pass{sh, 1})
		rpass++
	}
	wide := n >= 1<<30 // 32-bit statuses hold counts below 2^30
	ks := cudagen.SortKernels(dt, vsize, wide)
	keys, err := b.addr(s.Keys)
	if err != nil {
		return err
	}
	var tmp []backend.Buffer
	defer func() { b.freeAll(tmp) }()
	kdt := backend.Int32
	if dt.Size() == 8 {
		kdt = backend.Int64
	}
	nb, tpr := (n+cudagen.SortTile-1)/cudagen.SortTile, 0
	if seg {
		tpr = (s.Len + cudagen.SortTile - 1) / cudagen.SortTile
		nb = s.Rows * tpr
	}
	var k, p [2]uint64
	keysOnly := (s.Rows == 1 || seg) && s.OutVals.Buf == nil // no positions to carry
	for i := range 2 {
		if k[i], err = b.temp(kdt, n, &tmp); err != nil {
			return err
		}
		if !keysOnly {
			if p[i], err = b.temp(backend.Int32, n, &tmp); err != nil {
				return err
			}
		}
	}
	// The look-back statuses of the passes (two sets, used in turn) and
	// after them each set's tile ticket.
	stWords := nb*256 + 1
	sdt := backend.Int32
	if wide {
		sdt = backend.Int64
		stWords *= 2
	}
	var st [2]uint64
	for i := range st {
		if st[i], err = b.temp(sdt, nb*256+1, &tmp); err != nil {
			return err
		}
	}
	ctl, err := b.temp(backend.Int32, 32, &tmp)
	if err != nil {
		return err
	}
	if err := b.zero4(st[0], stWords); err != nil {
		return err
	}
	// One pass counts the digits of every pass; plan turns the counts into
	// offsets and skips the passes whose digit is the same in every key. A
	// segmented sort counts and plans by row. The first pass that runs
	// reads the input keys.
	var goff uint64
	gstride := 0
	if seg {
		gstride = dt.Size() * 256
		if goff, err = b.temp(backend.Int32, s.Rows*gstride, &tmp); err != nil {
			return err
		}
		if err := b.zero4(goff, s.Rows*gstride); err != nil {
			return err
		}
		const clen = 32768
		cpr := (s.Len + clen - 1) / clen
		if err := b.ssLaunch(ks.RHist, s.Rows*cpr, keys, ll(s.Len), flag(s.Descending), goff, ll(cpr), clen); err != nil {
			return err
		}
		if err := b.ssLaunch(ks.RPlan, s.Rows, goff, ll(s.Len), ctl); err != nil {
			return err
		}
	} else {
		ghist, err := b.temp(backend.Int32, len(passes)*256, &tmp)
		if err != nil {
			return err
		}
		if goff, err = b.temp(backend.Int32, len(passes)*256, &tmp); err != nil {
			return err
		}
		if err := b.zero4(ghist, len(passes)*256); err != nil {
			return err
		}
		grid := max(1, min((n+255)/256/16, 8*max(b.sms, 1)))
		if err := b.ssLaunch(ks.GHist, grid, keys, ll(n), flag(s.Descending), ghist, ll(s.Len), ll(rpass)); err != nil {
			return err
		}
		if err := b.ssLaunch(ks.Plan, 1, ghist, ll(n), ll(len(passes)), ctl, goff); err != nil {
			return err
		}
	}
	outk, err := b.addr(s.OutKeys)
	if err != nil {
		return err
	}
	outv, err := b.addr(s.OutVals)
	if err != nil {
		return err
	}
	vals, err := b.addr(s.Vals)
	if err != nil {
		return err
	}
	var outp uint64
	if s.Vals.Buf == nil {
		outp, outv = outv, 0
	}
	desc := flag(s.Descending)
	for pi, ps := range passes {
		if err := b.ssLaunch(ks.Pass, nb, keys, k[0], k[1], p[0], p[1], goff, st[0], st[1], ll(n), ll(ps.shift), ll(ps.byRow), ll(s.Len), ctl, ll(pi), ll(nb),
			outk, outp, vals, outv, desc, ll(tpr), ll(gstride)); err != nil {
			return err
		}
	}
	// The last pass that runs writes the results; finish does when none runs.
	return b.ssLaunch(ks.Finish, b.strideGrid(n), keys, outk, outp, vals, outv, ll(n), ll(s.Len), ctl)
}

// Scan implements backend.SortScan.
func (b *Backend) Scan(s *backend.Scan) error {
	if err := b.failed(); err != nil {
		return err
	}
	n := s.Outer * s.Len * s.Inner
	if n == 0 {
		return nil
	}
	dt := s.In.Buf.DType()
	switch dt {
	case backend.Uint8, backend.Int32, backend.Int64, backend.Float32, backend.Float64:
	default:
		return fmt.Errorf("gpu: scan of %v", dt)
	}
	in, err := b.addr(s.In)
	if err != nil {
		return err
	}
	out, err := b.addr(s.Out)
	if err != nil {
		return err
	}
	if s.Inner > 1 {
		k := cudagen.ScanKernels(dt, s.Kind).Cols
		return b.ssLaunch(k, b.strideGrid(s.Outer*s.Inner), in, out, ll(s.Outer), ll(s.Len), ll(s.Inner), flag(s.Reverse))
	}
	return b.scanRaw(dt, s.Kind, in, out, s.Outer, s.Len, s.Reverse)
}

// scanRaw scans rows of len elements at device address in into out with
// the single-pass look-back kernel.
func (b *Backend) scanRaw(dt backend.DType, kind backend.ScanKind, in, out uint64, rows, len int, rev bool) error {
	return b.scanWith(cudagen.ScanKernels(dt, kind), dt, in, out, rows, len, rev)
}

// scanWith is scanRaw with the kernels ks, whose results have dtype dt.
func (b *Backend) scanWith(ks cudagen.ScanSet, dt backend.DType, in, out uint64, rows, len int, rev bool) error {
	per := (len + ks.Tile - 1) / ks.Tile
	tiles := rows * per
	if tiles > ssLimit {
		return fmt.Errorf("gpu: scan of %d tiles: %w", tiles, backend.ErrUnsupported)
	}
	var tmp []backend.Buffer
	defer func() { b.freeAll(tmp) }()
	st, err := b.temp(backend.Int64, tiles+1, &tmp) // the statuses and the ticket
	if err != nil {
		return err
	}
	var aux uint64
	if !ks.Packed {
		if aux, err = b.temp(dt, 2*tiles, &tmp); err != nil {
			return err
		}
	}
	if err := b.zero4(st, 2*(tiles+1)); err != nil {
		return err
	}
	return b.ssLaunch(ks.Rows, tiles, in, out, ll(len), ll(per), flag(rev), ll(tiles), st, aux)
}

// Search implements backend.SortScan.
func (b *Backend) Search(s *backend.Search) error {
	if err := b.failed(); err != nil {
		return err
	}
	if s.N == 0 {
		return nil
	}
	dt := s.Sorted.Buf.DType()
	if dt == backend.Bool || !backend.Sortable(dt) {
		return fmt.Errorf("gpu: search of %v", dt)
	}
	a, err := b.addr(s.Sorted)
	if err != nil {
		return err
	}
	v, err := b.addr(s.Values)
	if err != nil {
		return err
	}
	out, err := b.addr(s.Out)
	if err != nil {
		return err
	}
	return b.ssLaunch(cudagen.SearchKernel(dt), b.strideGrid(s.N), a, ll(s.Len), v, ll(s.N), flag(s.Right), out)
}

// Histogram implements backend.SortScan.
func (b *Backend) Histogram(h *backend.Histogram) error {
	if err := b.failed(); err != nil {
		return err
	}
	out, err := b.addr(h.Out)
	if err != nil {
		return err
	}
	if err := b.zero4(out, 2*h.Bins); err != nil {
		return err
	}
	if h.N == 0 || h.Bins == 0 {
		return nil
	}
	dt := h.In.Buf.DType()
	if dt == backend.Bool || !backend.Sortable(dt) {
		return fmt.Errorf("gpu: histogram of %v", dt)
	}
	in, err := b.addr(h.In)
	if err != nil {
		return err
	}
	w, err := b.addr(h.Weights)
	if err != nil {
		return err
	}
	cnt, sum := out, uint64(0)
	if w != 0 {
		cnt, sum = 0, out
	}
	k := cudagen.HistKernel(dt, w != 0)
	grid := b.strideGrid(h.N)
	if w == 0 && h.Bins <= cudagen.HistShared {
		grid = max(1, min((h.N+255)/256/16, 4*max(b.sms, 1))) // fewer blocks: each flushes its bins
	}
	return b.ssLaunch(k, grid, in, ll(h.N), w, cnt, sum, ll(h.Bins), math.Float64bits(h.Lo), math.Float64bits(h.Hi))
}

// Unique implements backend.SortScan.
func (b *Backend) Unique(u *backend.Unique) error {
	if err := b.failed(); err != nil {
		return err
	}
	n := u.N
	if n > ssLimit {
		return fmt.Errorf("gpu: unique of %d elements: %w", n, backend.ErrUnsupported)
	}
	dt := u.Sorted.Buf.DType()
	ks := cudagen.UniqueKernels(dt)
	var addrs [7]uint64
	for i, o := range []backend.Operand{u.Sorted, u.Perm, u.Count, u.Values, u.Index, u.Counts, u.Inverse} {
		a, err := b.addr(o)
		if err != nil {
			return err
		}
		addrs[i] = a
	}
	sorted, perm, count, vals, index, counts, inv := addrs[0], addrs[1], addrs[2], addrs[3], addrs[4], addrs[5], addrs[6]
	var tmp []backend.Buffer
	defer func() { b.freeAll(tmp) }()
	if count == 0 {
		c, err := b.temp(backend.Int64, 1, &tmp)
		if err != nil {
			return err
		}
		count = c
	}
	if n == 0 {
		if err := b.zero4(count, 2); err != nil {
			return err
		}
	} else {
		g, err := b.temp(backend.Int32, n, &tmp)
		if err != nil {
			return err
		}
		starts, err := b.temp(backend.Int64, u.Cap+1, &tmp)
		if err != nil {
			return err
		}
		grid := b.strideGrid(n)
		// g[i]: the group of element i, from 1 (a scan of first-of-run flags).
		if err := b.scanWith(ks.Groups, backend.Int32, sorted, g, 1, n, false); err != nil {
			return err
		}
		if err := b.ssLaunch(ks.Scatter, grid, sorted, perm, g, ll(n), ll(u.Cap), vals, starts, inv, count); err != nil {
			return err
		}
		if u.Cap == 0 {
			return nil
		}
		return b.ssLaunch(ks.Finish, b.strideGrid(u.Cap), perm, starts, count, ll(n), ll(u.Cap), vals, index, counts,
			math.Float64bits(u.Fill.Float()), uint64(fillInt(u.Fill)), flag(!u.NoFill))
	}
	if u.Cap == 0 {
		return nil
	}
	// No groups: every slot is filler (starts is never read).
	return b.ssLaunch(ks.Finish, b.strideGrid(u.Cap), 0, 0, count, 0, ll(u.Cap), vals, index, counts,
		math.Float64bits(u.Fill.Float()), uint64(fillInt(u.Fill)), flag(!u.NoFill))
}

func fillInt(s backend.Scalar) int64 {
	if s.DType.IsFloating() {
		return int64(s.F)
	}
	return s.I
}

// TopK implements backend.SortScan: the radix-select kernel, one block a
// row when the rows fit a block's segment; otherwise rounds of one block a
// segment, each leaving K candidates a segment, until they do.
func (b *Backend) TopK(t *backend.TopK) error {
	if err := b.failed(); err != nil {
		return err
	}
	dt := t.Keys.Buf.DType()
	if !backend.Sortable(dt) || t.K > backend.TopKMax {
		return fmt.Errorf("gpu: top %d of %v", t.K, dt)
	}
	if t.Rows*t.Len == 0 || t.K == 0 {
		return nil
	}
	in, err := b.addr(t.Keys)
	if err != nil {
		return err
	}
	outk, err := b.addr(t.OutKeys)
	if err != nil {
		return err
	}
	outi, err := b.addr(t.OutIdx)
	if err != nil {
		return err
	}
	k := cudagen.TopKKernel(dt)
	largest := flag(t.Largest)
	seg := cudagen.TopKSeg(dt) // at least 2K: each round shrinks the rows
	var tmp []backend.Buffer
	defer func() { b.freeAll(tmp) }()
	kdt := backend.Int32
	if dt.Size() == 8 {
		kdt = backend.Int64
	}
	var ck, ci uint64
	for n := t.Len; ; {
		if n <= seg {
			return b.ssLaunch(k, t.Rows, in, ck, ci, ll(n), ll(n), 1, ll(t.K), largest, 0, 0, outk, outi)
		}
		segs := (n + seg - 1) / seg
		nc := t.Rows * segs * t.K
		ck2, err := b.temp(kdt, nc, &tmp)
		if err != nil {
			return err
		}
		ci2, err := b.temp(backend.Int64, nc, &tmp)
		if err != nil {
			return err
		}
		if err := b.ssLaunch(k, t.Rows*segs, in, ck, ci, ll(n), ll(seg), ll(segs), ll(t.K), largest, ck2, ci2, 0, 0); err != nil {
			return err
		}
		in, ck, ci, n = 0, ck2, ci2, segs*t.K
	}
}
