package cudagen

import (
	"fmt"

	"github.com/gocu-dev/gocu/array/internal/backend"
)

// The storage types (int8 and the low-precision floats) are held in C as
// their bit patterns: signed char, unsigned short (float16, bfloat16) and
// unsigned char (the 8-bit floats). Kernels only load, store and convert
// them, with the conversions below, which give bit for bit what package
// lowp gives (and so what the GPU's cvt instructions give: lowp's own GPU
// test checks that). Where the architecture has a one-instruction
// conversion it is used (cvt.rn.f16.f32 and cvt.f32.f16 everywhere,
// cvt.rn.bf16.f32 from sm_80, cvt.rn.satfinite.e4m3x2/e5m2x2.f32 from
// sm_89); elsewhere, and on the host where the package tests run the
// kernels, a transcription of lowp's integer code. A float64 is narrowed
// with one rounding: first to float32 with round-to-odd (truncate, and set
// the last bit if anything was cut), which keeps every tie visible to the
// narrower format, then to nearest even, as lowp does. Widening a NaN gives
// the canonical float32 or float64 NaN, except bfloat16 to float32, which
// keeps the bits (as __bfloat162float).
const lowpHelpers = `
static __device__ __forceinline__ unsigned int gocu_fbits(float f) { return (unsigned int)__float_as_int(f); }
static __device__ __forceinline__ float gocu_bitsf(unsigned int b) { return __int_as_float((int)b); }
static __device__ __forceinline__ float gocu_to_odd32(double d) {
	float f = __double2float_rz(d);
	if (d == d && (double)f != d) f = gocu_bitsf(gocu_fbits(f) | 1u);
	return f;
}
static __device__ __forceinline__ double gocu_widen64(float f) { return (double)f; }
static __device__ __forceinline__ unsigned short gocu_nan64(double d, int frac) {
	const unsigned long long b = (unsigned long long)__double_as_longlong(d);
	const unsigned int exp = (1u << (15 - frac)) - 1u;
	return (unsigned short)(((b >> 48) & 0x8000u) | (exp << frac) | (1u << (frac - 1)) | ((b >> (52 - frac)) & ((1u << frac) - 1u)));
}
static __device__ __forceinline__ unsigned short gocu_f2h(float f) {
#if defined(__CUDA_ARCH__)
	unsigned short r;
	asm("cvt.rn.f16.f32 %0, %1;" : "=h"(r) : "f"(f));
	return r;
#else
	const unsigned int b = gocu_fbits(f), a = b & 0x7fffffffu;
	if (a > 0x7f800000u) return (unsigned short)0x7fff;
	unsigned int n = (a - (112u << 23) + 0xfffu + ((a >> 13) & 1u)) >> 13;
	if (a < 0x38800000u) n = gocu_fbits(gocu_bitsf(a) + 0.5f);
	if (a >= 0x47800000u) n = 0x7c00u;
	return (unsigned short)(((b >> 16) & 0x8000u) | (n & 0xffffu));
#endif
}
static __device__ __forceinline__ float gocu_h2f(unsigned short x) {
#if defined(__CUDA_ARCH__)
	float f;
	asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(x));
	return f;
#else
	const unsigned int a = x & 0x7fffu, sign = (unsigned int)(x & 0x8000u) << 16;
	if (a >= 0x7c00u) return gocu_bitsf(a > 0x7c00u ? 0x7fffffffu : (sign | 0x7f800000u));
	if (a < 0x400u) return gocu_bitsf(sign | gocu_fbits((float)a * 5.9604644775390625e-08f));
	return gocu_bitsf(sign | ((a << 13) + (112u << 23)));
#endif
}
static __device__ __forceinline__ unsigned short gocu_f2bf(float f) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
	unsigned short r;
	asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(r) : "f"(f));
	return r;
#else
	const unsigned int b = gocu_fbits(f);
	if ((b & 0x7fffffffu) > 0x7f800000u) return (unsigned short)0x7fff;
	return (unsigned short)((b + 0x7fffu + ((b >> 16) & 1u)) >> 16);
#endif
}
static __device__ __forceinline__ float gocu_bf2f(unsigned short x) { return gocu_bitsf((unsigned int)x << 16); }
static __device__ __forceinline__ unsigned char gocu_f2e4m3(float f) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 890
	unsigned short r;
	asm("cvt.rn.satfinite.e4m3x2.f32 %0, %1, %2;" : "=h"(r) : "f"(f), "f"(f));
	return (unsigned char)(r & 0xffu);
#else
	const unsigned int b = gocu_fbits(f), a = b & 0x7fffffffu;
	if (a > 0x7f800000u) return (unsigned char)0x7f;
	unsigned int n = (a - (120u << 23) + (1u << 19) - 1u + ((a >> 20) & 1u)) >> 20;
	if (a < 0x3c800000u) n = gocu_fbits(gocu_bitsf(a) + 16384.0f);
	if (a > 0x43e00000u) n = 0x7eu;
	return (unsigned char)(((b >> 24) & 0x80u) | (n & 0xffu));
#endif
}
static __device__ __forceinline__ unsigned char gocu_f2e5m2(float f) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 890
	unsigned short r;
	asm("cvt.rn.satfinite.e5m2x2.f32 %0, %1, %2;" : "=h"(r) : "f"(f), "f"(f));
	return (unsigned char)(r & 0xffu);
#else
	const unsigned int b = gocu_fbits(f), a = b & 0x7fffffffu;
	if (a > 0x7f800000u) return (unsigned char)0x7f;
	unsigned int n = (a - (112u << 23) + (1u << 20) - 1u + ((a >> 21) & 1u)) >> 21;
	if (a < 0x38800000u) n = gocu_fbits(gocu_bitsf(a) + 128.0f);
	if (a > 0x47600000u) n = 0x7bu;
	return (unsigned char)(((b >> 24) & 0x80u) | (n & 0xffu));
#endif
}
static __device__ __forceinline__ float gocu_e4m32f(unsigned char x) {
	const unsigned int sign = (unsigned int)(x & 0x80u) << 24, e = (x >> 3) & 0xfu, m = x & 7u;
	if ((x & 0x7fu) == 0x7fu) return gocu_bitsf(0x7fffffffu);
	if (e == 0) return gocu_bitsf(sign | gocu_fbits((float)m * 0.001953125f));
	return gocu_bitsf(sign | ((e + 120u) << 23) | (m << 20));
}
static __device__ __forceinline__ float gocu_e5m22f(unsigned char x) { return gocu_h2f((unsigned short)((unsigned short)x << 8)); }
static __device__ __forceinline__ signed char gocu_f2i8(double x) {
	return x != x ? (signed char)0 : x <= -128.0 ? (signed char)-128 : x >= 127.0 ? (signed char)127 : (signed char)(int)x;
}
static __device__ __forceinline__ signed char gocu_rint8(float f) {
#if defined(__CUDA_ARCH__)
	int i;
	asm("cvt.rni.sat.s32.f32 %0, %1;" : "=r"(i) : "f"(f));
	i = f != f ? 0 : i; // NaN to 0, whatever the conversion makes of it
#else
	const int i = f != f ? 0 : f <= -128.0f ? -128 : f >= 127.0f ? 127 : (int)rintf(f);
#endif
	return (signed char)(i < -128 ? -128 : i > 127 ? 127 : i);
}
static __device__ __forceinline__ short gocu_f2i16(double x) {
	return x != x ? (short)0 : x <= -32768.0 ? (short)-32768 : x >= 32767.0 ? (short)32767 : (short)(int)x;
}
static __device__ __forceinline__ unsigned short gocu_f2u16(double x) {
	return x != x || x <= 0.0 ? (unsigned short)0 : x >= 65535.0 ? (unsigned short)65535 : (unsigned short)(int)x;
}
static __device__ __forceinline__ unsigned int gocu_f2u32(double x) {
	return x != x || x <= 0.0 ? 0u : x >= 4294967295.0 ? 4294967295u : (unsigned int)x;
}
static __device__ __forceinline__ unsigned long long gocu_f2u64(double x) {
	return x != x || x <= 0.0 ? 0ull : x >= 18446744073709551616.0 ? 18446744073709551615ull : (unsigned long long)x;
}
`

