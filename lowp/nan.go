package lowp

// The NaN bit patterns the conversions produce. A conversion never passes a
// NaN's sign or payload on, except BFloat16.Float32 (see there): every NaN
// input gives the one canonical NaN of the result format, positive, with
// all fraction bits set, which is what the GPU's cvt instructions produce
// and what CUDA's host fallbacks in cuda_fp16.hpp, cuda_bf16.hpp and
// cuda_fp8.hpp (__internal_float2half, __internal_float2bfloat16,
// __nv_cvt_float_to_fp8, __internal_halfraw_to_float) write. The GPU test
// (gpu_test.go) compares each with the hardware; should a GPU disagree,
// this is the one place to change.
const (
	nanFloat16  = 0x7fff // cvt.rn.f16.f32 of a NaN
	nanBFloat16 = 0x7fff // cvt.rn.bf16.f32 of a NaN
	nanE4M3     = 0x7f   // cvt.rn.satfinite.e4m3x2.f32 of a NaN
	nanE5M2     = 0x7f   // cvt.rn.satfinite.e5m2x2.f32 of a NaN
	nanFloat32  = 0x7fffffff
	nanFloat64  = 0x7fffffffffffffff
)
