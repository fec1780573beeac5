package cpu

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"sync"

	"github.com/gocu-dev/gocu/array/internal/backend"
)

// part returns n elements of an operand's typed slice from its offset, or
// nil for an operand without a buffer.
func part(o backend.Operand, n int) any {
	if o.Buf == nil {
		return nil
	}
	off := o.Layout.Offset
	switch s := asBuffer(o.Buf).Slice().(type) {
	case []bool:
		return s[off : off+n]
	case []uint8:
		return s[off : off+n]
	case []int32:
		return s[off : off+n]
	case []int64:
		return s[off : off+n]
	case []float32:
		return s[off : off+n]
	case []float64:
		return s[off : off+n]
	}
	return nil
}

func i64s(o backend.Operand, n int) []int64 {
	s, _ := part(o, n).([]int64)
	return s
}

// orderKey maps a value to an unsigned integer whose order is Sort's:
// -0 before +0, NaN after +Inf (every NaN the same).
func orderKey(v any, i int) uint64 {
	switch s := v.(type) {
	case []bool:
		if s[i] {
			return 1
		}
		return 0
	case []uint8:
		return uint64(s[i])
	case []int32:
		return uint64(uint32(s[i]) ^ 1<<31)
	case []int64:
		return uint64(s[i]) ^ 1<<63
	case []float32:
		u := math.Float32bits(s[i])
		if s[i] != s[i] {
			return math.MaxUint32
		}
		if u>>31 != 0 {
			return uint64(^u)
		}
		return uint64(u | 1<<31)
	case []float64:
		u := math.Float64bits(s[i])
		if s[i] != s[i] {
			return math.MaxUint64
		}
		if u>>63 != 0 {
			return ^u
		}
		return u | 1<<63
	}
	return 0
}

type sortPair struct {
	k uint64
	p int
}

func cmpPair(a, b sortPair) int {
	if c := cmp.Compare(a.k, b.k); c != 0 {
		return c
	}
	return cmp.Compare(a.p, b.p)
}

// Sort implements backend.SortScan: rows in parallel, each by a stable
// LSD radix sort of its order keys (a comparison sort for short rows).
// The values alone of 32-bit types take sortValues32's faster path.
func (b *Backend) Sort(s *backend.Sort) error {
	dt := s.Keys.Buf.DType()
	if !backend.Sortable(dt) {
		return fmt.Errorf("cpu: sort of %v", dt)
	}
	n := s.Rows * s.Len
	if n == 0 || b.sortValues32(s) {
		return nil
	}
	keys := part(s.Keys, n)
	outK := part(s.OutKeys, n)
	vals := part(s.Vals, n)
	outV := part(s.OutVals, n)
	row := func(r int, rs *radixBufs) {
		base := r * s.Len
		p := rs.sortRow(keys, base, s.Len, dt.Size(), s.Descending)
		for i, q := range p {
			if outK != nil {
				copyElem(outK, base+i, keys, base+q)
			}
			if outV != nil {
				if vals == nil {
					outV.([]int64)[base+i] = int64(q)
				} else {
					copyElem(outV, base+i, vals, base+q)
				}
			}
		}
	}
	b.parallel(s.Rows, 1, 1, func(lo, hi int) {
		rs := newRadixBufs(s.Len)
		for r := lo; r < hi; r++ {
			row(r, rs)
		}
	})
	return nil
}

// TopK implements backend.SortScan: the first K of each row's sort, by
// selection (see topK).
func (b *Backend) TopK(t *backend.TopK) error {
	dt := t.Keys.Buf.DType()
	if !backend.Sortable(dt) {
		return fmt.Errorf("cpu: top k of %v", dt)
	}
	n := t.Rows * t.Len
	if n == 0 || t.K == 0 {
		return nil
	}
	keys := part(t.Keys, n)
	outK := part(t.OutKeys, t.Rows*t.K)
	outI := i64s(t.OutIdx, t.Rows*t.K)
	b.topK(keys, outK, outI, t.Rows, t.Len, t.K, t.Largest)
	return nil
}

// sortRow returns the stable sort positions of the row of n keys at base.
func (rs *radixBufs) sortRow(keys any, base, n, size int, desc bool) []int {
	k, p := rs.k[:n], rs.p[:n]
	for i := range k {
		k[i] = orderKey(keys, base+i)
		if desc {
			k[i] = ^k[i]
		}
		p[i] = i
	}
	if n >= 256 {
		return rs.sort(size, desc)
	}
	pairs := rs.pairs[:n]
	for i := range pairs {
		pairs[i] = sortPair{k[i], i}
	}
	slices.SortFunc(pairs, cmpPair)
	for i, q := range pairs {
		p[i] = q.p
	}
	return p
}

