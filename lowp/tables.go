package lowp

import (
	"math"
	"sync"
)

// Widening tables. The 8-bit formats widen by table lookup everywhere (a
// few KiB, built at start-up in microseconds); Float16 widens by table only
// in ToFloat32s, where a lookup measures faster than the arithmetic of
// Float16.Float32, and builds that 256 KiB table on first use.

// The float32 and float64 bits of every 8-bit value. E5M2 is the upper
// byte of a Float16 (same exponent width and bias), so it widens through
// Float16.Float32 and takes its canonical NaN.
var (
	e4m3Table, e5m2Table     [256]uint32
	e4m3Table64, e5m2Table64 [256]uint64
)

func init() {
	for i := range 256 {
		e4m3Table[i] = e4m3Bits32(uint32(i))
		e5m2Table[i] = math.Float32bits(Float16(i << 8).Float32())
		e4m3Table64[i] = widen64(e4m3Table[i])
		e5m2Table64[i] = widen64(e5m2Table[i])
	}
}

// e4m3Bits32 returns the float32 bits of the E4M3 bits x.
func e4m3Bits32(x uint32) uint32 {
	sign := x & 0x80 << 24
	exp, frac := x>>3&0xf, x&7
	switch {
	case x&0x7f == 0x7f:
		return nanFloat32
	case exp == 0: // zero or subnormal: frac steps of 2^-9, exact in float32
		return sign | math.Float32bits(float32(frac)*0x1p-9)
	}
	return sign | (exp+127-7)<<23 | frac<<20 // rebias 7 to 127, widen the fraction 3 bits to 23
}

// widen64 returns the float64 bits of the float32 bits b, with the
// canonical NaN.
func widen64(b uint32) uint64 {
	if f := math.Float32frombits(b); f == f {
		return math.Float64bits(float64(f))
	}
	return math.Float64bits(widenNaN(b))
}

// float16Table returns the float32 bits of every Float16.
var float16Table = sync.OnceValue(func() *[1 << 16]uint32 {
	t := new([1 << 16]uint32)
	for i := range t {
		t[i] = math.Float32bits(Float16(i).Float32())
	}
	return t
})
