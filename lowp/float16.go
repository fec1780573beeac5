package lowp

import (
	"fmt"
	"math"
	"strconv"
)

// Float16 is an IEEE 754 binary16 number (CUDA's __half), held as its bit
// pattern: a sign bit, 5 exponent bits with bias 15 and 10 fraction bits.
// Its finite range is ±65504; it has infinities, NaNs and subnormals down to
// 2^-24.
type Float16 uint16

// Limits of Float16.
const (
	MaxFloat16             = 65504   // largest finite value, 0x7bff
	SmallestNormalFloat16  = 0x1p-14 // 0x0400
	SmallestNonzeroFloat16 = 0x1p-24 // smallest subnormal, 0x0001
	EpsilonFloat16         = 0x1p-10 // 1 to the next value above it
)

const (
	float16Inf  = 0x7c00    // +Inf bits
	float16Min  = 0x0400    // SmallestNormalFloat16 bits
	float16Half = 1<<12 - 1 // half an ulp less one, at float32's fraction position
)

// Float16FromBits returns the Float16 with the bit pattern b.
func Float16FromBits(b uint16) Float16 { return Float16(b) }

// Float16FromFloat32 rounds f to the nearest Float16, ties to even, as
// CUDA's __float2half_rn (PTX cvt.rn.f16.f32): magnitudes from 65520 up
// overflow to infinity, results below 2^-14 are subnormal, and NaN gives
// the canonical NaN 0x7fff.
func Float16FromFloat32(f float32) Float16 {
	b := math.Float32bits(f)
	a := b &^ (1 << 31) // |f|
	if a > 0x7f800000 {
		return nanFloat16
	}
	// Both roundings are computed and one is selected, without branches
	// (conditional moves), so that mixed data costs no mispredictions; the
	// function is small enough for the compiler to inline.
	//
	// Normal results: rebias the exponent (127 to 15) and round the 23
	// fraction bits to 10, adding half an ulp less one plus the lowest
	// kept bit so that a tie goes to even. A carry out of the fraction
	// increments the exponent, up to infinity for [65520, 65536): right.
	n := (a - (127-15)<<23 + float16Half + (a>>13)&1) >> 13
	// |f| < 2^-14, subnormal results: in [0.5, 1) float32's ulp is 2^-24,
	// the subnormal step of Float16, so adding 0.5 rounds |f| to that step
	// (to nearest even, as Go's float32 arithmetic does) and the low bits
	// of the sum count the steps: 0.5's own bits, 0x3f000000, vanish in
	// the conversion to 16 bits. A count of 0x400 is the smallest normal,
	// whose encoding it is.
	s := math.Float32bits(math.Float32frombits(a) + 0.5)
	if a < 0x38800000 {
		n = s
	}
	if a >= 0x47800000 { // |f| >= 2^16 (beyond what rounds to finite), or infinite
		n = float16Inf
	}
	return Float16(b>>16&0x8000 | n)
}

// Float16FromFloat64 rounds f to the nearest Float16 with a single
// rounding, as CUDA's __double2half (PTX cvt.rn.f16.f64), with the rules of
// Float16FromFloat32. Converting through float32 first would round twice
// and be wrong for some inputs.
func Float16FromFloat64(f float64) Float16 {
	if f != f {
		return Float16(narrowNaN64(math.Float64bits(f), 10))
	}
	return Float16FromFloat32(toOdd32(f))
}

// Bits returns the bit pattern of x.
func (x Float16) Bits() uint16 { return uint16(x) }

// Float32 returns x as a float32, exactly (as __half2float, PTX
// cvt.f32.f16). Every NaN gives the canonical float32 NaN 0x7fffffff.
func (x Float16) Float32() float32 {
	a := uint32(x & 0x7fff)
	sign := uint32(x&0x8000) << 16
	switch {
	case a >= float16Inf:
		if a > float16Inf {
			return math.Float32frombits(nanFloat32)
		}
		return math.Float32frombits(sign | 0x7f800000)
	case a < float16Min: // zero or subnormal: a steps of 2^-24, exact in float32
		return math.Float32frombits(sign | math.Float32bits(float32(a)*0x1p-24))
	}
	return math.Float32frombits(sign | (a<<13 + (127-15)<<23))
}

// Float64 returns x as a float64, exactly: float64(x.Float32()), a NaN
// widened as cvt.f64.f32 widens it (sign and payload kept, quiet bit set).
func (x Float16) Float64() float64 {
	if x.IsNaN() {
		return widenNaN(math.Float32bits(x.Float32()))
	}
	return float64(x.Float32())
}

// IsNaN reports whether x is a NaN.
func (x Float16) IsNaN() bool { return x&0x7fff > float16Inf }

// IsInf reports whether x is an infinity, of either sign.
func (x Float16) IsInf() bool { return x&0x7fff == float16Inf }

// Signbit reports whether the sign bit of x is set (negative numbers, -0,
// and NaNs with the bit set).
func (x Float16) Signbit() bool { return x&0x8000 != 0 }

// String formats x as strconv.FormatFloat formats its float32 value with
// 'g' and the shortest precision: the exact value, "+Inf", "-Inf" or "NaN".
func (x Float16) String() string { return format32(x.Float32()) }

// Format implements fmt.Formatter: every verb, flag, width and precision
// formats x as it would its float32 value (%v as String, %.3f, %e, ...).
func (x Float16) Format(s fmt.State, verb rune) { formatVerb(s, verb, x.Float32()) }

func format32(f float32) string { return strconv.FormatFloat(float64(f), 'g', -1, 32) }

func formatVerb(s fmt.State, verb rune, f float32) { fmt.Fprintf(s, fmt.FormatString(s, verb), f) }