// radixBufs are one worker's buffers for sorting rows of up to n keys.
type radixBufs struct {
	k, k2 []uint64
	p, p2 []int
	pairs []sortPair
}

func newRadixBufs(n int) *radixBufs {
	rs := &radixBufs{k: make([]uint64, n), p: make([]int, n)}
	if n < 256 {
		rs.pairs = make([]sortPair, n)
	} else {
		rs.k2, rs.p2 = make([]uint64, n), make([]int, n)
	}
	return rs
}

// sort sorts k (with positions p) by its low 8*size bits (all of them when
// descending flipped the high ones), one byte a pass, skipping a pass
// whose byte is the same in every key, and returns the sorted positions.
func (rs *radixBufs) sort(size int, desc bool) []int {
	k, p, k2, p2 := rs.k, rs.p, rs.k2, rs.p2
	n := len(p)
	k, k2, p2 = k[:n], k2[:n], p2[:n]
	passes := size
	if desc {
		passes = 8 // the complement set the bytes above size
	}
	var cnt [256]int
	for pass := 0; pass < passes; pass++ {
		shift := uint(8 * pass)
		clear(cnt[:])
		for _, v := range k {
			cnt[byte(v>>shift)]++
		}
		if cnt[byte(k[0]>>shift)] == n {
			continue // one digit: the pass would not move anything
		}
		sum := 0
		for d := range cnt {
			c := cnt[d]
			cnt[d] = sum
			sum += c
		}
		for i, v := range k {
			d := byte(v >> shift)
			j := cnt[d]
			cnt[d]++
			k2[j] = v
			p2[j] = p[i]
		}
		k, k2 = k2, k
		p, p2 = p2, p
	}
	return p
}

// copyElem sets dst[i] = src[j] for slices of one type, a NaN becoming
// the quiet NaN (as the GPU's sort writes it).
func copyElem(dst any, i int, src any, j int) {
	switch d := dst.(type) {
	case []bool:
		d[i] = src.([]bool)[j]
	case []uint8:
		d[i] = src.([]uint8)[j]
	case []int32:
		d[i] = src.([]int32)[j]
	case []int64:
		d[i] = src.([]int64)[j]
	case []float32:
		v := src.([]float32)[j]
		if v != v {
			v = float32(math.NaN())
		}
		d[i] = v
	case []float64:
		v := src.([]float64)[j]
		if v != v {
			v = math.NaN()
		}
		d[i] = v
	}
}

type ssNum interface {
	~uint8 | ~int32 | ~int64 | ~float32 | ~float64
}

func isNaN[T ssNum](v T) bool { return v != v }

func scanOp[T ssNum](k backend.ScanKind) func(a, b T) T {
	switch k {
	case backend.CumSum:
		return func(a, b T) T { return a + b }
	case backend.CumProd:
		return func(a, b T) T { return a * b }
	case backend.CumMax:
		return func(a, b T) T {
			if isNaN(a) || a >= b {
				return a
			}
			return b
		}
	}
	return func(a, b T) T {
		if isNaN(a) || a <= b {
			return a
		}
		return b
	}
}

// Scan implements backend.SortScan.
func (b *Backend) Scan(s *backend.Scan) error {
	n := s.Outer * s.Len * s.Inner
	if n == 0 {
		return nil
	}
	switch in := part(s.In, n).(type) {
	case []uint8:
		scanRows(b, s, in, part(s.Out, n).([]uint8))
	case []int32:
		scanRows(b, s, in, part(s.Out, n).([]int32))
	case []int64:
		scanRows(b, s, in, part(s.Out, n).([]int64))
	case []float32:
		scanRows(b, s, in, part(s.Out, n).([]float32))
	case []float64:
		scanRows(b, s, in, part(s.Out, n).([]float64))
	default:
		return fmt.Errorf("cpu: scan of %v", s.In.Buf.DType())
	}
	return nil
}

func scanRows[T ssNum](b *Backend, s *backend.Scan, in, out []T) {
	L, I := s.Len, s.Inner
	step := I
	if s.Reverse {
		step = -I
	}
	// first is the index of step 0 of the line of (o, j).
	first := func(o, j int) int {
		if s.Reverse {
			return (o*L+L-1)*I + j
		}
		return o*L*I + j
	}
	if s.Outer == 1 && I == 1 && L >= 1<<16 && b.workers > 1 {
		scanFlat(b, s.Kind, in, out, first(0, 0), step, L)
		return
	}
	b.parallel(s.Outer*I, max(1, 4096/max(L, 1)), 1, func(lo, hi int) {
		for t := lo; t < hi; t++ {
			o, j := t/I, t%I
			scanLine(s.Kind, in, out, first(o, j), step, L)
		}
	})
}