// floatToInt names the saturating float conversions of the integer
// storage types other than int8.
var floatToInt = map[backend.DType]string{backend.Int16: "gocu_f2i16", backend.Uint16: "gocu_f2u16",
	backend.Uint32: "gocu_f2u32", backend.Uint64: "gocu_f2u64"}

// lowpNarrow and lowpWiden name the float32 conversions of each
// low-precision float.
var (
	lowpNarrow = map[backend.DType]string{backend.Float16: "gocu_f2h", backend.BFloat16: "gocu_f2bf",
		backend.Float8E4M3: "gocu_f2e4m3", backend.Float8E5M2: "gocu_f2e5m2"}
	lowpWiden = map[backend.DType]string{backend.Float16: "gocu_h2f", backend.BFloat16: "gocu_bf2f",
		backend.Float8E4M3: "gocu_e4m32f", backend.Float8E5M2: "gocu_e5m22f"}
)

// castStorageC converts to or from a storage type, for the pairs
// backend.CastDefined allows; ok is false for any other pair.
func castStorageC(from, to backend.DType, a string) (string, bool) {
	switch {
	case from.IsStorageInt() && (to == from.Compute() || to.IsFloat()):
		// C's conversions: sign or zero extension, uint64 to float unsigned.
		return fmt.Sprintf("((%s)%s)", ctype(to), a), true
	case to.IsStorageInt() && from == to.Compute():
		return fmt.Sprintf("((%s)%s)", ctype(to), a), true // wraps, as on the CPU
	case to == backend.Int8 && from.IsFloat():
		return fmt.Sprintf("gocu_f2i8((double)%s)", a), true
	case to.IsStorageInt() && from.IsFloat():
		return fmt.Sprintf("%s((double)%s)", floatToInt[to], a), true
	case from.IsLowp() && to == backend.Float32:
		return fmt.Sprintf("%s(%s)", lowpWiden[from], a), true
	case from.IsLowp() && to == backend.Float64:
		return fmt.Sprintf("gocu_widen64(%s(%s))", lowpWiden[from], a), true
	case to.IsLowp() && from == backend.Float32:
		return fmt.Sprintf("%s(%s)", lowpNarrow[to], a), true
	case (to == backend.Float16 || to == backend.BFloat16) && from == backend.Float64:
		// cvt.rn.f16.f64 and cvt.rn.bf16.f64 keep a NaN's sign and top
		// fraction bits, as lowp does.
		frac := 10
		if to == backend.BFloat16 {
			frac = 7
		}
		return fmt.Sprintf("((%s) != (%s) ? gocu_nan64(%s, %d) : %s(gocu_to_odd32(%s)))", a, a, a, frac, lowpNarrow[to], a), true
	case to.IsLowp() && from == backend.Float64:
		return fmt.Sprintf("%s(gocu_to_odd32(%s))", lowpNarrow[to], a), true
	}
	return "", false
}

