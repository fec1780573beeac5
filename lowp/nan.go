package lowp

import "math"

// The NaN bit patterns the conversions produce, as an H100 produces them
// (gpu_test.go compares every conversion with the hardware; measured
// 2026-11-25). From float32, every NaN gives the one canonical NaN of the
// result format, positive, with all fraction bits set (cvt.rn.f16.f32,
// cvt.rn.bf16.f32, cvt.rn.satfinite.e4m3x2.f32 and .e5m2x2). From float64,
// cvt.rn.f16.f64 and cvt.rn.bf16.f64 keep the sign and the top fraction
// bits, with the quiet bit set (narrowNaN64).
// Widening to float32 gives 0x7fffffff, except BFloat16.Float32, a plain
// move that keeps the bits; widening to float64 widens that float32 as
// cvt.f64.f32 does: sign and payload kept, the quiet bit set.
const (
	nanFloat16  = 0x7fff // cvt.rn.f16.f32 of a NaN
	nanBFloat16 = 0x7fff // cvt.rn.bf16.f32 of a NaN
	nanE4M3     = 0x7f   // cvt.rn.satfinite.e4m3x2.f32 of a NaN
	nanE5M2     = 0x7f   // cvt.rn.satfinite.e5m2x2.f32 of a NaN
	nanFloat32  = 0x7fffffff
	nanFloat64  = 0x7fffffffffffffff
)

// widenNaN is cvt.f64.f32 of a float32 NaN: the sign and the payload kept,
// the quiet bit set.
func widenNaN(b uint32) float64 {
	return math.Float64frombits(uint64(b>>31)<<63 | 0x7ff<<52 | uint64(b&0x7fffff|0x400000)<<29)
}

// narrowNaN64 is cvt.rn.f16.f64 (frac 10) or cvt.rn.bf16.f64 (frac 7) of a
// float64 NaN with bits b: the sign and the top frac bits of the fraction
// kept, the quiet bit set, as an H100 does (0x7ff8000000000001 gives
// 0x7e00, 0x7fffffffffffffff gives 0x7fff).
func narrowNaN64(b uint64, frac uint) uint16 {
	exp := uint16(1)<<(15-frac) - 1 // all ones, below the sign
	return uint16(b>>48)&0x8000 | exp<<frac | 1<<(frac-1) | uint16(b>>(52-frac))&(1<<frac-1)
}
