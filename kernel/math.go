package kernel

import "math"

// float32 math. Each function becomes the CUDA function of the same meaning
// with an f suffix (Sqrt is sqrtf, Exp is expf, FMA is fmaf, ...). In Go
// they compute in float64 and round once to float32, which is correctly
// rounded for Sqrt and FMA and within CUDA's documented error bounds for the
// rest. For float64 kernel code uses Go's math package, which the translator
// maps to CUDA's double-precision functions.

func Sqrt(x float32) float32  { return float32(math.Sqrt(float64(x))) }
func Rsqrt(x float32) float32 { return float32(1 / math.Sqrt(float64(x))) }
func Cbrt(x float32) float32  { return float32(math.Cbrt(float64(x))) }
func Exp(x float32) float32   { return float32(math.Exp(float64(x))) }
func Exp2(x float32) float32  { return float32(math.Exp2(float64(x))) }

// FastExp2 returns 2**x as the GPU's fast path computes it (PTX
// ex2.approx.ftz.f32, what exp2f becomes under --use_fast_math): one
// instruction where Exp2 takes four, at most 2 ulp off, with a subnormal x
// read as 0 and results below the smallest normal float32 (2**-126)
// returned as 0. Softmax kernels use it for exp2(x - max), where x - max
// <= 0 and results that small do not count. The simulator computes exp2
// correctly rounded and flushes the same way, so it can differ from the
// GPU in the last two bits.
func FastExp2(x float32) float32 {
	if r := float32(math.Exp2(float64(x))); !(r < 0x1p-126) {
		return r
	}
	return 0
}

func Expm1(x float32) float32 { return float32(math.Expm1(float64(x))) }
func Log(x float32) float32   { return float32(math.Log(float64(x))) }
func Log2(x float32) float32  { return float32(math.Log2(float64(x))) }
func Log10(x float32) float32 { return float32(math.Log10(float64(x))) }
func Log1p(x float32) float32 { return float32(math.Log1p(float64(x))) }
func Sin(x float32) float32   { return float32(math.Sin(float64(x))) }
func Cos(x float32) float32   { return float32(math.Cos(float64(x))) }
func Tan(x float32) float32   { return float32(math.Tan(float64(x))) }
func Asin(x float32) float32  { return float32(math.Asin(float64(x))) }
func Acos(x float32) float32  { return float32(math.Acos(float64(x))) }
func Atan(x float32) float32  { return float32(math.Atan(float64(x))) }
func Sinh(x float32) float32  { return float32(math.Sinh(float64(x))) }
func Cosh(x float32) float32  { return float32(math.Cosh(float64(x))) }
func Tanh(x float32) float32  { return float32(math.Tanh(float64(x))) }
func Erf(x float32) float32   { return float32(math.Erf(float64(x))) }
func Floor(x float32) float32 { return float32(math.Floor(float64(x))) }
func Ceil(x float32) float32  { return float32(math.Ceil(float64(x))) }
func Trunc(x float32) float32 { return float32(math.Trunc(float64(x))) }

// Round rounds half away from zero (CUDA roundf).
func Round(x float32) float32 { return float32(math.Round(float64(x))) }

func Abs(x float32) float32      { return math.Float32frombits(math.Float32bits(x) &^ (1 << 31)) }
func Atan2(y, x float32) float32 { return float32(math.Atan2(float64(y), float64(x))) }
func Pow(x, y float32) float32   { return float32(math.Pow(float64(x), float64(y))) }
func Mod(x, y float32) float32   { return float32(math.Mod(float64(x), float64(y))) }

// FMA returns x*y+z rounded once (CUDA fmaf).
func FMA(x, y, z float32) float32 {
	// x*y is exact in float64. The sum is rounded to odd (a rounding to
	// nearest corrected by its exact error), after which rounding to
	// float32 is the single correct rounding: float64 has more than
	// 24+2 bits. Rounding to nearest twice would be wrong in the rare case
	// where the first rounding lands on a float32 midpoint.
	p, w := float64(x)*float64(y), float64(z)
	s := p + w
	b := s - p
	e := (p - (s - b)) + (w - b) // s + e == p + w exactly (TwoSum)
	if e != 0 && math.Float64bits(s)&1 == 0 && !math.IsInf(s, 0) {
		s = math.Nextafter(s, math.Copysign(math.Inf(1), e))
	}
	return float32(s)
}

// Min returns the smaller of x and y; if one is NaN it returns the other
// (CUDA fminf). Go's built-in min, which returns NaN, is also available and
// keeps its Go meaning on the GPU.
func Min(x, y float32) float32 {
	switch {
	case x != x:
		return y
	case y != y:
		return x
	case x < y || (x == y && math.Signbit(float64(x))):
		return x
	}
	return y
}

// Max returns the larger of x and y; if one is NaN it returns the other
// (CUDA fmaxf).
func Max(x, y float32) float32 {
	switch {
	case x != x:
		return y
	case y != y:
		return x
	case x > y || (x == y && !math.Signbit(float64(x))):
		return x
	}
	return y
}

// IsNaN reports whether x is a NaN (CUDA isnan).
func IsNaN(x float32) bool { return x != x }

// IsInf reports whether x is an infinity (CUDA isinf).
func IsInf(x float32) bool { return x > math.MaxFloat32 || x < -math.MaxFloat32 }
