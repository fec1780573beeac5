package cpu

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// TestNonzeroHelpers checks the word-wise count and the branch-free writer
// against a plain loop, on bytes other than 0 and 1, odd lengths and a
// destination shorter than the count.
func TestNonzeroHelpers(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 19))
	for _, n := range []int{0, 1, 7, 8, 9, 255, 256, 257, 1000, 4099} {
		for _, dens := range []float64{0, 0.3, 1} {
			m := make([]byte, n)
			var want []int64
			for i := range m {
				if r.Float64() < dens {
					m[i] = byte(1 + r.IntN(255))
					want = append(want, int64(100+i))
				}
			}
			if got := countNonzero(m); got != len(want) {
				t.Fatalf("n %d density %v: count %d, want %d", n, dens, got, len(want))
			}
			for _, c := range []int{len(want), len(want) / 2} {
				o := make([]int64, c+1)
				o[c] = -7
				writeNonzero(o[:c], m, 100)
				if !slices.Equal(o[:c], want[:c]) || o[c] != -7 {
					t.Fatalf("n %d density %v cap %d: wrote %v, want %v", n, dens, c, o, want[:c])
				}
			}
		}
	}
}
