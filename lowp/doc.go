// Package lowp holds the low-precision floating-point formats of NVIDIA
// GPUs, in pure Go: their types, and conversions that give bit for bit
// what the GPU's conversion instructions give. It is the one
// implementation of these formats in gocu: the arrays' dtypes, the
// simulator and kernel code use it.
//
// # Formats
//
// Each type holds the bit pattern of one number (Bits, and FromBits to
// build one); its zero value is +0.
//
//	type        CUDA             sign.exp.frac  bias  largest finite  smallest normal  smallest subnormal  infinities  NaN
//	Float16     __half           1.5.10         15    65504           2^-14            2^-24               yes         exp all ones, frac != 0
//	BFloat16    __nv_bfloat16    1.8.7          127   ≈3.39e38        2^-126           2^-133              yes         exp all ones, frac != 0
//	Float8E4M3  __nv_fp8_e4m3    1.4.3          7     448             2^-6             2^-9                no          S.1111.111 only
//	Float8E5M2  __nv_fp8_e5m2    1.5.2          15    57344           2^-14            2^-16               yes         exp all ones, frac != 0
//
// Float16 is IEEE 754 binary16; BFloat16 is the upper half of a float32;
// Float8E4M3 and Float8E5M2 are the OCP 8-bit formats (E4M3 is the "fn"
// variant: the top exponent holds finite values, there is one NaN per
// sign and no infinity).
//
// # Narrowing
//
// The FromFloat32 and FromFloat64 functions of each type (and
// FromFloat32s, FromFloat64s) follow these rules, which are those of PTX
// cvt.rn.f16.f32, cvt.rn.bf16.f32, cvt.rn.satfinite.e4m3x2.f32 and
// cvt.rn.satfinite.e5m2x2.f32:
//
//   - Rounding is to nearest; a value exactly halfway between two
//     neighbours goes to the one whose bit pattern is even.
//   - A float64 is rounded once, directly to the format, as
//     __double2half does; it is not rounded to float32 first, which would
//     round twice and differ for some inputs.
//   - Nothing is flushed to zero: float32 and float64 subnormal inputs are
//     rounded like any other value, and results below the smallest normal
//     are subnormal.
//   - Zero keeps its sign, and a negative value that rounds to zero gives
//     -0.
//   - Float16 and BFloat16 overflow to infinity: a magnitude at or above
//     the largest finite value plus half its ulp (65520 for Float16,
//     0x1.ffp127 for BFloat16) gives ±Inf, since that tie rounds to the
//     even pattern, which is infinity's. Infinities stay infinities.
//   - Float8E4M3 and Float8E5M2 saturate (.satfinite, __NV_SATFINITE): a
//     magnitude above the largest finite value, an infinity included,
//     gives ±448 or ±57344. No conversion produces an 8-bit infinity.
//   - From float32, every NaN, whatever its sign and payload, gives the
//     format's canonical NaN: positive, with every fraction bit set (0x7fff
//     for Float16 and BFloat16, 0x7f for both 8-bit formats). From
//     float64, Float16 and BFloat16 keep the NaN's sign and the top bits of
//     its fraction, with the quiet bit set (0x7ff8000000000001 gives 0x7e00
//     and 0x7fc0), as cvt.rn.f16.f64 and cvt.rn.bf16.f64 do on an H100.
//
// # Widening
//
// The Float32 and Float64 methods (and ToFloat32s, ToFloat64s) are exact:
// every value of every format is a float32. A NaN gives the canonical
// float32 NaN 0x7fffffff, except from BFloat16.Float32, which shifts the
// bits into the upper half of a float32 as __bfloat162float does and so
// keeps a NaN's sign and payload. Float64 is float64(x.Float32()) with a
// NaN widened as cvt.f64.f32 widens it: sign and payload kept, the quiet
// bit set (0x7fffffffe0000000 from 0x7fffffff). Converting
// an E5M2 infinity back saturates it: E5M2's infinities survive widening
// but not a round trip.
//
// # CUDA
//
//	lowp                     CUDA intrinsic                                 PTX
//	Float16FromFloat32       __float2half_rn                                cvt.rn.f16.f32
//	Float16FromFloat64       __double2half                                  cvt.rn.f16.f64
//	Float16.Float32          __half2float                                   cvt.f32.f16
//	BFloat16FromFloat32      __float2bfloat16_rn                            cvt.rn.bf16.f32
//	BFloat16FromFloat64      __double2bfloat16                              cvt.rn.bf16.f64 (sm_90)
//	BFloat16.Float32         __bfloat162float                               mov.b32 {0, x}
//	Float8E4M3FromFloat32    __nv_cvt_float_to_fp8(x, __NV_SATFINITE, __NV_E4M3)  cvt.rn.satfinite.e4m3x2.f32
//	Float8E5M2FromFloat32    __nv_cvt_float_to_fp8(x, __NV_SATFINITE, __NV_E5M2)  cvt.rn.satfinite.e5m2x2.f32
//	Float8E4M3.Float32       float(__nv_fp8_e4m3)                           cvt.rn.f16x2.e4m3x2, cvt.f32.f16
//	Float8E5M2.Float32       float(__nv_fp8_e5m2)                           cvt.rn.f16x2.e5m2x2, cvt.f32.f16
//
// The 8-bit float64 conversions match __nv_cvt_double_to_fp8 with
// __NV_SATFINITE except for NaN, where that function passes on the sign
// and the top fraction bits and this package gives the canonical NaN.
// The package's GPU test (gpu_test.go) checks these correspondences on the
// GPU present: on an H100 (2026-11-25) every one of them agreed bit for bit
// over all 2^16 half and bfloat16 patterns, all 256 of each 8-bit format,
// 52.7 million float32 inputs and 1.7 million float64 inputs.
//
// # Bulk conversion and formatting
//
// FromFloat32s, FromFloat64s, ToFloat32s and ToFloat64s convert slices of
// any of the formats (the Float constraint), like copy: as many elements as
// the shorter slice holds. They allocate nothing and run on the calling
// goroutine; split large slices across goroutines to use several cores.
//
// String formats a value as strconv.FormatFloat formats its float32 value
// with 'g' and the shortest precision (the exact value, "+Inf", "NaN"), and
// the Format methods make fmt's verbs, widths and precisions (%v, %.3f,
// %e, ...) act on that float32.
package lowp
