package lowp

import "math"

// toOdd32 rounds f to float32 with round-to-odd: when f is not exactly a
// float32, the result is the float32 next to f towards zero with its
// lowest bit set. Round-to-odd keeps what rounding to nearest needs to know
// (whether f was above, below or on a tie point of the narrower format)
// provided the intermediate format has at least two bits more than the
// final one, which float32 has over each format here, in the subnormal
// ranges too. So rounding toOdd32(f) to nearest even is a single correct
// rounding of f; cuda_bf16.hpp's __double2bfloat16 does the same. A
// magnitude beyond float32's range becomes ±MaxFloat32 (odd), still above
// every overflow threshold; NaN stays NaN.
//
// It works on the bits: Go's float64 to float32 conversion would do, but
// on amd64 it leaves a false dependency between loop iterations that makes
// bulk conversion three times slower.
func toOdd32(f float64) float32 {
	b := math.Float64bits(f)
	sign := uint32(b>>32) & (1 << 31)
	a := b &^ (1 << 63) // |f|
	var r uint32
	switch {
	case a >= 0x3810000000000000 && a < 0x47f0000000000000: // float32's normal range, [2^-126, 2^128)
		// Rebias the exponent (1023 to 127) and cut the fraction from 52
		// bits to 23, keeping a 1 in the last bit if anything was cut.
		r = uint32((a - (1023-127)<<52) >> 29)
		if a&(1<<29-1) != 0 {
			r |= 1
		}
	case a < 0x3810000000000000: // float32 subnormals and zero
		// The value is m * 2^(e-1075) with m the significand: in steps of
		// float32's subnormal 2^-149 that is m >> (926-e), and the shift is
		// at least 30.
		e := a >> 52
		m := a&(1<<52-1) | 1<<52
		if shift := 926 - e; shift < 64 {
			r = uint32(m >> shift)
			if m&(1<<shift-1) != 0 {
				r |= 1
			}
		} else if a != 0 { // far below 2^-149 (float64 subnormals included)
			r = 1
		}
	case a == 0x7ff0000000000000: // infinity
		r = 0x7f800000
	case a > 0x7ff0000000000000: // NaN
		r = 0x7fc00000
	default: // finite, |f| >= 2^128
		r = 0x7f7fffff
	}
	return math.Float32frombits(sign | r)
}
