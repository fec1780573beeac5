package cpu

import (
	"math/rand/v2"
	"testing"
)

// BenchmarkRadix32 times the values-only radix sort of 2^22 float32, by
// all workers (par) and by one (row).
func BenchmarkRadix32(b *testing.B) {
	be := New(0)
	n := 1 << 22
	r := rand.New(rand.NewPCG(1, 2))
	in, out := make([]float32, n), make([]float32, n)
	for i := range in {
		in[i] = float32(r.NormFloat64())
	}
	k, tmp := make([]uint32, n), make([]uint32, n)
	b.Run("par", func(b *testing.B) {
		for range b.N {
			be.radix32(in, out, 0, k, tmp, false)
		}
	})
	b.Run("row", func(b *testing.B) {
		for range b.N {
			toKeys32(in, k, 0, n, false, 0)
			fromKeys32(sortRow32(k, tmp), out, 0, false)
		}
	})
}
