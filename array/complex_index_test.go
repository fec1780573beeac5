package array

import (
	"math/rand/v2"
	"testing"
)

// Gathers and scatters move complex elements whole, on every backend:
// Take, Put and Mask of complex64 and complex128 against the host's.
func TestComplexIndexing(t *testing.T) {
	forEachBackend(t, func(t *testing.T, d *Maker) {
		r := newRand(t)
		for _, dt := range []DType{Complex64, Complex128} {
			const n = 37
			v := make([]complex128, n)
			for i := range v {
				v[i] = complex(float64(float32(r.NormFloat64())), float64(float32(r.NormFloat64())))
			}
			x := complexOn(t, d, dt, v, n)
			ix := make([]int64, 23)
			for i := range ix {
				ix[i] = int64(r.IntN(n))
			}
			got := readComplex(t, x.Take(fromSliceOn(d, ix, len(ix)), 0))
			for i, j := range ix {
				if got[i] != v[j] {
					t.Fatalf("%v Take[%d] = %v, want %v", dt, i, got[i], v[j])
				}
			}
			keep := make([]bool, n)
			var want []complex128
			for i := range keep {
				if keep[i] = r.IntN(2) == 0; keep[i] {
					want = append(want, v[i])
				}
			}
			got = readComplex(t, x.Mask(fromSliceOn(d, keep, n)))
			if len(got) != len(want) {
				t.Fatalf("%v Mask: %d elements, want %d", dt, len(got), len(want))
			}
			for i := range want {
				if got[i] != want[i] {
					t.Fatalf("%v Mask[%d] = %v, want %v", dt, i, got[i], want[i])
				}
			}
			perm := rand.New(rand.NewPCG(uint64(dt), 1)).Perm(n)[:5]
			pix, pv := make([]int64, len(perm)), make([]complex128, len(perm))
			for i, j := range perm {
				pix[i], pv[i] = int64(j), complex(float64(i+1), -float64(i+1))
				v[j] = pv[i]
			}
			if err := x.Put(fromSliceOn(d, pix, len(pix)), complexOn(t, d, dt, pv, len(pv))); err != nil {
				t.Fatalf("%v Put: %v", dt, err)
			}
			got = readComplex(t, x)
			for i := range v {
				if got[i] != v[i] {
					t.Fatalf("%v after Put, [%d] = %v, want %v", dt, i, got[i], v[i])
				}
			}
		}
	})
}
