package lowp

import (
	"fmt"
	"math"
)

// Float8E4M3 is an 8-bit float of the OCP FP8 E4M3 format (NVIDIA's
// __nv_fp8_e4m3, "e4m3fn"), held as its bit pattern: a sign bit, 4
// exponent bits with bias 7 and 3 fraction bits. It has no infinities: the
// exponent 1111 holds finite values up to ±448 and S.1111.111 is NaN.
// Subnormals go down to 2^-9.
type Float8E4M3 uint8

// Float8E5M2 is an 8-bit float of the OCP FP8 E5M2 format (NVIDIA's
// __nv_fp8_e5m2), held as its bit pattern: a sign bit, 5 exponent bits with
// bias 15 and 2 fraction bits, the upper byte of a Float16. Like Float16 it
// has infinities (S.11111.00) and NaNs (S.11111.xx, xx != 0); its finite
// range is ±57344 and subnormals go down to 2^-16.
type Float8E5M2 uint8

// Limits of the 8-bit formats.
const (
	MaxFloat8E4M3             = 448     // largest finite value, 0x7e
	SmallestNormalFloat8E4M3  = 0x1p-6  // 0x08
	SmallestNonzeroFloat8E4M3 = 0x1p-9  // smallest subnormal, 0x01
	EpsilonFloat8E4M3         = 0x1p-3  // 1 to the next value above it
	MaxFloat8E5M2             = 57344   // largest finite value, 0x7b
	SmallestNormalFloat8E5M2  = 0x1p-14 // 0x04
	SmallestNonzeroFloat8E5M2 = 0x1p-16 // smallest subnormal, 0x01
	EpsilonFloat8E5M2         = 0x1p-2  // 1 to the next value above it
)

const (
	e4m3Max = 0x7e // MaxFloat8E4M3 bits
	e5m2Max = 0x7b // MaxFloat8E5M2 bits
	e5m2Inf = 0x7c // +Inf bits
)

// Float8E4M3FromBits returns the Float8E4M3 with the bit pattern b.
func Float8E4M3FromBits(b uint8) Float8E4M3 { return Float8E4M3(b) }

// Float8E4M3FromFloat32 rounds f to the nearest Float8E4M3, ties to even,
// saturating: every magnitude above 448, infinities included, gives ±448.
// This is __nv_cvt_float_to_fp8(f, __NV_SATFINITE, __NV_E4M3), PTX
// cvt.rn.satfinite.e4m3x2.f32. Results below 2^-6 are subnormal; NaN gives
// the canonical NaN 0x7f.
func Float8E4M3FromFloat32(f float32) Float8E4M3 {
	b := math.Float32bits(f)
	a := b &^ (1 << 31) // |f|
	if a > 0x7f800000 {
		return nanE4M3
	}
	// As in Float16FromFloat32: the normal rounding (exponent 127 to 7,
	// fraction 23 bits to 3) and the subnormal one (float32's ulp at 2^14
	// is 2^-9, the subnormal step; 2^14's bits end in a zero byte), then a
	// branch-free selection.
	n := (a - (127-7)<<23 + 1<<19 - 1 + (a>>20)&1) >> 20
	s := math.Float32bits(math.Float32frombits(a) + 0x1p14)
	if a < 0x3c800000 { // |f| < 2^-6
		n = s
	}
	if a > 0x43e00000 { // |f| > 448, infinities included: saturate
		n = e4m3Max
	}
	return Float8E4M3(b>>24&0x80 | n)
}

// Float8E4M3FromFloat64 rounds f to Float8E4M3 with a single rounding and
// the rules of Float8E4M3FromFloat32, as __nv_cvt_double_to_fp8(f,
// __NV_SATFINITE, __NV_E4M3) except that every NaN gives 0x7f.
func Float8E4M3FromFloat64(f float64) Float8E4M3 { return Float8E4M3FromFloat32(toOdd32(f)) }

// Bits returns the bit pattern of x.
func (x Float8E4M3) Bits() uint8 { return uint8(x) }

// Float32 returns x as a float32, exactly (as CUDA's float(__nv_fp8_e4m3),
// PTX cvt.rn.f16x2.e4m3x2 then cvt.f32.f16). NaN gives the canonical
// float32 NaN 0x7fffffff.
func (x Float8E4M3) Float32() float32 { return math.Float32frombits(e4m3Table[x]) }

