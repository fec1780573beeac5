package kernel

import (
	"math"
	"math/big"
	"math/rand/v2"
	"testing"
)

// fmaRef is x*y+z rounded once to float32, computed exactly with big.Float.
func fmaRef(x, y, z float32) float32 {
	if math.IsNaN(float64(x)) || math.IsNaN(float64(y)) || math.IsNaN(float64(z)) ||
		math.IsInf(float64(x), 0) || math.IsInf(float64(y), 0) || math.IsInf(float64(z), 0) {
		return float32(float64(x)*float64(y) + float64(z))
	}
	p := new(big.Float).SetPrec(0).SetMode(big.ToNearestEven)
	p.Mul(big.NewFloat(float64(x)).SetPrec(200), big.NewFloat(float64(y)).SetPrec(200))
	p.Add(p, big.NewFloat(float64(z)).SetPrec(200))
	f, _ := p.Float32()
	if f == 0 {
		return float32(float64(x)*float64(y) + float64(z)) // the sign of an exact zero
	}
	return f
}

func TestFMARoundsOnce(t *testing.T) {
	// x*y + z = 1 + 2^-11 + 2^-24 + 2^-70 lies just above a float32
	// midpoint, by less than float64 resolves: rounding to float64 first
	// lands on the midpoint, which then rounds to even, down.
	var x, y, z float32
	x, y, z = 1+0x1p-12, 1+0x1p-12, 0x1p-70 // exact: 1 + 2^-11 + 2^-24 + 2^-70
	want := fmaRef(x, y, z)
	if want != 1+0x1p-11+0x1p-23 {
		t.Fatalf("reference %v: the case is not a midpoint", want)
	}
	if got := FMA(x, y, z); got != want {
		t.Errorf("FMA(%v, %v, %v) = %v, want %v (rounded twice?)", x, y, z, got, want)
	}
	r := rand.New(rand.NewPCG(1, 2))
	for i := range 200000 {
		x := float32(r.NormFloat64())
		y := float32(r.NormFloat64())
		z := float32(r.NormFloat64() * math.Ldexp(1, r.IntN(60)-30))
		if i%3 == 0 { // near cancellation
			z = -x * y
		}
		if got, want := FMA(x, y, z), fmaRef(x, y, z); math.Float32bits(got) != math.Float32bits(want) {
			t.Fatalf("FMA(%v, %v, %v) = %v, want %v", x, y, z, got, want)
		}
	}
	for _, c := range [][3]float32{{float32(math.Inf(1)), 1, 1}, {float32(math.NaN()), 1, 1}, {1e30, 1e30, -1}, {0, -1, 0}, {-0, 1, -0}, {1e-30, 1e-30, 0}} {
		got, want := FMA(c[0], c[1], c[2]), fmaRef(c[0], c[1], c[2])
		if math.Float32bits(got) != math.Float32bits(want) && !(got != got && want != want) {
			t.Errorf("FMA(%v) = %v, want %v", c, got, want)
		}
	}
}