// scanLine scans n elements from index at, step apart.
func scanLine[T ssNum](k backend.ScanKind, in, out []T, at, step, n int) {
	if n == 0 {
		return
	}
	acc := in[at]
	out[at] = acc
	i := at
	switch k {
	case backend.CumSum:
		for range n - 1 {
			i += step
			acc += in[i]
			out[i] = acc
		}
	case backend.CumProd:
		for range n - 1 {
			i += step
			acc *= in[i]
			out[i] = acc
		}
	case backend.CumMax:
		for range n - 1 {
			i += step
			if v := in[i]; !isNaN(acc) && (v > acc || isNaN(v)) {
				acc = v
			}
			out[i] = acc
		}
	default:
		for range n - 1 {
			i += step
			if v := in[i]; !isNaN(acc) && (v < acc || isNaN(v)) {
				acc = v
			}
			out[i] = acc
		}
	}
}

// scanFlat scans one long line on all workers: each scans its chunk, the
// chunk totals are combined in order, and each chunk then folds in the
// total of the chunks before it.
func scanFlat[T ssNum](b *Backend, k backend.ScanKind, in, out []T, at, step, n int) {
	w := b.workers
	chunk := (n + w - 1) / w
	op := scanOp[T](k)
	var wg sync.WaitGroup
	for c := 0; c*chunk < n; c++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			lo := c * chunk
			scanLine(k, in, out, at+lo*step, step, min(chunk, n-lo))
		}()
	}
	wg.Wait()
	var pre []T
	for c := 0; (c+1)*chunk < n; c++ {
		last := out[at+(min((c+1)*chunk, n)-1)*step]
		if c > 0 {
			last = op(pre[c-1], last)
		}
		pre = append(pre, last)
	}
	for c := 1; c*chunk < n; c++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p := pre[c-1]
			for q := c * chunk; q < min((c+1)*chunk, n); q++ {
				i := at + q*step
				out[i] = op(p, out[i])
			}
		}()
	}
	wg.Wait()
}

// searchLess is NumPy's order for searching: NaN after everything.
func searchLess[T ssNum](a, b T) bool { return a < b || (isNaN(b) && !isNaN(a)) }

// Search implements backend.SortScan.
func (b *Backend) Search(s *backend.Search) error {
	if s.N == 0 {
		return nil
	}
	out := i64s(s.Out, s.N)
	switch a := part(s.Sorted, s.Len).(type) {
	case []uint8:
		search(b, s, a, part(s.Values, s.N).([]uint8), out)
	case []int32:
		search(b, s, a, part(s.Values, s.N).([]int32), out)
	case []int64:
		search(b, s, a, part(s.Values, s.N).([]int64), out)
	case []float32:
		search(b, s, a, part(s.Values, s.N).([]float32), out)
	case []float64:
		search(b, s, a, part(s.Values, s.N).([]float64), out)
	default:
		return fmt.Errorf("cpu: search of %v", s.Sorted.Buf.DType())
	}
	return nil
}

func search[T ssNum](b *Backend, s *backend.Search, a, v []T, out []int64) {
	b.parallel(len(v), 1024, 1, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			x := v[i]
			l, h := 0, len(a)
			for l < h {
				m := int(uint(l+h) >> 1)
				// Left: first a[m] >= x; right: first a[m] > x.
				var before bool
				if s.Right {
					before = !searchLess(x, a[m])
				} else {
					before = searchLess(a[m], x)
				}
				if before {
					l = m + 1
				} else {
					h = m
				}
			}
			out[i] = int64(l)
		}
	})
}

