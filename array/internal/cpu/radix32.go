package cpu

import (
	"math"
	"slices"
	"sync"

	"github.com/gocu-dev/gocu/array/internal/backend"
)

// Sorting values alone of a 32-bit type works on uint32 order keys. A key
// determines its value (NaNs all become the quiet NaN, as copyElem writes
// them), so equal keys are equal outputs and any sort of the keys gives
// the stable sort's result.

const (
	smallRow32 = 256     // shorter rows sort by slices.Sort on the keys
	parRow32   = 1 << 16 // longer rows sort by all workers together
)

// scratch32 keeps the two largest buffers of the long-row sort, of up to
// maxScratch32 keys: fresh ones cost page faults that take about as long
// as the sort itself.
var scratch32 struct {
	sync.Mutex
	s [][]uint32
}

func getKeys32(n int) []uint32 {
	scratch32.Lock()
	defer scratch32.Unlock()
	for i, s := range scratch32.s {
		if cap(s) >= n {
			scratch32.s = slices.Delete(scratch32.s, i, i+1)
			return s[:n]
		}
	}
	return make([]uint32, n)
}

const maxScratch32 = 1 << 24

func putKeys32(s []uint32) {
	if cap(s) > maxScratch32 {
		return // rare enough not to keep the memory
	}
	scratch32.Lock()
	defer scratch32.Unlock()
	scratch32.s = append(scratch32.s, s)
	slices.SortFunc(scratch32.s, func(a, b []uint32) int { return cap(b) - cap(a) })
	scratch32.s = scratch32.s[:min(len(scratch32.s), 2)]
}

// key32 returns the order key of a float32 (-0 before +0, NaN last).
func key32(v float32) uint32 {
	if v != v {
		return math.MaxUint32
	}
	u := math.Float32bits(v)
	if u>>31 != 0 {
		return ^u
	}
	return u | 1<<31
}

// unkey32 inverts key32, the NaN key giving the quiet NaN.
func unkey32(k uint32) float32 {
	switch {
	case k == math.MaxUint32:
		return float32(math.NaN())
	case k>>31 != 0:
		return math.Float32frombits(k &^ (1 << 31))
	}
	return math.Float32frombits(^k)
}

// toKeys32 writes the order keys of in[lo:hi] (complemented when
// descending) to k[at:].
func toKeys32(in any, k []uint32, lo, hi int, desc bool, at int) {
	var flip uint32
	if desc {
		flip = math.MaxUint32
	}
	k = k[at : at+hi-lo]
	switch s := in.(type) {
	case []float32:
		for i, v := range s[lo:hi] {
			k[i] = key32(v) ^ flip
		}
	case []int32:
		for i, v := range s[lo:hi] {
			k[i] = uint32(v) ^ 1<<31 ^ flip
		}
	}
}

// fromKeys32 inverts toKeys32 from k into out[off:off+len(k)].
func fromKeys32(k []uint32, out any, off int, desc bool) {
	var flip uint32
	if desc {
		flip = math.MaxUint32
	}
	switch s := out.(type) {
	case []float32:
		s = s[off : off+len(k)]
		for i, v := range k {
			s[i] = unkey32(v ^ flip)
		}
	case []int32:
		s = s[off : off+len(k)]
		for i, v := range k {
			s[i] = int32(v ^ 1<<31 ^ flip)
		}
	}
}

// sortValues32 sorts the rows of a float32 or int32 sort that wants the
// values only, and reports whether it applied.
func (b *Backend) sortValues32(s *backend.Sort) bool {
	dt := s.Keys.Buf.DType()
	if (dt != backend.Float32 && dt != backend.Int32) || s.Vals.Buf != nil || s.OutVals.Buf != nil || s.OutKeys.Buf == nil {
		return false
	}
	n := s.Rows * s.Len
	in, out := part(s.Keys, n), part(s.OutKeys, n)
	if s.Len >= parRow32 && s.Rows < b.workers {
		k, tmp := getKeys32(s.Len), getKeys32(s.Len)
		defer putKeys32(k)
		defer putKeys32(tmp)
		for r := 0; r < s.Rows; r++ {
			b.radix32(in, out, r*s.Len, k, tmp, s.Descending)
		}
		return true
	}
	b.parallel(s.Rows, 1, 1, func(r0, r1 int) {
		k, tmp := make([]uint32, s.Len), make([]uint32, s.Len)
		for r := r0; r < r1; r++ {
			lo, hi := r*s.Len, (r+1)*s.Len
			toKeys32(in, k, lo, hi, s.Descending, 0)
			fromKeys32(sortRow32(k, tmp), out, lo, s.Descending)
		}
	})
	return true
}

