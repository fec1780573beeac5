package frame

import (
	"math"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/gocu-dev/gocu"
	"github.com/gocu-dev/gocu/array"
)

// Group-by on the CPU for keys of small integer range (integers less
// their minimum, string and categorical codes, several such keys
// combined): the rows' codes index per-range accumulators directly, with
// no hash table, no sort and no intermediate arrays.
//
// Summation order: the rows split into hostParts(n, g) ranges, a number
// fixed by the rows and the code space alone. Each range adds its rows in
// row order; the ranges' partial results are then added in range order.
// A float sum thus depends neither on the cores nor on the scheduling.

// hostCodeLimit is the largest code space the CPU path indexes directly.
const hostCodeLimit = 1 << 22

// hostParts is the number of row ranges for n rows and g codes: enough
// for every core, few enough that the accumulators stay small.
func hostParts(n, g int) int {
	p := min(16, max(1, n>>16))
	return max(1, min(p, hostCodeLimit/max(g, 1)))
}

// hostRun runs fn(p) for p in [0, parts) on all cores.
func hostRun(parts int, fn func(p int)) {
	w := min(runtime.GOMAXPROCS(0), parts)
	if w <= 1 {
		for p := range parts {
			fn(p)
		}
		return
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for range w {
		wg.Go(func() {
			for p := int(next.Add(1) - 1); p < parts; p = int(next.Add(1) - 1) {
				fn(p)
			}
		})
	}
	wg.Wait()
}

// span is the rows [lo, hi) of range p of parts.
func span(n, parts, p int) (int, int) { return p * n / parts, (p + 1) * n / parts }

// hostKey is a key column read for the CPU path: its values (int32 or
// int64) less lo are its codes in [0, size); rows where null is true have
// none.
type hostKey struct {
	vals any
	null []bool
	lo   int64
	size int
}

// hostInts returns a's values as []int32 or []int64 (ok false for other
// dtypes that do not fit an int64).
func hostInts(a *array.Array) (any, bool, error) {
	switch a.DType() {
	case array.Int32:
		v, err := a.Int32s()
		return v, true, err
	case array.Int64:
		v, err := a.Int64s()
		return v, true, err
	case array.Int8, array.Int16, array.Uint8, array.Uint16, array.Uint32, array.Bool:
		v, err := array.ToSlice[int64](a)
		return v, true, err
	}
	return nil, false, nil
}

// rangeOf returns the smallest and largest of v where null is not true,
// and whether there is one.
func rangeOf[K int32 | int64](v []K, null []bool) (lo, hi int64, any bool) {
	parts := hostParts(len(v), 1)
	los, his, has := make([]int64, parts), make([]int64, parts), make([]bool, parts)
	hostRun(parts, func(p int) {
		a, b := span(len(v), parts, p)
		l, h, ok := int64(math.MaxInt64), int64(math.MinInt64), false
		for i := a; i < b; i++ {
			if null != nil && null[i] {
				continue
			}
			x := int64(v[i])
			l, h, ok = min(l, x), max(h, x), true
		}
		los[p], his[p], has[p] = l, h, ok
	})
	lo, hi = math.MaxInt64, math.MinInt64
	for p := range parts {
		if has[p] {
			lo, hi, any = min(lo, los[p]), max(hi, his[p]), true
		}
	}
	return lo, hi, any
}

// readKey reads a key column for the CPU path; ok is false when its
// values do not have a small integer range.
func readKey(s *Series, keepNulls bool) (k hostKey, ok bool, err error) {
	var a *array.Array
	switch s.kind {
	case String, Categorical:
		c, err := s.sortedCodes()
		if err != nil {
			return k, false, err
		}
		a = c.data
	case Number:
		a = s.data
	default:
		return k, false, nil
	}
	if k.vals, ok, err = hostInts(a); !ok || err != nil {
		return k, false, err
	}
	if s.valid != nil {
		v, err := s.valid.Bools()
		if err != nil {
			return k, false, err
		}
		k.null = make([]bool, len(v))
		hostChunks(len(v), func(lo, hi int) {
			for i := lo; i < hi; i++ {
				k.null[i] = !v[i]
			}
		})
	}
	var hi int64
	var some bool
	switch v := k.vals.(type) {
	case []int32:
		k.lo, hi, some = rangeOf(v, k.null)
	case []int64:
		k.lo, hi, some = rangeOf(v, k.null)
	}
	if !some {
		return k, false, nil // only nulls: the general path
	}
	if r := uint64(hi - k.lo); r >= hostCodeLimit {
		return k, false, nil
	}
	k.size = int(hi-k.lo) + 1
	if k.null != nil && keepNulls {
		k.size++ // nulls after the values
	}
	return k, true, nil
}

// codesOf writes into c the codes of key k combined with those already
// in c (c*k.size + code, or code when first); dropped rows get -1.
func codesOf[K int32 | int64](c []int32, v []K, k hostKey, keepNulls, first bool) {
	null := int32(-1)
	if keepNulls {
		null = int32(k.size - 1)
	}
	hostChunks(len(v), func(a, b int) {
		for i := a; i < b; i++ {
			if !first && c[i] < 0 {
				continue
			}
			code := int32(int64(v[i]) - k.lo)
			if k.null != nil && k.null[i] {
				if code = null; code < 0 {
					c[i] = -1
					continue
				}
			}
			if first {
				c[i] = code
			} else {
				c[i] = c[i]*int32(k.size) + code
			}
		}
	})
}

// hostCodes combines the keys' codes into one per row, -1 for dropped
// rows.
func hostCodes(keys []hostKey, keepNulls bool, n int) []int32 {
	c := make([]int32, n)
	for i, k := range keys {
		switch v := k.vals.(type) {
		case []int32:
			codesOf(c, v, k, keepNulls, i == 0)
		case []int64:
			codesOf(c, v, k, keepNulls, i == 0)
		}
	}
	return c
}

// need is what a pass over a value column computes per code.
type need struct{ rows, cnt, sum, min, max, ss bool }

// acc is what a pass computes, per code, for one range of rows.
type acc[A int64 | float64] struct {
	rows, cnt     []int64 // rows of each code, values present
	sum, min, max []A
	s1, ss        []float64 // sums of x-shift and of its squares
}

// countRows returns the rows of each code, on all cores.
func countRows[K int32 | int64](key []K, lo int64, size, parts int) []int64 {
	n := len(key)
	ps := make([][]int64, parts)
	hostRun(parts, func(p int) {
		s := make([]int64, size)
		a, b := span(n, parts, p)
		for i := a; i < b; i++ {
			if c := int64(key[i]) - lo; c >= 0 {
				s[c]++
			}
		}
		ps[p] = s
	})
	sizes := ps[0]
	for _, s := range ps[1:] {
		for c, k := range s {
			sizes[c] += k
		}
	}
	return sizes
}

// hostFirst returns the first row of each of the ng codes present,
// indexed by code, scanning only until it has seen them all.
func hostFirst[K int32 | int64](key []K, lo int64, sizes []int64, ng int) []int64 {
	first := make([]int64, len(sizes))
	for i := range first {
		first[i] = -1
	}
	for i, seen := 0, 0; seen < ng && i < len(key); i++ {
		if c := int64(key[i]) - lo; c >= 0 && first[c] < 0 {
			first[c] = int64(i)
			seen++
		}
	}
	return first
}

// accum runs one pass over rows [a, b) of x (present where valid, unless
// nil, and not NaN) into r.
func accum[K int32 | int64, V int32 | int64 | float32 | float64, A int64 | float64](key []K, lo int64, x []V, valid []bool, a, b int, nd need, shift []float64, r *acc[A]) {
	if valid == nil && nd == (need{rows: true, sum: true}) {
		for i := a; i < b; i++ {
			if c := int64(key[i]) - lo; c >= 0 {
				r.rows[c]++
				if v := x[i]; v == v {
					r.sum[c] += A(v)
				}
			}
		}
		return
	}
	if valid == nil && nd == (need{sum: true}) {
		// The common sum of a column without nulls: a tight loop (a NaN
		// adds nothing to a float sum of values present, so skip those).
		for i := a; i < b; i++ {
			if c := int64(key[i]) - lo; c >= 0 {
				if v := x[i]; v == v {
					r.sum[c] += A(v)
				}
			}
		}
		return
	}
	if valid == nil && !nd.cnt && !nd.sum && nd.min && nd.max {
		for i := a; i < b; i++ {
			if c := int64(key[i]) - lo; c >= 0 {
				if nd.rows {
					r.rows[c]++
				}
				if v := x[i]; v == v {
					w := A(v)
					r.min[c] = min(r.min[c], w)
					r.max[c] = max(r.max[c], w)
				}
			}
		}
		return
	}
	if valid == nil && !nd.cnt && !nd.sum && nd.min != nd.max {
		ext, most := r.min, false
		if nd.max {
			ext, most = r.max, true
		}
		for i := a; i < b; i++ {
			if c := int64(key[i]) - lo; c >= 0 {
				if nd.rows {
					r.rows[c]++
				}
				if v := x[i]; v == v {
					if w := A(v); most && w > ext[c] || !most && w < ext[c] {
						ext[c] = w
					}
				}
			}
		}
		return
	}
	if valid == nil && (nd == need{sum: true, cnt: true} || nd == need{rows: true, sum: true, cnt: true}) {
		for i := a; i < b; i++ {
			if c := int64(key[i]) - lo; c >= 0 {
				if nd.rows {
					r.rows[c]++
				}
				if v := x[i]; v == v {
					r.sum[c] += A(v)
					r.cnt[c]++
				}
			}
		}
		return
	}
	for i := a; i < b; i++ {
		c := int64(key[i]) - lo
		if c < 0 {
			continue
		}
		if nd.rows {
			r.rows[c]++
		}
		v := x[i]
		if v != v || valid != nil && !valid[i] {
			continue
		}
		w := A(v)
		if nd.cnt {
			r.cnt[c]++
		}
		if nd.sum {
			r.sum[c] += w
		}
		if nd.min && w < r.min[c] {
			r.min[c] = w
		}
		if nd.max && w > r.max[c] {
			r.max[c] = w
		}
		if nd.ss {
			d := float64(v) - shift[c]
			r.s1[c] += d
			r.ss[c] += d * d
		}
	}
}

// colPass computes nd for the values x per code, on all cores, in one
// pass; ss is of the values less the codes' shift.
func colPass[V int32 | int64 | float32 | float64, A int64 | float64](kv any, lo int64, x []V, valid []bool, size, parts int, nd need, lowest, highest A, shift []float64) *acc[A] {
	n := len(x)
	rs := make([]*acc[A], parts)
	hostRun(parts, func(p int) {
		r := &acc[A]{}
		if nd.rows {
			r.rows = make([]int64, size)
		}
		if nd.cnt {
			r.cnt = make([]int64, size)
		}
		if nd.sum {
			r.sum = make([]A, size)
		}
		if nd.min {
			r.min = make([]A, size)
			for c := range r.min {
				r.min[c] = highest
			}
		}
		if nd.max {
			r.max = make([]A, size)
			for c := range r.max {
				r.max[c] = lowest
			}
		}
		if nd.ss {
			r.s1, r.ss = make([]float64, size), make([]float64, size)
		}
		a, b := span(n, parts, p)
		switch k := kv.(type) {
		case []int32:
			accum(k, lo, x, valid, a, b, nd, shift, r)
		case []int64:
			accum(k, lo, x, valid, a, b, nd, shift, r)
		}
		rs[p] = r
	})
	t := rs[0]
	for _, r := range rs[1:] {
		for c := range size {
			if nd.rows {
				t.rows[c] += r.rows[c]
			}
			if nd.cnt {
				t.cnt[c] += r.cnt[c]
			}
			if nd.sum {
				t.sum[c] += r.sum[c]
			}
			if nd.min {
				t.min[c] = min(t.min[c], r.min[c])
			}
			if nd.max {
				t.max[c] = max(t.max[c], r.max[c])
			}
			if nd.ss {
				t.s1[c] += r.s1[c]
				t.ss[c] += r.ss[c]
			}
		}
	}
	return t
}

// stats is the per-group result of the passes over one value column, in
// float64 for float columns and int64 for integer ones.
type stats struct {
	cnt        []int64 // nil: the groups' sizes
	isum, imin []int64
	imax       []int64
	fsum, fmin []float64
	fmax, ss   []float64
}

// colRaw runs the pass nd needs over x (int32, int64, float32 or
// float64) and returns its *acc, by code; ng is the number of codes
// present, or size when not known yet.
func colRaw(kv any, lo int64, x any, valid []bool, size, parts int, nd need, ng int) any {
	// The variance's pass adds (x-k) and (x-k)² with k the group's first
	// value present: the shifted-data algorithm, accurate since k lies
	// among the values, and one pass.
	var shift []float64
	if nd.ss {
		switch v := x.(type) {
		case []int32:
			shift = firstValues(kv, lo, v, valid, size, ng)
		case []int64:
			shift = firstValues(kv, lo, v, valid, size, ng)
		case []float32:
			shift = firstValues(kv, lo, v, valid, size, ng)
		case []float64:
			shift = firstValues(kv, lo, v, valid, size, ng)
		}
	}
	const lowest, highest = math.MinInt64, math.MaxInt64
	switch v := x.(type) {
	case []int32:
		return colPass(kv, lo, v, valid, size, parts, nd, int64(lowest), int64(highest), shift)
	case []int64:
		return colPass(kv, lo, v, valid, size, parts, nd, int64(lowest), int64(highest), shift)
	case []float32:
		return colPass(kv, lo, v, valid, size, parts, nd, math.Inf(-1), math.Inf(1), shift)
	case []float64:
		return colPass(kv, lo, v, valid, size, parts, nd, math.Inf(-1), math.Inf(1), shift)
	}
	return nil
}

// passRows returns the rows counted by a pass of colRaw.
func passRows(raw any) []int64 {
	switch r := raw.(type) {
	case *acc[int64]:
		return r.rows
	case *acc[float64]:
		return r.rows
	}
	return nil
}

// colStats gathers the groups' codes gs from a pass of colRaw; sizes
// are the groups' rows.
func colStats(raw any, gs []int32, sizes []int64) stats {
	pick := func(v []int64) []int64 {
		if v == nil {
			return nil
		}
		o := make([]int64, len(gs))
		for g, c := range gs {
			o[g] = v[c]
		}
		return o
	}
	pickF := func(v []float64) []float64 {
		if v == nil {
			return nil
		}
		o := make([]float64, len(gs))
		for g, c := range gs {
			o[g] = v[c]
		}
		return o
	}
	var st stats
	var s1, ss []float64
	var cnt []int64
	switch r := raw.(type) {
	case *acc[int64]:
		st.cnt, st.isum, st.imin, st.imax = pick(r.cnt), pick(r.sum), pick(r.min), pick(r.max)
		s1, ss, cnt = r.s1, r.ss, r.cnt
	case *acc[float64]:
		st.cnt, st.fsum, st.fmin, st.fmax = pick(r.cnt), pickF(r.sum), pickF(r.min), pickF(r.max)
		s1, ss, cnt = r.s1, r.ss, r.cnt
	}
	if ss != nil {
		st.ss = sqDev(s1, ss, cnt, gs, sizes)
	}
	if st.cnt == nil {
		st.cnt = sizes
	}
	return st
}

// sqDev returns each group's sum of squared deviations from its mean
// from the sums of x-k and (x-k)², by code; cnt nil means sizes.
func sqDev(s1, ss []float64, cnt []int64, gs []int32, sizes []int64) []float64 {
	o := make([]float64, len(gs))
	for g, c := range gs {
		n := sizes[g]
		if cnt != nil {
			n = cnt[c]
		}
		if n > 0 {
			o[g] = max(0, ss[c]-s1[c]*s1[c]/float64(n))
		}
	}
	return o
}

// firstValues returns, by code, the first value present of each of the
// ng codes present (0 for a code without one), scanning until it has
// them all.
func firstValues[V int32 | int64 | float32 | float64](kv any, lo int64, x []V, valid []bool, size, ng int) []float64 {
	first := make([]float64, size)
	seen := make([]bool, size)
	scan := func(c int64, i int, k *int) {
		if v := x[i]; c >= 0 && !seen[c] && v == v && (valid == nil || valid[i]) {
			first[c], seen[c] = float64(v), true
			*k++
		}
	}
	k := 0
	switch key := kv.(type) {
	case []int32:
		for i := 0; i < len(key) && k < ng; i++ {
			scan(int64(key[i])-lo, i, &k)
		}
	case []int64:
		for i := 0; i < len(key) && k < ng; i++ {
			scan(key[i]-lo, i, &k)
		}
	}
	return first
}

// hostAgg is Agg on the CPU for keys of small integer range and
// aggregations of sum, mean, count, min, max, var and std over int32,
// int64, float32 and float64 columns; ok is false where it does not
// apply, which includes every error, left to the general path to report.
func (g *Grouped) hostAgg(op string, aggs []Agg) (out *Frame, ok bool, err error) {
	f := g.f
	if f.dev.IsGPU() || hashMode() == 0 || f.n == 0 || len(g.keys) == 0 || len(aggs) == 0 {
		return nil, false, nil
	}
	seen := map[string]bool{}
	for _, k := range g.keys {
		if f.index(k) < 0 {
			return nil, false, nil
		}
		seen[k] = true
	}
	cols := make([]*Series, len(aggs))
	needs := map[*Series]need{}
	for i, a := range aggs {
		name := a.name()
		if seen[name] || f.index(a.Col) < 0 {
			return nil, false, nil
		}
		seen[name] = true
		s, _ := f.col(op, a.Col)
		if s.kind != Number {
			return nil, false, nil
		}
		switch s.data.DType() {
		case array.Int32, array.Int64, array.Float32, array.Float64:
		default:
			return nil, false, nil
		}
		nd := needs[s]
		ok := s.valid != nil || s.data.DType().IsFloating()
		switch a.Op {
		case "count":
			nd.cnt = nd.cnt || ok
		case "sum":
			nd.sum = true
		case "mean":
			nd.sum, nd.cnt = true, nd.cnt || ok
		case "var", "std":
			nd.sum, nd.cnt, nd.ss = true, nd.cnt || ok, true
		case "min":
			nd.min, nd.cnt = true, nd.cnt || ok
		case "max":
			nd.max, nd.cnt = true, nd.cnt || ok
		default:
			return nil, false, nil
		}
		cols[i], needs[s] = s, nd
	}
	keys := make([]hostKey, len(g.keys))
	size := 1
	for i, name := range g.keys {
		s, _ := f.col(op, name)
		k, fits, err := readKey(s, g.keepNulls)
		if err != nil {
			return nil, false, wrapErr(op, ErrValue, err, "key %q", name)
		}
		if !fits || size > hostCodeLimit/k.size {
			return nil, false, nil
		}
		keys[i], size = k, size*k.size
	}
	var kv any
	var lo int64
	if len(keys) == 1 && keys[0].null == nil {
		kv, lo = keys[0].vals, keys[0].lo
	} else {
		kv = hostCodes(keys, g.keepNulls, f.n)
	}
	parts := hostParts(f.n, size)
	// The first column's pass also counts the rows of each code, unless
	// the variance's pass needs the codes present first.
	var csizes []int64
	var raw0 any
	if nd := needs[cols[0]]; !nd.ss {
		x, valid, err := hostValues(cols[0])
		if err != nil {
			return nil, false, wrapErr(op, ErrValue, err, "column %q", cols[0].name)
		}
		nd.rows = true
		raw0 = colRaw(kv, lo, x, valid, size, parts, nd, size)
		csizes = passRows(raw0)
	} else {
		switch k := kv.(type) {
		case []int32:
			csizes = countRows(k, lo, size, parts)
		case []int64:
			csizes = countRows(k, lo, size, parts)
		}
	}
	// The groups are the codes present, in code order: the keys' order.
	var gs []int32
	var sizes []int64
	for c, k := range csizes {
		if k > 0 {
			gs = append(gs, int32(c))
			sizes = append(sizes, k)
		}
	}
	var cfirst []int64
	switch k := kv.(type) {
	case []int32:
		cfirst = hostFirst(k, lo, csizes, len(gs))
	case []int64:
		cfirst = hostFirst(k, lo, csizes, len(gs))
	}
	first := make([]int64, len(gs))
	for g, c := range gs {
		first[g] = cfirst[c]
	}
	ng := len(gs)
	if ng == 0 {
		return nil, false, nil
	}
	res := make([]*Series, 0, len(g.keys)+len(aggs))
	idx := array.FromSliceOn(f.dev, first)
	for _, name := range g.keys {
		s, _ := f.col(op, name)
		t, err := s.take(idx, nil)
		if err != nil {
			return nil, false, err
		}
		res = append(res, t)
	}
	done := map[*Series]stats{}
	if raw0 != nil {
		done[cols[0]] = colStats(raw0, gs, sizes)
	}
	for i, a := range aggs {
		s := cols[i]
		st, ok := done[s]
		if !ok {
			x, valid, err := hostValues(s)
			if err != nil {
				return nil, false, wrapErr(op, ErrValue, err, "column %q", s.name)
			}
			st = colStats(colRaw(kv, lo, x, valid, size, parts, needs[s], ng), gs, sizes)
			done[s] = st
		}
		r, err := hostResult(f.dev, a, s, st, ng)
		if err != nil {
			return nil, false, wrapErr(op, ErrValue, err, "%s of %q", a.Op, s.name)
		}
		res = append(res, r.Rename(a.name()))
	}
	out, err = New(f.dev, res...)
	return out, err == nil, err
}

// hostValues reads a value column's values and validity.
func hostValues(s *Series) (x any, valid []bool, err error) {
	switch s.data.DType() {
	case array.Int32:
		x, err = s.data.Int32s()
	case array.Int64:
		x, err = s.data.Int64s()
	case array.Float32:
		x, err = s.data.Float32s()
	default:
		x, err = s.data.Float64s()
	}
	if err == nil && s.valid != nil {
		valid, err = s.valid.Bools()
	}
	return x, valid, err
}

// hostResult makes the result column of aggregation a of s from st, with
// the general path's dtypes, nulls and fills.
func hostResult(dev *gocu.Device, a Agg, s *Series, st stats, ng int) (*Series, error) {
	res := &Series{kind: Number, n: ng, dev: dev}
	dt := s.data.DType()
	ok := s.valid != nil || dt.IsFloating()
	present := func(least int64) []bool {
		v := make([]bool, ng)
		for g, c := range st.cnt {
			v[g] = c >= least
		}
		return v
	}
	switch a.Op {
	case "count":
		res.data = array.FromSliceOn(dev, st.cnt)
	case "sum":
		switch {
		case st.isum != nil:
			res.data = array.FromSliceOn(dev, st.isum)
		case dt == array.Float32:
			v := make([]float32, ng)
			for g, x := range st.fsum {
				v[g] = float32(x)
			}
			res.data = array.FromSliceOn(dev, v)
		default:
			res.data = array.FromSliceOn(dev, st.fsum)
		}
	case "mean", "var", "std":
		v := make([]float64, ng)
		least := int64(1)
		if a.Op != "mean" {
			least = 2
		}
		for g, c := range st.cnt {
			switch {
			case a.Op != "mean" && c < 2:
				v[g] = math.NaN()
			case a.Op != "mean":
				v[g] = st.ss[g] / float64(c-1)
				if a.Op == "std" {
					v[g] = math.Sqrt(v[g])
				}
			case st.fsum != nil:
				v[g] = st.fsum[g] / float64(c)
			default:
				v[g] = float64(st.isum[g]) / float64(c)
			}
		}
		res.data = array.FromSliceOn(dev, v)
		res.valid = array.FromSliceOn(dev, present(least))
	case "min", "max":
		var valid []bool
		if ok {
			valid = present(1)
			res.valid = array.FromSliceOn(dev, valid)
		}
		switch dt {
		case array.Int32:
			res.data = array.FromSliceOn(dev, extremes[int32](st.imin, st.imax, a.Op == "max", valid))
		case array.Int64:
			res.data = array.FromSliceOn(dev, extremes[int64](st.imin, st.imax, a.Op == "max", valid))
		case array.Float32:
			res.data = array.FromSliceOn(dev, extremes[float32](st.fmin, st.fmax, a.Op == "max", valid))
		default:
			res.data = array.FromSliceOn(dev, extremes[float64](st.fmin, st.fmax, a.Op == "max", valid))
		}
	}
	if err := res.data.Err(); err != nil {
		return nil, err
	}
	if res.valid != nil {
		if err := res.valid.Err(); err != nil {
			return nil, err
		}
	}
	return res, nil
}

// extremes converts the minima or maxima to T, 0 where valid is false.
func extremes[T int32 | int64 | float32 | float64, A int64 | float64](mn, mx []A, most bool, valid []bool) []T {
	src := mn
	if most {
		src = mx
	}
	v := make([]T, len(src))
	for g, x := range src {
		if valid == nil || valid[g] {
			v[g] = T(x)
		}
	}
	return v
}