// Histogram implements backend.SortScan: private counts per worker, added
// at the end.
func (b *Backend) Histogram(h *backend.Histogram) error {
	if h.Bins == 0 || h.N == 0 {
		switch o := part(h.Out, h.Bins).(type) {
		case []int64:
			clear(o)
		case []float64:
			clear(o)
		}
		return nil
	}
	w, _ := part(h.Weights, h.N).([]float64)
	var bin func(i int) int
	switch x := part(h.In, h.N).(type) {
	case []bool:
		bin = func(i int) int {
			if x[i] {
				return 1
			}
			return 0
		}
	case []uint8:
		bin = func(i int) int { return int(x[i]) }
	case []int32:
		bin = func(i int) int { return int(x[i]) }
	case []int64:
		bin = func(i int) int {
			if x[i] < 0 || x[i] >= int64(h.Bins) {
				return -1
			}
			return int(x[i])
		}
	case []float32:
		bin = func(i int) int { return histBin(float64(x[i]), h) }
	case []float64:
		bin = func(i int) int { return histBin(x[i], h) }
	default:
		return fmt.Errorf("cpu: histogram of %v", h.In.Buf.DType())
	}
	var mu sync.Mutex
	cnt := make([]int64, h.Bins)
	sum := make([]float64, h.Bins)
	b.parallel(h.N, 1<<14, 1, func(lo, hi int) {
		c := make([]int64, h.Bins)
		var s []float64
		if w != nil {
			s = make([]float64, h.Bins)
		}
		for i := lo; i < hi; i++ {
			k := bin(i)
			if k < 0 || k >= h.Bins {
				continue
			}
			if w != nil {
				s[k] += w[i]
			} else {
				c[k]++
			}
		}
		mu.Lock()
		for k := range c {
			cnt[k] += c[k]
			if w != nil {
				sum[k] += s[k]
			}
		}
		mu.Unlock()
	})
	if w != nil {
		copy(part(h.Out, h.Bins).([]float64), sum)
	} else {
		copy(i64s(h.Out, h.Bins), cnt)
	}
	return nil
}

// histBin is NumPy's bin of x for evenly split [Lo, Hi], or -1: the
// computed index corrected by comparing with the bin edges.
func histBin(x float64, h *backend.Histogram) int {
	lo, hi, n := h.Lo, h.Hi, h.Bins
	if !(x >= lo && x <= hi) {
		return -1
	}
	k := int((x - lo) * (float64(n) / (hi - lo)))
	if k >= n {
		k = n - 1
	}
	if k > 0 && x < HistEdge(lo, hi, n, k) {
		k--
	} else if k < n-1 && x >= HistEdge(lo, hi, n, k+1) {
		k++
	}
	return k
}

// HistEdge is edge k of n even bins over [lo, hi], as NumPy's linspace
// computes it.
func HistEdge(lo, hi float64, n, k int) float64 {
	if k == n {
		return hi
	}
	return lo + float64(k)*((hi-lo)/float64(n))
}

// Unique implements backend.SortScan.
func (b *Backend) Unique(u *backend.Unique) error {
	n := u.N
	sorted := part(u.Sorted, n)
	perm := i64s(u.Perm, n)
	vals := part(u.Values, u.Cap)
	index := i64s(u.Index, u.Cap)
	counts := i64s(u.Counts, u.Cap)
	inv := i64s(u.Inverse, n)
	g, done := uniqueValues(sorted, vals, n, u.Cap, index == nil && counts == nil && inv == nil)
	for i := 0; i < n && !done; i++ {
		if i == 0 || !sameValue(sorted, i, i-1) {
			g++
			if g < u.Cap {
				if vals != nil {
					copyElem(vals, g, sorted, i)
				}
				if index != nil {
					index[g] = math.MaxInt64
				}
				if counts != nil {
					counts[g] = 0
				}
			}
		}
		if g < u.Cap {
			if index != nil {
				index[g] = min(index[g], perm[i])
			}
			if counts != nil {
				counts[g]++
			}
		}
		if inv != nil {
			inv[perm[i]] = int64(g)
		}
	}
	for k := g + 1; k < u.Cap && !u.NoFill; k++ {
		if vals != nil {
			setScalar(vals, k, u.Fill)
		}
		if index != nil {
			index[k] = 0
		}
		if counts != nil {
			counts[k] = 0
		}
	}
	if c := i64s(u.Count, 1); c != nil {
		c[0] = int64(g + 1)
	}
	return nil
}

// sameValue reports whether s[i] and s[j] are equal for Unique.
func sameValue(s any, i, j int) bool {
	switch v := s.(type) {
	case []float32:
		return v[i] == v[j] || (v[i] != v[i] && v[j] != v[j])
	case []float64:
		return v[i] == v[j] || (v[i] != v[i] && v[j] != v[j])
	}
	return orderKey(s, i) == orderKey(s, j)
}

func setScalar(dst any, i int, v backend.Scalar) {
	switch d := dst.(type) {
	case []bool:
		d[i] = v.Float() != 0
	case []uint8:
		d[i] = uint8(v.I)
	case []int32:
		d[i] = int32(v.I)
	case []int64:
		d[i] = v.I
	case []float32:
		d[i] = float32(v.Float())
	case []float64:
		d[i] = v.Float()
	}
}
