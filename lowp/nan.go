package lowp

import "math"

// The NaN bit patterns the conversions produce, as an H100 produces them
// (gpu_test.go compares every conversion with the hardware; measured
// 2026-11-25). From float32, every NaN gives the one canonical NaN of the
// result format, positive, with all fraction bits set (cvt.rn.f16.f32,
// cvt.rn.bf16.f32, cvt.rn.satfinite.e4m3x2.f32 and .e5m2x2). From float64,
// cvt.rn.f16.f64 and cvt.rn.bf16.f64 keep the sign and give the quiet NaN
// with only the top fraction bit set (nanFloat16From64, nanBFloat16From64).
// Widening to float32 gives 0x7fffffff, except BFloat16.Float32, a plain
// move that keeps the bits; widening to float64 widens that float32 as
// cvt.f64.f32 does: sign and payload kept, the quiet bit set.
const (
	nanFloat16  = 0x7fff // cvt.rn.f16.f32 of a NaN
	nanBFloat16 = 0x7fff // cvt.rn.bf16.f32 of a NaN
	nanE4M3     = 0x7f   // cvt.rn.satfinite.e4m3x2.f32 of a NaN
	nanE5M2     = 0x7f   // cvt.rn.satfinite.e5m2x2.f32 of a NaN
	nanFloat32  = 0x7fffffff

	nanFloat16From64  = 0x7e00 // cvt.rn.f16.f64 of a positive NaN; the sign is kept
	nanBFloat16From64 = 0x7fc0 // cvt.rn.bf16.f64 of a positive NaN; the sign is kept
	nanFloat64        = 0x7fffffffffffffff
)

// widenNaN is cvt.f64.f32 of a float32 NaN: the sign and the payload kept,
// the quiet bit set.
func widenNaN(b uint32) float64 {
	return math.Float64frombits(uint64(b>>31)<<63 | 0x7ff<<52 | uint64(b&0x7fffff|0x400000)<<29)
}
