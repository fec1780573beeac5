// Prelude for running generated CUDA C++ on the host, one thread after the
// other, so that tests can compare its results with Go's on machines
// without a GPU. Only kernels without barriers, warp operations and shared
// memory can run this way. The tests compile with -ffp-contract=off, so
// that no multiply-add is fused, as in Go on amd64.
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define __global__
#define __device__
#define __host__
#define __shared__
#define __constant__
#define __forceinline__ inline
#define __noinline__ __attribute__((noinline))
#define __launch_bounds__(...)
#define __align__(n) __attribute__((aligned(n)))
#define __restrict__ __restrict

struct gocu_host_dim { unsigned int x, y, z; };
static gocu_host_dim threadIdx, blockIdx, blockDim, gridDim;

struct float2 { float x, y; };
struct alignas(16) float4 { float x, y, z, w; };
struct alignas(16) int4 { int x, y, z, w; };
struct alignas(16) uint4 { unsigned int x, y, z, w; };
struct uchar4 { unsigned char x, y, z, w; };
static inline float2 make_float2(float x, float y) { return float2{x, y}; }
static inline float4 make_float4(float x, float y, float z, float w) { return float4{x, y, z, w}; }
static inline int4 make_int4(int x, int y, int z, int w) { return int4{x, y, z, w}; }
static inline uint4 make_uint4(unsigned int x, unsigned int y, unsigned int z, unsigned int w) { return uint4{x, y, z, w}; }
static inline uchar4 make_uchar4(unsigned char x, unsigned char y, unsigned char z, unsigned char w) { return uchar4{x, y, z, w}; }

static inline unsigned int __float_as_uint(float f) { unsigned int u; memcpy(&u, &f, 4); return u; }
static inline float __uint_as_float(unsigned int u) { float f; memcpy(&f, &u, 4); return f; }
static inline long long __double_as_longlong(double f) { long long u; memcpy(&u, &f, 8); return u; }
static inline double __longlong_as_double(long long u) { double f; memcpy(&f, &u, 8); return f; }
static inline float __fmul_rn(float a, float b) { return a * b; }
static inline double __dmul_rn(double a, double b) { return a * b; }
static inline float rsqrtf(float x) { return (float)(1.0 / sqrt((double)x)); }

// Atomics of one thread at a time.
template <typename T> static inline T atomicAdd(T* p, T v) { T o = *p; *p = o + v; return o; }
template <typename T> static inline T atomicSub(T* p, T v) { T o = *p; *p = o - v; return o; }
template <typename T> static inline T atomicExch(T* p, T v) { T o = *p; *p = v; return o; }
template <typename T> static inline T atomicMin(T* p, T v) { T o = *p; *p = v < o ? v : o; return o; }
template <typename T> static inline T atomicMax(T* p, T v) { T o = *p; *p = v > o ? v : o; return o; }
template <typename T> static inline T atomicCAS(T* p, T c, T v) { T o = *p; if (o == c) *p = v; return o; }
static inline void __threadfence() {}
static inline int __popc(unsigned int x) { return __builtin_popcount(x); }
static inline int __popcll(unsigned long long x) { return __builtin_popcountll(x); }
static inline int __clz(int x) { return x == 0 ? 32 : __builtin_clz((unsigned int)x); }
static inline int __clzll(long long x) { return x == 0 ? 64 : __builtin_clzll((unsigned long long)x); }
static inline int __ffs(int x) { return __builtin_ffs(x); }
static inline int __ffsll(long long x) { return __builtin_ffsll(x); }
static inline unsigned int __brev(unsigned int x) { return __builtin_bitreverse32(x); }
static inline unsigned long long __brevll(unsigned long long x) { return __builtin_bitreverse64(x); }

// Barriers and warp operations need other threads: a kernel that reaches
// one cannot run here.
static inline void gocu_host_unsupported(const char* what) { fprintf(stderr, "%s cannot run on the host\n", what); abort(); }
static inline void __syncthreads() { gocu_host_unsupported("__syncthreads"); }
static inline int __syncthreads_count(int) { gocu_host_unsupported("__syncthreads_count"); return 0; }
static inline int __syncthreads_and(int) { gocu_host_unsupported("__syncthreads_and"); return 0; }
static inline int __syncthreads_or(int) { gocu_host_unsupported("__syncthreads_or"); return 0; }
static inline void __syncwarp(unsigned int) { gocu_host_unsupported("__syncwarp"); }
template <typename T> static inline T __shfl_sync(unsigned int, T v, int) { gocu_host_unsupported("__shfl_sync"); return v; }
template <typename T> static inline T __shfl_up_sync(unsigned int, T v, unsigned int) { gocu_host_unsupported("__shfl_up_sync"); return v; }
template <typename T> static inline T __shfl_down_sync(unsigned int, T v, unsigned int) { gocu_host_unsupported("__shfl_down_sync"); return v; }
template <typename T> static inline T __shfl_xor_sync(unsigned int, T v, int) { gocu_host_unsupported("__shfl_xor_sync"); return v; }
static inline unsigned int __ballot_sync(unsigned int, int) { gocu_host_unsupported("__ballot_sync"); return 0; }
static inline int __any_sync(unsigned int, int) { gocu_host_unsupported("__any_sync"); return 0; }
static inline int __all_sync(unsigned int, int) { gocu_host_unsupported("__all_sync"); return 0; }
