package cpu

import (
	"math"
	"slices"
)

// topkBlock is how many order keys a TopK worker computes at a time.
const topkBlock = 512

// topkSplitMin is the shortest part of a row a TopK worker scans alone.
const topkSplitMin = 1 << 16

// orderKeys sets dst[i] to the order key (see orderKey) of keys[base+i],
// complemented when desc, in one typed loop.
func orderKeys(dst []uint64, keys any, base int, desc bool) {
	var flip uint64
	if desc {
		flip = math.MaxUint64
	}
	switch s := keys.(type) {
	case []bool:
		for i, v := range s[base : base+len(dst)] {
			var k uint64
			if v {
				k = 1
			}
			dst[i] = k ^ flip
		}
	case []uint8:
		for i, v := range s[base : base+len(dst)] {
			dst[i] = uint64(v) ^ flip
		}
	case []int32:
		for i, v := range s[base : base+len(dst)] {
			dst[i] = uint64(uint32(v)^1<<31) ^ flip
		}
	case []int64:
		for i, v := range s[base : base+len(dst)] {
			dst[i] = uint64(v) ^ 1<<63 ^ flip
		}
	case []float32:
		for i, v := range s[base : base+len(dst)] {
			u := math.Float32bits(v)
			k := uint64(u | 1<<31)
			switch {
			case v != v:
				k = math.MaxUint32
			case u>>31 != 0:
				k = uint64(^u)
			}
			dst[i] = k ^ flip
		}
	case []float64:
		for i, v := range s[base : base+len(dst)] {
			u := math.Float64bits(v)
			k := u | 1<<63
			switch {
			case v != v:
				k = math.MaxUint64
			case u>>63 != 0:
				k = ^u
			}
			dst[i] = k ^ flip
		}
	}
}

// topkHeap keeps the k least (key, position) pairs seen, the greatest of
// them at the root.
type topkHeap struct {
	h   []sortPair
	k   int
	key []uint64
}

func (t *topkHeap) down(i int) {
	h := t.h
	n := len(h)
	for {
		c := 2*i + 1
		if c >= n {
			return
		}
		if c+1 < n && cmpPair(h[c+1], h[c]) > 0 {
			c++
		}
		if cmpPair(h[c], h[i]) <= 0 {
			return
		}
		h[i], h[c] = h[c], h[i]
		i = c
	}
}

func (t *topkHeap) up(i int) {
	h := t.h
	for i > 0 {
		p := (i - 1) / 2
		if cmpPair(h[i], h[p]) <= 0 {
			return
		}
		h[i], h[p] = h[p], h[i]
		i = p
	}
}

// scan offers the elements lo to hi of the row at base. Positions rise
// during a scan, so an element enters a full heap only with a smaller key.
func (t *topkHeap) scan(keys any, base, lo, hi int, desc bool) {
	for b := lo; b < hi; b += topkBlock {
		key := t.key[:min(topkBlock, hi-b)]
		orderKeys(key, keys, base+b, desc)
		i := 0
		for ; i < len(key) && len(t.h) < t.k; i++ {
			t.h = append(t.h, sortPair{key[i], b + i})
			t.up(len(t.h) - 1)
		}
		if i == len(key) {
			continue
		}
		thr := t.h[0].k
		for ; i < len(key); i++ {
			if key[i] < thr {
				t.h[0] = sortPair{key[i], b + i}
				t.down(0)
				thr = t.h[0].k
			}
		}
	}
}

// topK writes the first k of each row's stable sort (descending when
// largest): each part of a row keeps its k best in a heap, then the parts'
// candidates are sorted. Rows, or parts of a long row, go to the workers.
func (b *Backend) topK(keys, outK any, outI []int64, rows, n, k int, largest bool) {
	w := max(b.workers, 1)
	parts := 1
	if rows < w {
		parts = max(min((w+rows-1)/rows, n/topkSplitMin), 1)
	}
	plen := (n + parts - 1) / parts
	cand := make([][]sortPair, rows*parts)
	b.parallel(rows*parts, 1, 1, func(lo, hi int) {
		t := &topkHeap{k: k, key: make([]uint64, topkBlock)}
		var best []sortPair
		if parts == 1 {
			best = make([]sortPair, k)
		}
		for task := lo; task < hi; task++ {
			r, p := task/parts, task%parts
			t.h = make([]sortPair, 0, k)
			if parts == 1 {
				t.h = best[:0]
			}
			t.scan(keys, r*n, p*plen, min((p+1)*plen, n), largest)
			if parts > 1 {
				cand[task] = t.h
				continue
			}
			slices.SortFunc(t.h, cmpPair)
			topkWrite(keys, outK, outI, r, n, k, t.h)
		}
	})
	if parts == 1 {
		return
	}
	b.parallel(rows, 1, 1, func(lo, hi int) {
		for r := lo; r < hi; r++ {
			all := slices.Concat(cand[r*parts : (r+1)*parts]...)
			slices.SortFunc(all, cmpPair)
			topkWrite(keys, outK, outI, r, n, k, all[:k])
		}
	})
}

// topkWrite writes row r's sorted best pairs.
func topkWrite(keys, outK any, outI []int64, r, n, k int, best []sortPair) {
	for j, q := range best {
		copyElem(outK, r*k+j, keys, r*n+q.p)
		outI[r*k+j] = int64(q.p)
	}
}