// sortRow32 sorts k on one worker and returns the sorted keys, in k or tmp.
func sortRow32(k, tmp []uint32) []uint32 {
	if len(k) < smallRow32 {
		slices.Sort(k)
		return k
	}
	var cnt [4][256]int
	for _, v := range k {
		cnt[0][byte(v)]++
		cnt[1][byte(v>>8)]++
		cnt[2][byte(v>>16)]++
		cnt[3][byte(v>>24)]++
	}
	n := len(k)
	for pass := range 4 {
		shift := uint(8 * pass)
		c := &cnt[pass]
		if c[byte(k[0]>>shift)] == n {
			continue // one digit: the pass would not move anything
		}
		sum := 0
		for d, x := range c {
			c[d] = sum
			sum += x
		}
		for _, v := range k {
			d := byte(v >> shift)
			tmp[c[d]] = v
			c[d]++
		}
		k, tmp = tmp, k
	}
	return k
}

// radix32 sorts the n values of in into out by all workers, each counting
// and scattering its own chunk. The first pass's count also writes the
// keys to k; the last pass writes values, not keys.
func (b *Backend) radix32(in, out any, off int, k, tmp []uint32, desc bool) {
	n := len(k)
	w := max(min(b.workers, n/4096), 1)
	chunk := (n + w - 1) / w
	all := make([][4][256]int, w)
	cnt := make([][256]int, w)
	var wg sync.WaitGroup
	each := func(fn func(j, lo, hi int)) {
		for j := 1; j < w; j++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				fn(j, j*chunk, min((j+1)*chunk, n))
			}()
		}
		fn(0, 0, min(chunk, n))
		wg.Wait()
	}
	each(func(j, lo, hi int) {
		toKeys32(in, k, off+lo, off+hi, desc, lo)
		c := &all[j]
		for _, v := range k[lo:hi] {
			c[0][byte(v)]++
			c[1][byte(v>>8)]++
			c[2][byte(v>>16)]++
			c[3][byte(v>>24)]++
		}
	})
	var passes []int
	for pass := range 4 {
		d0 := byte(k[0] >> (8 * pass))
		total := 0
		for j := range all {
			total += all[j][pass][d0]
		}
		if total != n {
			passes = append(passes, pass) // else one digit: the pass would not move anything
		}
	}
	if len(passes) == 0 {
		each(func(_, lo, hi int) { fromKeys32(k[lo:hi], out, off+lo, desc) })
		return
	}
	for i, pass := range passes {
		shift := uint(8 * pass)
		src, dst := k, tmp
		if i == 0 {
			for j := range cnt {
				cnt[j] = all[j][pass]
			}
		} else {
			each(func(j, lo, hi int) {
				c := &cnt[j]
				clear(c[:])
				for _, v := range src[lo:hi] {
					c[byte(v>>shift)]++
				}
			})
		}
		sum := 0
		for d := range 256 {
			for j := range cnt {
				x := cnt[j][d]
				cnt[j][d] = sum
				sum += x
			}
		}
		last := i == len(passes)-1
		each(func(j, lo, hi int) {
			c := &cnt[j]
			if last {
				scatterValues32(src[lo:hi], out, off, c, shift, desc)
				return
			}
			for _, v := range src[lo:hi] {
				d := byte(v >> shift)
				dst[c[d]] = v
				c[d]++
			}
		})
		k, tmp = tmp, k
	}
}

// scatterValues32 is a radix pass that writes the values of the keys src
// to out[off:], at the positions c gives by digit.
func scatterValues32(src []uint32, out any, off int, c *[256]int, shift uint, desc bool) {
	var flip uint32
	if desc {
		flip = math.MaxUint32
	}
	switch o := out.(type) {
	case []float32:
		o = o[off:]
		for _, v := range src {
			d := byte(v >> shift)
			o[c[d]] = unkey32(v ^ flip)
			c[d]++
		}
	case []int32:
		o = o[off:]
		for _, v := range src {
			d := byte(v >> shift)
			o[c[d]] = int32(v ^ 1<<31 ^ flip)
			c[d]++
		}
	}
}

// uniqueValues is Unique's loop for the distinct values alone, typed; it
// returns the last group and whether it applied (only when valuesOnly).
func uniqueValues(sorted, vals any, n, cap int, valuesOnly bool) (int, bool) {
	if !valuesOnly {
		return -1, false
	}
	switch s := sorted.(type) {
	case []int32:
		v, _ := vals.([]int32)
		return uniqueRun(s[:n], v[:min(cap, len(v))]), true
	case []int64:
		v, _ := vals.([]int64)
		return uniqueRun(s[:n], v[:min(cap, len(v))]), true
	case []float32:
		v, _ := vals.([]float32)
		return uniqueRun(s[:n], v[:min(cap, len(v))]), true
	case []float64:
		v, _ := vals.([]float64)
		return uniqueRun(s[:n], v[:min(cap, len(v))]), true
	}
	return -1, false
}

// uniqueRun writes the first values of each run of equal (or NaN) values
// of s to vals while they fit and returns the last run's number.
func uniqueRun[T ssNum](s, vals []T) int {
	g := -1
	for i, x := range s {
		if i > 0 {
			p := s[i-1]
			if x == p || (x != x && p != p) {
				continue
			}
		}
		g++
		if g < len(vals) {
			vals[g] = x
		}
	}
	return g
}
