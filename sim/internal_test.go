package sim

import (
	"math/bits"
	"testing"
	"unsafe"
)

func TestAffinePermutes(t *testing.T) {
	r := rng{42}
	for _, n := range []uint64{1, 2, 3, 7, 32, 256, 1000, 1024} {
		for range 5 {
			p := newAffine(&r, n)
			seen := make([]bool, n)
			for k := range n {
				v := p.at(k)
				if v >= n || seen[v] {
					t.Fatalf("n=%d %+v: position %d gives %d again", n, p, k, v)
				}
				seen[v] = true
			}
		}
	}
	// Grids of up to 2^63 blocks: no overflow, values in range, injective
	// on a sample.
	n := uint64(1<<31-1) * 65535 * 65535
	p := newAffine(&r, n)
	seen := map[uint64]bool{}
	for k := uint64(0); k < 1<<20; k += 997 {
		for _, kk := range []uint64{k, n - 1 - k} {
			v := p.at(kk)
			if v >= n || seen[v] {
				t.Fatalf("position %d gives %d", kk, v)
			}
			seen[v] = true
			// Check against 128-bit arithmetic.
			hi, lo := bits.Mul64(p.a, kk)
			lo, c := bits.Add64(lo, p.c, 0)
			hi += c
			if _, rem := bits.Div64(hi%n, lo, n); rem != v {
				t.Fatalf("position %d: %d, want %d", kk, v, rem)
			}
		}
	}
}

func TestParseBounds(t *testing.T) {
	for _, c := range []struct {
		msg         string
		index, leng int
		ok          bool
	}{
		{"runtime error: index out of range [5] with length 5", 5, 5, true},
		{"runtime error: index out of range [-1]", -1, -1, true},
		{"runtime error: slice bounds out of range [:7] with capacity 5", 7, 5, true},
		{"runtime error: slice bounds out of range [:7] with length 5", 7, 5, true},
		{"runtime error: slice bounds out of range [6:5]", 6, -1, true},
		{"runtime error: integer divide by zero", 0, 0, false},
	} {
		i, n, ok := parseBounds(c.msg)
		if ok != c.ok || ok && (i != c.index || n != c.leng) {
			t.Errorf("%q: %d %d %v", c.msg, i, n, ok)
		}
	}
}

func TestEntrySize(t *testing.T) {
	if s := unsafe.Sizeof(entry{}); s != 64 {
		t.Errorf("a shadow entry is %d bytes, not one 64-byte cache line", s)
	}
}