// Float64 returns x as a float64, exactly. NaN gives the canonical float64
// NaN 0x7fffffffffffffff.
func (x Float8E4M3) Float64() float64 { return math.Float64frombits(e4m3Table64[x]) }

// IsNaN reports whether x is NaN (S.1111.111).
func (x Float8E4M3) IsNaN() bool { return x&0x7f == 0x7f }

// IsInf reports false: E4M3 has no infinities. It is there so that the
// four formats have the same methods.
func (x Float8E4M3) IsInf() bool { return false }

// Signbit reports whether the sign bit of x is set.
func (x Float8E4M3) Signbit() bool { return x&0x80 != 0 }

// String formats x as strconv.FormatFloat formats its float32 value with
// 'g' and the shortest precision.
func (x Float8E4M3) String() string { return format32(x.Float32()) }

// Format implements fmt.Formatter, formatting x as its float32 value.
func (x Float8E4M3) Format(s fmt.State, verb rune) { formatVerb(s, verb, x.Float32()) }

// Float8E5M2FromBits returns the Float8E5M2 with the bit pattern b.
func Float8E5M2FromBits(b uint8) Float8E5M2 { return Float8E5M2(b) }

// Float8E5M2FromFloat32 rounds f to the nearest Float8E5M2, ties to even,
// saturating: every magnitude above 57344, infinities included, gives
// ±57344. This is __nv_cvt_float_to_fp8(f, __NV_SATFINITE, __NV_E5M2), PTX
// cvt.rn.satfinite.e5m2x2.f32. Results below 2^-14 are subnormal; NaN
// gives the canonical NaN 0x7f.
func Float8E5M2FromFloat32(f float32) Float8E5M2 {
	b := math.Float32bits(f)
	a := b &^ (1 << 31) // |f|
	if a > 0x7f800000 {
		return nanE5M2
	}
	// As in Float8E4M3FromFloat32, with the exponent rebiased 127 to 15,
	// the fraction rounded to 2 bits and the subnormal step 2^-16, the
	// ulp of float32 at 2^7.
	n := (a - (127-15)<<23 + 1<<20 - 1 + (a>>21)&1) >> 21
	s := math.Float32bits(math.Float32frombits(a) + 0x1p7)
	if a < 0x38800000 { // |f| < 2^-14
		n = s
	}
	if a > 0x47600000 { // |f| > 57344, infinities included: saturate
		n = e5m2Max
	}
	return Float8E5M2(b>>24&0x80 | n)
}

// Float8E5M2FromFloat64 rounds f to Float8E5M2 with a single rounding and
// the rules of Float8E5M2FromFloat32, as __nv_cvt_double_to_fp8(f,
// __NV_SATFINITE, __NV_E5M2) except that every NaN gives 0x7f.
func Float8E5M2FromFloat64(f float64) Float8E5M2 { return Float8E5M2FromFloat32(toOdd32(f)) }

// Bits returns the bit pattern of x.
func (x Float8E5M2) Bits() uint8 { return uint8(x) }

// Float32 returns x as a float32, exactly (as CUDA's float(__nv_fp8_e5m2),
// PTX cvt.rn.f16x2.e5m2x2 then cvt.f32.f16). NaNs give the canonical
// float32 NaN 0x7fffffff.
func (x Float8E5M2) Float32() float32 { return math.Float32frombits(e5m2Table[x]) }

// Float64 returns x as a float64, exactly. NaNs give the canonical float64
// NaN 0x7fffffffffffffff.
func (x Float8E5M2) Float64() float64 { return math.Float64frombits(e5m2Table64[x]) }

// IsNaN reports whether x is a NaN.
func (x Float8E5M2) IsNaN() bool { return x&0x7f > e5m2Inf }

// IsInf reports whether x is an infinity, of either sign.
func (x Float8E5M2) IsInf() bool { return x&0x7f == e5m2Inf }

// Signbit reports whether the sign bit of x is set.
func (x Float8E5M2) Signbit() bool { return x&0x80 != 0 }

// String formats x as strconv.FormatFloat formats its float32 value with
// 'g' and the shortest precision.
func (x Float8E5M2) String() string { return format32(x.Float32()) }

// Format implements fmt.Formatter, formatting x as its float32 value.
func (x Float8E5M2) Format(s fmt.State, verb rune) { formatVerb(s, verb, x.Float32()) }
