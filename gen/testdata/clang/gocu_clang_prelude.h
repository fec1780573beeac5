// Prelude for checking generated CUDA with clang-16 alone:
//   clang-16 -x cuda --cuda-device-only -nocudainc -nocudalib
//     --cuda-gpu-arch=sm_90 -I<this dir> -include gocu_clang_prelude.h
// It stands in for what NVRTC provides implicitly (the CUDA headers): the
// attributes, the built-in variables, vector types, math, atomics, shuffles
// and votes, mostly through clang's own CUDA wrapper headers. It is used
// only by the tests; NVRTC never sees it.
#define CUDA_VERSION 12000
// As NVRTC defines for an arch-specific target (sm_90a), so that the
// warpgroup MMA prelude emits its PTX rather than a trap.
#define __CUDA_ARCH_FEAT_SM90_ALL 1
#define __host__ __attribute__((host))
#define __global__ __attribute__((global))
#define __device__ __attribute__((device))
#define __shared__ __attribute__((shared))
#define __constant__ __attribute__((constant))
#define __forceinline__ __inline__ __attribute__((always_inline))
#define __noinline__ __attribute__((noinline))
#define __launch_bounds__(...) __attribute__((launch_bounds(__VA_ARGS__)))
#define __align__(n) __attribute__((aligned(n)))
typedef __SIZE_TYPE__ size_t;
typedef unsigned int cuuint32_t;
#define INT_MAX __INT_MAX__
#define INT_MIN (-__INT_MAX__ - 1)
#define HUGE_VAL __builtin_huge_val()
#define HUGE_VALF __builtin_huge_valf()

#define GOCU_VEC1(T, N, A) struct __align__(A) N { T x; };
#define GOCU_VEC2(T, N, A) struct __align__(A) N { T x, y; };
#define GOCU_VEC3(T, N, A) struct __align__(A) N { T x, y, z; };
#define GOCU_VEC4(T, N, A) struct __align__(A) N { T x, y, z, w; };
#define GOCU_VECS(T, P, A1, A2, A3, A4) GOCU_VEC1(T, P##1, A1) GOCU_VEC2(T, P##2, A2) GOCU_VEC3(T, P##3, A3) GOCU_VEC4(T, P##4, A4)
GOCU_VECS(char, char, 1, 2, 1, 4)
GOCU_VECS(unsigned char, uchar, 1, 2, 1, 4)
GOCU_VECS(short, short, 2, 4, 2, 8)
GOCU_VECS(unsigned short, ushort, 2, 4, 2, 8)
GOCU_VECS(int, int, 4, 8, 4, 16)
GOCU_VECS(unsigned int, uint, 4, 8, 4, 16)
GOCU_VECS(long, long, 8, 16, 8, 16)
GOCU_VECS(unsigned long, ulong, 8, 16, 8, 16)
GOCU_VECS(long long, longlong, 8, 16, 8, 16)
GOCU_VECS(unsigned long long, ulonglong, 8, 16, 8, 16)
GOCU_VECS(float, float, 4, 8, 4, 16)
GOCU_VECS(double, double, 8, 16, 8, 16)

#include <__clang_cuda_builtin_vars.h>
#include <__clang_cuda_libdevice_declares.h>
#include <__clang_cuda_device_functions.h>
#include <__clang_cuda_math.h>
#include <__clang_cuda_intrinsics.h>

__device__ inline size_t __cvta_generic_to_shared(const void* p) { return __nv_cvta_generic_to_shared_impl(p); }
__device__ inline float2 make_float2(float x, float y) { return float2{x, y}; }
__device__ inline float4 make_float4(float x, float y, float z, float w) { return float4{x, y, z, w}; }
__device__ inline int4 make_int4(int x, int y, int z, int w) { return int4{x, y, z, w}; }
__device__ inline uint4 make_uint4(unsigned int x, unsigned int y, unsigned int z, unsigned int w) { return uint4{x, y, z, w}; }
__device__ inline uchar4 make_uchar4(unsigned char x, unsigned char y, unsigned char z, unsigned char w) { return uchar4{x, y, z, w}; }

// The atomics of CUDA's sm_20/sm_32/sm_60 headers.
__device__ inline int atomicAdd(int* p, int v) { return __iAtomicAdd(p, v); }
__device__ inline unsigned int atomicAdd(unsigned int* p, unsigned int v) { return __uAtomicAdd(p, v); }
__device__ inline unsigned long long atomicAdd(unsigned long long* p, unsigned long long v) { return __ullAtomicAdd(p, v); }
__device__ inline float atomicAdd(float* p, float v) { return __fAtomicAdd(p, v); }
__device__ inline double atomicAdd(double* p, double v) { return __dAtomicAdd(p, v); }
__device__ inline int atomicSub(int* p, int v) { return __iAtomicAdd(p, -v); }
__device__ inline unsigned int atomicSub(unsigned int* p, unsigned int v) { return __uAtomicAdd(p, 0u - v); }
__device__ inline int atomicExch(int* p, int v) { return __iAtomicExch(p, v); }
__device__ inline unsigned int atomicExch(unsigned int* p, unsigned int v) { return __uAtomicExch(p, v); }
__device__ inline unsigned long long atomicExch(unsigned long long* p, unsigned long long v) { return __ullAtomicExch(p, v); }
__device__ inline float atomicExch(float* p, float v) { return __fAtomicExch(p, v); }
__device__ inline int atomicMin(int* p, int v) { return __iAtomicMin(p, v); }
__device__ inline unsigned int atomicMin(unsigned int* p, unsigned int v) { return __uAtomicMin(p, v); }
__device__ inline long long atomicMin(long long* p, long long v) { return __illAtomicMin(p, v); }
__device__ inline unsigned long long atomicMin(unsigned long long* p, unsigned long long v) { return __ullAtomicMin(p, v); }
__device__ inline int atomicMax(int* p, int v) { return __iAtomicMax(p, v); }
__device__ inline unsigned int atomicMax(unsigned int* p, unsigned int v) { return __uAtomicMax(p, v); }
__device__ inline long long atomicMax(long long* p, long long v) { return __illAtomicMax(p, v); }
__device__ inline unsigned long long atomicMax(unsigned long long* p, unsigned long long v) { return __ullAtomicMax(p, v); }
__device__ inline int atomicCAS(int* p, int c, int v) { return __iAtomicCAS(p, c, v); }
__device__ inline unsigned int atomicCAS(unsigned int* p, unsigned int c, unsigned int v) { return __uAtomicCAS(p, c, v); }
__device__ inline unsigned long long atomicCAS(unsigned long long* p, unsigned long long c, unsigned long long v) { return __ullAtomicCAS(p, c, v); }

// printf, as CUDA's headers declare it (NVRTC provides it implicitly);
// clang lowers device calls of it to vprintf with a packed argument buffer.
extern "C" __device__ int printf(const char*, ...);
