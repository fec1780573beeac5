package lowp

import "math"

// toOdd32 rounds f to float32 with round-to-odd: when f is not exactly a
// float32, the result is the float32 next to f towards zero with its
// lowest bit set. Round-to-odd keeps the information that rounding to
// nearest needs (whether f was above, below or on a tie point of the
// narrower format) provided the intermediate format has at least two bits
// more than the final one, which float32 has over each format here, in the
// subnormal ranges too. So rounding toOdd32(f) to nearest even is a single
// correct rounding of f; this is what cuda_bf16.hpp's __double2bfloat16
// does. A magnitude beyond float32's range becomes ±MaxFloat32 (odd),
// still above every overflow threshold; one below becomes the smallest
// float32 subnormal, still below every rounding threshold; NaN stays NaN.
func toOdd32(f float64) float32 {
	r := float32(f) // Go rounds to nearest even here
	b := math.Float32bits(r)
	if math.Abs(float64(r)) > math.Abs(f) {
		b-- // rounded away from zero: step back towards it
	}
	if float64(r) != f { // inexact (or NaN, which stays NaN)
		b |= 1
	}
	return math.Float32frombits(b)
}