// QMax is the largest value of a quantisation type: the magnitude a row's
// largest element is scaled to.
func QMax(dt backend.DType) float64 {
	switch dt {
	case backend.Int8:
		return 127
	case backend.Float8E4M3:
		return 448
	case backend.Float8E5M2:
		return 57344
	}
	return 0
}

// scaleC is the scale of a row whose largest magnitude is m: m/qmax, 1
// where that is 0, the canonical NaN for NaN (whichever NaN of the row m
// is).
func scaleC(dt backend.DType) string {
	q := fmt.Sprintf("%.1ff", QMax(dt))
	return fmt.Sprintf("(m != m ? __int_as_float(0x7fffffff) : m / %s == 0.0f ? 1.0f : m / %s)", q, q)
}

// quantConv converts the float32 expression y to a quantisation type:
// rounded to nearest even and saturated for int8 (NaN to 0), the 8-bit
// float's own rounding and saturation otherwise. For int8 that is one
// conversion on a GPU (gocu_rint8), where rintf and the conversion of its
// result were two: on sm_90 a conversion issues at an eighth of the rate
// of float arithmetic (16 a clock per SM).
func quantConv(dt backend.DType, y string) string {
	if dt == backend.Int8 {
		return fmt.Sprintf("gocu_rint8(%s)", y)
	}
	return fmt.Sprintf("%s(%s)", lowpNarrow[dt], y)
}
