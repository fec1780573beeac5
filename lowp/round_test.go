package lowp

import (
	"math"
	"math/rand/v2"
	"testing"
)

// toOdd32 against the definition, computed with Go's float32 conversion
// (to nearest) and a step back towards zero when that went away from it.
func TestToOdd32(t *testing.T) {
	want := func(f float64) uint32 {
		r := float32(f)
		b := math.Float32bits(r)
		if math.IsNaN(f) {
			return 0x7fc00000 | b&(1<<31)
		}
		if math.Abs(float64(r)) > math.Abs(f) {
			b-- // from infinity too: to the largest float32
		}
		if float64(r) != f {
			b |= 1
		}
		return b
	}
	r := rand.New(rand.NewPCG(3, 5))
	check := func(f float64) {
		if got, w := math.Float32bits(toOdd32(f)), want(f); got != w && !(math.IsNaN(f) && got&0x7fffffff == 0x7fc00000) {
			t.Fatalf("toOdd32(%v = %#016x) = %#08x, want %#08x", f, math.Float64bits(f), got, w)
		}
	}
	for range 1 << 20 {
		f := math.Float64frombits(r.Uint64())
		check(f)
		// Near float32's range limits and its subnormals.
		check(math.Ldexp(r.Float64()+0.5, r.IntN(40)-170) * float64(1-2*r.IntN(2)))
		check(math.Ldexp(r.Float64()+0.5, r.IntN(10)+120))
		// A float32, and its float64 neighbours.
		x := float64(math.Float32frombits(r.Uint32()))
		check(x)
		check(math.Nextafter(x, 0))
		check(math.Nextafter(x, math.Inf(1)))
	}
	for _, f := range []float64{0, math.Copysign(0, -1), math.Inf(1), math.Inf(-1), math.NaN(), math.MaxFloat64,
		math.SmallestNonzeroFloat64, 0x1p-149, 0x1p-150, 0x1.8p-150, 0x1p-126, 0x1.fffffffffffffp-127, 0x1p128, 0x1.fffffep127,
		0x1.ffffffp127, 0x1.fffffe0000001p127} {
		check(f)
		check(-f)
	}
}
