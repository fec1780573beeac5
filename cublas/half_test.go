package cublas

import (
	"math"
	"math/rand/v2"
	"testing"
)

func TestHalfRoundTripsEveryValue(t *testing.T) {
	for i := range 1 << 16 {
		h := uint16(i)
		f := halfToFloat32(h)
		isNaN := h&0x7c00 == 0x7c00 && h&0x3ff != 0
		if isNaN {
			if !math.IsNaN(float64(f)) || halfBits(f)&0x7fff != 0x7e00 {
				t.Fatalf("NaN %#04x -> %v -> %#04x", h, f, halfBits(f))
			}
			continue
		}
		if back := halfBits(f); back != h {
			t.Fatalf("%#04x -> %v -> %#04x", h, f, back)
		}
	}
	if halfToFloat32(0x3c00) != 1 || halfToFloat32(0x0001) != float32(math.Ldexp(1, -24)) || halfToFloat32(0x7bff) != 65504 {
		t.Error("known values")
	}
}

// The correctly rounded half is checked by brute force over the neighbours
// of the result, in float64.
func TestHalfRoundsToNearestEven(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	check := func(x float32) {
		h := halfBits(x)
		got := float64(halfToFloat32(h))
		if math.IsInf(got, 0) {
			if math.Abs(float64(x)) < 65520 { // 65520 is the rounding boundary to infinity
				t.Fatalf("%v overflowed to %v", x, got)
			}
			return
		}
		err := math.Abs(float64(x) - got)
		for _, nb := range []uint16{h - 1, h + 1} {
			v := float64(halfToFloat32(nb))
			if math.IsNaN(v) || math.IsInf(v, 0) || math.Signbit(v) != math.Signbit(got) && v != 0 {
				continue
			}
			d := math.Abs(float64(x) - v)
			if d < err || d == err && h&1 == 1 {
				t.Fatalf("%v (%#08x) -> %#04x = %v, but %#04x = %v is nearer (or even)", x, math.Float32bits(x), h, got, nb, v)
			}
		}
	}
	for range 200000 {
		// Values across the half range, subnormals included.
		x := float32(math.Ldexp(r.Float64()*2-1, r.IntN(36)-26))
		check(x)
	}
	// Exact ties: halfway between two halves.
	for _, x := range []float32{1 + 1.0/2048, 1 + 3.0/2048, float32(math.Ldexp(1, -25)), float32(math.Ldexp(3, -25)), 65504 + 16, 2049} {
		check(x)
	}
	if halfBits(65520) != 0x7c00 || halfBits(65519) != 0x7bff {
		t.Error("overflow boundary")
	}
	if halfBits(float32(math.Inf(-1))) != 0xfc00 || halfBits(0) != 0 || halfBits(float32(math.Copysign(0, -1))) != 0x8000 {
		t.Error("infinity or signed zero")
	}
}
