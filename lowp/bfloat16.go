package lowp

import (
	"fmt"
	"math"
)

// BFloat16 is a bfloat16 number (CUDA's __nv_bfloat16), held as its bit
// pattern: the upper half of a float32, with a sign bit, 8 exponent bits
// with bias 127 and 7 fraction bits. It has float32's range (finite values
// up to about ±3.39e38), infinities, NaNs and subnormals down to 2^-133.
type BFloat16 uint16

// Limits of BFloat16.
const (
	MaxBFloat16             = 0x1.fep127 // largest finite value, 0x7f7f
	SmallestNormalBFloat16  = 0x1p-126   // 0x0080
	SmallestNonzeroBFloat16 = 0x1p-133   // smallest subnormal, 0x0001
	EpsilonBFloat16         = 0x1p-7     // 1 to the next value above it
)

const bfloat16Inf = 0x7f80 // +Inf bits

// BFloat16FromBits returns the BFloat16 with the bit pattern b.
func BFloat16FromBits(b uint16) BFloat16 { return BFloat16(b) }

// BFloat16FromFloat32 rounds f to the nearest BFloat16, ties to even, as
// CUDA's __float2bfloat16_rn (PTX cvt.rn.bf16.f32): magnitudes from
// 0x1.ffp127 up overflow to infinity, float32 subnormals round to bfloat16
// subnormals (nothing is flushed to zero), and NaN gives the canonical NaN
// 0x7fff.
func BFloat16FromFloat32(f float32) BFloat16 {
	b := math.Float32bits(f)
	if b&^(1<<31) > 0x7f800000 {
		return nanBFloat16
	}
	// Half an ulp minus one, plus the lowest kept bit for ties to even. A
	// carry runs into the exponent, up to infinity, which is right; the
	// sign bit cannot be reached from below 0x7f800000.
	return BFloat16((b + 0x7fff + (b>>16)&1) >> 16)
}

// BFloat16FromFloat64 rounds f to the nearest BFloat16 with a single
// rounding, as CUDA's __double2bfloat16, with the rules of
// BFloat16FromFloat32.
func BFloat16FromFloat64(f float64) BFloat16 {
	if f != f {
		return BFloat16(narrowNaN64(math.Float64bits(f), 7))
	}
	return BFloat16FromFloat32(toOdd32(f))
}

// Bits returns the bit pattern of x.
func (x BFloat16) Bits() uint16 { return uint16(x) }

// Float32 returns x as a float32, exactly: its bits shifted into the upper
// half, as CUDA's __bfloat162float does (mov.b32 d, {0, x}). Unlike every
// other conversion here it keeps a NaN's sign and payload, since that is
// what the intrinsic does.
func (x BFloat16) Float32() float32 { return math.Float32frombits(uint32(x) << 16) }

// Float64 returns x as a float64, exactly: float64(x.Float32()), a NaN
// widened as cvt.f64.f32 widens it (sign and payload kept, quiet bit set).
func (x BFloat16) Float64() float64 {
	if x.IsNaN() {
		return widenNaN(math.Float32bits(x.Float32()))
	}
	return float64(x.Float32())
}

// IsNaN reports whether x is a NaN.
func (x BFloat16) IsNaN() bool { return x&0x7fff > bfloat16Inf }

// IsInf reports whether x is an infinity, of either sign.
func (x BFloat16) IsInf() bool { return x&0x7fff == bfloat16Inf }

// Signbit reports whether the sign bit of x is set.
func (x BFloat16) Signbit() bool { return x&0x8000 != 0 }

// String formats x as strconv.FormatFloat formats its float32 value with
// 'g' and the shortest precision.
func (x BFloat16) String() string { return format32(x.Float32()) }

// Format implements fmt.Formatter, formatting x as its float32 value.
func (x BFloat16) Format(s fmt.State, verb rune) { formatVerb(s, verb, x.Float32()) }
