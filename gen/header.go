package gen

// header is the part of every generated CUDA source that gives Go's meaning
// to what C++ leaves undefined or defines differently: wrapping signed
// arithmetic, division, shifts, float-to-int conversion, min and max, and
// the debug-mode checks. It needs nothing but what NVRTC provides without
// includes. Helpers are templates or overloads so that one definition
// serves every Go integer type; everything is forceinline, so release code
// is what a hand-written kernel compiles to.
//
// The generated part of the source defines GOCU_SINK_BYTES before it.
const header = `// ---- gocu runtime: Go semantics for CUDA C++ (see package gen) ----
template <typename T> struct gocu_slice { T* p; long long n; };
template <typename T, int N> struct gocu_array { T v[N]; };
struct gocu_Dim3 { int X, Y, Z; };

// gocu_u<T>::t is the unsigned type of the width of T: signed arithmetic is
// done in it, where overflow wraps as in Go instead of being undefined.
template <typename T> struct gocu_u { typedef T t; };
template <> struct gocu_u<signed char> { typedef unsigned char t; };
template <> struct gocu_u<short> { typedef unsigned short t; };
template <> struct gocu_u<int> { typedef unsigned int t; };
template <> struct gocu_u<long long> { typedef unsigned long long t; };

#ifdef GOCU_DEBUG
// Error buffer, read by the launcher (layout: package meta, ErrorWords).
extern "C" {
__device__ unsigned long long gocu_err[16];
}
__device__ __align__(16) unsigned char gocu_sink[GOCU_SINK_BYTES];
__device__ __noinline__ void gocu_fail(unsigned long long code, int site, long long a, long long b, long long n) {
  atomicAdd(&gocu_err[11], 1ull);
  if (atomicCAS(&gocu_err[0], 0ull, code) != 0ull) return;
  gocu_err[1] = (unsigned long long)site;
  gocu_err[2] = (unsigned long long)a;
  gocu_err[3] = (unsigned long long)b;
  gocu_err[4] = (unsigned long long)n;
  gocu_err[5] = blockIdx.x;
  gocu_err[6] = blockIdx.y;
  gocu_err[7] = blockIdx.z;
  gocu_err[8] = threadIdx.x;
  gocu_err[9] = threadIdx.y;
  gocu_err[10] = threadIdx.z;
}
// gocu_err_take copies the error buffer to out (unless out is null) and
// clears it; the launcher runs it on 16 threads before and after a debug
// launch, on the launch's stream.
extern "C" __global__ void gocu_err_take(unsigned long long* out) {
  unsigned int i = threadIdx.x;
  if (i < 16u) {
    if (out) out[i] = gocu_err[i];
    gocu_err[i] = 0ull;
  }
}
// A failed index check records the error and goes on with a harmless
// element (the sink, or element 0 of a fixed-size array), so the kernel
// neither faults, which would lose the context, nor hangs at a barrier.
template <typename T> __device__ __forceinline__ T* gocu_at(gocu_slice<T> s, long long i, int site) {
  if ((unsigned long long)i < (unsigned long long)s.n) return s.p + i;
  gocu_fail(1, site, i, (long long)s.p, s.n);
  return (T*)gocu_sink;
}
__device__ __forceinline__ long long gocu_chk(long long i, long long n, int site) {
  if ((unsigned long long)i < (unsigned long long)n) return i;
  gocu_fail(1, site, i, 0, n);
  return 0;
}
__device__ __forceinline__ unsigned long long gocu_shcnt(long long s, int site) {
  if (s < 0) gocu_fail(4, site, s, 0, 0);
  return (unsigned long long)s;
}
#define GOCU_AT(s, i, site) (*gocu_at((s), (long long)(i), (site)))
#define GOCU_AI(i, n, site) gocu_chk((long long)(i), (n), (site))
#define GOCU_SHCNT(s, site) gocu_shcnt((long long)(s), (site))
#define GOCU_FAIL(code, site, a, b, n) gocu_fail((code), (site), (a), (b), (n))
#else
#define GOCU_AT(s, i, site) ((s).p[i])
#define GOCU_AI(i, n, site) (i)
#define GOCU_SHCNT(s, site) ((unsigned long long)(s))
#define GOCU_FAIL(code, site, a, b, n) ((void)0)
#endif

// Integer division and remainder as in Go: truncated, MinInt / -1 == MinInt,
// MinInt % -1 == 0. Go panics on a zero divisor; the debug build records
// the error, the release build defines x/0 == 0 and x%0 == x.
template <typename T> __device__ __forceinline__ T gocu_div(T a, T b, int site) {
  if (b == 0) { GOCU_FAIL(3, site, 0, 0, 0); return 0; }
  if ((T)-1 < (T)0 && b == (T)-1) return (T)((typename gocu_u<T>::t)0 - (typename gocu_u<T>::t)a);
  return (T)(a / b);
}
template <typename T> __device__ __forceinline__ T gocu_rem(T a, T b, int site) {
  if (b == 0) { GOCU_FAIL(3, site, 0, 0, 0); return a; }
  if ((T)-1 < (T)0 && b == (T)-1) return 0;
  return (T)(a % b);
}
// Shifts as in Go: a count of at least the width gives 0, or -1 for a
// negative signed value shifted right.
template <typename T> __device__ __forceinline__ T gocu_shl(T x, unsigned long long s) {
  return s < sizeof(T) * 8 ? (T)((typename gocu_u<T>::t)x << s) : (T)0;
}
template <typename T> __device__ __forceinline__ T gocu_shr(T x, unsigned long long s) {
  return s < sizeof(T) * 8 ? (T)(x >> s) : (T)(x < (T)0 ? (T)-1 : (T)0);
}

// Float to integer as Go on amd64: truncation; a value out of range (or
// NaN) gives the most negative value (CVTTSS2SI's "integer indefinite").
// Narrower integers convert through int32, uint32 through int64, uint64
// through the two-step sequence Go uses.
__device__ __forceinline__ int gocu_f2i32(float x) { return (x >= -2147483648.0f && x < 2147483648.0f) ? (int)x : (int)0x80000000u; }
__device__ __forceinline__ int gocu_f2i32(double x) { return (x > -2147483649.0 && x < 2147483648.0) ? (int)x : (int)0x80000000u; }
__device__ __forceinline__ long long gocu_f2i64(float x) { return (x >= -9223372036854775808.0f && x < 9223372036854775808.0f) ? (long long)x : (long long)0x8000000000000000ull; }
__device__ __forceinline__ long long gocu_f2i64(double x) { return (x >= -9223372036854775808.0 && x < 9223372036854775808.0) ? (long long)x : (long long)0x8000000000000000ull; }
__device__ __forceinline__ unsigned long long gocu_f2u64(float x) {
  return x < 9223372036854775808.0f ? (unsigned long long)gocu_f2i64(x) : ((unsigned long long)gocu_f2i64(x - 9223372036854775808.0f) | 0x8000000000000000ull);
}
__device__ __forceinline__ unsigned long long gocu_f2u64(double x) {
  return x < 9223372036854775808.0 ? (unsigned long long)gocu_f2i64(x) : ((unsigned long long)gocu_f2i64(x - 9223372036854775808.0) | 0x8000000000000000ull);
}

// Go's built-in min and max: integers compare; for floats a NaN wins and
// -0 < +0. The float forms are branch-free: fminf/fmaxf (one FMNMX) picks
// the smaller or larger, the and/or of the bits orders two zeros, and a
// NaN operand is selected last, so that Go's choice of NaN (b first) holds.
template <typename T> __device__ __forceinline__ T gocu_min(T a, T b) { return b < a ? b : a; }
template <typename T> __device__ __forceinline__ T gocu_max(T a, T b) { return b > a ? b : a; }
__device__ __forceinline__ float gocu_min_f32(float a, float b) {
  float r = fminf(a, b);
  r = a == b ? __uint_as_float(__float_as_uint(a) | __float_as_uint(b)) : r;
  r = a != a ? a : r;
  return b != b ? b : r;
}
__device__ __forceinline__ float gocu_max_f32(float a, float b) {
  float r = fmaxf(a, b);
  r = a == b ? __uint_as_float(__float_as_uint(a) & __float_as_uint(b)) : r;
  r = a != a ? a : r;
  return b != b ? b : r;
}
__device__ __forceinline__ double gocu_min_f64(double a, double b) {
  if (b != b || b < a) return b;
  if (a != a || a < b || a != 0.0) return a;
  return __longlong_as_double(__double_as_longlong(a) | __double_as_longlong(b));
}
__device__ __forceinline__ double gocu_max_f64(double a, double b) {
  if (b != b || b > a) return b;
  if (a != a || a > b || a != 0.0) return a;
  return __longlong_as_double(__double_as_longlong(a) & __double_as_longlong(b));
}
// kernel.Min and kernel.Max (fminf, fmaxf): a NaN operand is ignored and
// -0 < +0, exactly as the simulator computes them. Branch-free, as above:
// fminf/fmaxf give the answer except for two zeros (ordered by the bits)
// and two NaNs (b, where the hardware would give the canonical NaN).
__device__ __forceinline__ float gocu_fmin(float a, float b) {
  float r = fminf(a, b);
  r = a == b ? __uint_as_float(__float_as_uint(a) | __float_as_uint(b)) : r;
  return a != a ? b : r;
}
__device__ __forceinline__ float gocu_fmax(float a, float b) {
  float r = fmaxf(a, b);
  r = a == b ? __uint_as_float(__float_as_uint(a) & __float_as_uint(b)) : r;
  return a != a ? b : r;
}
// kernel.FastExp2: PTX ex2.approx.ftz.f32 (exp2f under --use_fast_math).
#ifdef __CUDA_ARCH__
__device__ __forceinline__ float gocu_fast_exp2(float x) { float r; asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(x)); return r; }
#else
__device__ __forceinline__ float gocu_fast_exp2(float x) { float r = exp2f(x); return r < 1.17549435e-38f ? 0.0f : r; }
#endif
// math.Min and math.Max: an infinity of the winning sign beats a NaN.
__device__ __forceinline__ double gocu_math_min(double a, double b) {
  if (a == -__longlong_as_double(0x7ff0000000000000ll) || b == -__longlong_as_double(0x7ff0000000000000ll)) return -__longlong_as_double(0x7ff0000000000000ll);
  if (a != a || b != b) return __longlong_as_double(0x7ff8000000000001ll);
  if (a == 0.0 && a == b) return __double_as_longlong(a) < 0 ? a : b;
  return a < b ? a : b;
}
__device__ __forceinline__ double gocu_math_max(double a, double b) {
  if (a == __longlong_as_double(0x7ff0000000000000ll) || b == __longlong_as_double(0x7ff0000000000000ll)) return __longlong_as_double(0x7ff0000000000000ll);
  if (a != a || b != b) return __longlong_as_double(0x7ff8000000000001ll);
  if (a == 0.0 && a == b) return __double_as_longlong(a) < 0 ? b : a;
  return a > b ? a : b;
}
__device__ __forceinline__ double gocu_math_dim(double a, double b) {
  double v = a - b;
  return v <= 0.0 ? 0.0 : v;
}
__device__ __forceinline__ bool gocu_math_isinf(double x, long long sign) {
  return (sign >= 0 && x > 1.7976931348623157e308) || (sign <= 0 && x < -1.7976931348623157e308);
}
__device__ __forceinline__ double gocu_math_inf(long long sign) {
  return sign >= 0 ? __longlong_as_double(0x7ff0000000000000ll) : -__longlong_as_double(0x7ff0000000000000ll);
}

__device__ __forceinline__ bool gocu_isnan_f32(float x) { return x != x; }
__device__ __forceinline__ bool gocu_isinf_f32(float x) { return x > 3.40282347e38f || x < -3.40282347e38f; }
__device__ __forceinline__ bool gocu_isnan_f64(double x) { return x != x; }

// math/bits.
__device__ __forceinline__ long long gocu_ctz32(unsigned int x) { return x == 0u ? 32 : __ffs((int)x) - 1; }
__device__ __forceinline__ long long gocu_ctz64(unsigned long long x) { return x == 0ull ? 64 : __ffsll((long long)x) - 1; }
__device__ __forceinline__ unsigned int gocu_rotl32(unsigned int x, long long k) { unsigned int s = (unsigned int)k & 31u; return (x << s) | (x >> ((32u - s) & 31u)); }
__device__ __forceinline__ unsigned long long gocu_rotl64(unsigned long long x, long long k) { unsigned int s = (unsigned int)k & 63u; return (x << s) | (x >> ((64u - s) & 63u)); }

// Slices of slices and of arrays. Go panics on bounds out of range; the
// debug build records the error and gives an empty slice.
template <typename T> __device__ __forceinline__ gocu_slice<T> gocu_reslice(gocu_slice<T> s, long long lo, long long hi, int site) {
#ifdef GOCU_DEBUG
  if (lo < 0 || hi < lo || hi > s.n) { gocu_fail(2, site, lo, hi, s.n); return gocu_slice<T>{s.p, 0}; }
#endif
  return gocu_slice<T>{s.p + lo, hi - lo};
}
// kernel.Reinterpret: a pointer cast; the length counts elements of To.
template <typename To, typename From> __device__ __forceinline__ gocu_slice<To> gocu_reinterpret(gocu_slice<From> s, int site) {
  unsigned long long bytes = (unsigned long long)s.n * sizeof(From);
#ifdef GOCU_DEBUG
  if (bytes % sizeof(To) != 0) { gocu_fail(5, site, (long long)bytes, 0, (long long)sizeof(To)); return gocu_slice<To>{(To*)s.p, 0}; }
  if (s.n != 0 && (unsigned long long)s.p % alignof(To) != 0) { gocu_fail(6, site, 0, (long long)s.p, (long long)alignof(To)); return gocu_slice<To>{(To*)s.p, 0}; }
#endif
  return gocu_slice<To>{(To*)s.p, (long long)(bytes / sizeof(To))};
}

// Atomics CUDA has no overload for, with the kernel package's meaning.
__device__ __forceinline__ long long gocu_atomic_add(long long* p, long long v) { return (long long)atomicAdd((unsigned long long*)p, (unsigned long long)v); }
__device__ __forceinline__ long long gocu_atomic_sub(long long* p, long long v) { return (long long)atomicAdd((unsigned long long*)p, 0ull - (unsigned long long)v); }
__device__ __forceinline__ unsigned long long gocu_atomic_sub(unsigned long long* p, unsigned long long v) { return atomicAdd(p, 0ull - v); }
__device__ __forceinline__ float gocu_atomic_sub(float* p, float v) { return atomicAdd(p, -v); }
__device__ __forceinline__ double gocu_atomic_sub(double* p, double v) { return atomicAdd(p, -v); }
__device__ __forceinline__ long long gocu_atomic_exch(long long* p, long long v) { return (long long)atomicExch((unsigned long long*)p, (unsigned long long)v); }
__device__ __forceinline__ double gocu_atomic_exch(double* p, double v) { return __longlong_as_double((long long)atomicExch((unsigned long long*)p, (unsigned long long)__double_as_longlong(v))); }
__device__ __forceinline__ long long gocu_atomic_cas(long long* p, long long c, long long v) { return (long long)atomicCAS((unsigned long long*)p, (unsigned long long)c, (unsigned long long)v); }
__device__ __forceinline__ float gocu_atomic_cas(float* p, float c, float v) { return __uint_as_float(atomicCAS((unsigned int*)p, __float_as_uint(c), __float_as_uint(v))); }
__device__ __forceinline__ double gocu_atomic_cas(double* p, double c, double v) {
  return __longlong_as_double((long long)atomicCAS((unsigned long long*)p, (unsigned long long)__double_as_longlong(c), (unsigned long long)__double_as_longlong(v)));
}
// Float max and min store v when v > old (v < old) or old is NaN.
__device__ __forceinline__ float gocu_atomic_max(float* p, float v) {
  unsigned int* a = (unsigned int*)p;
  unsigned int old = *a, seen;
  do {
    seen = old;
    float o = __uint_as_float(seen);
    if (!(v > o || o != o)) return o;
    old = atomicCAS(a, seen, __float_as_uint(v));
  } while (old != seen);
  return __uint_as_float(seen);
}
__device__ __forceinline__ float gocu_atomic_min(float* p, float v) {
  unsigned int* a = (unsigned int*)p;
  unsigned int old = *a, seen;
  do {
    seen = old;
    float o = __uint_as_float(seen);
    if (!(v < o || o != o)) return o;
    old = atomicCAS(a, seen, __float_as_uint(v));
  } while (old != seen);
  return __uint_as_float(seen);
}
__device__ __forceinline__ double gocu_atomic_max(double* p, double v) {
  unsigned long long* a = (unsigned long long*)p;
  unsigned long long old = *a, seen;
  do {
    seen = old;
    double o = __longlong_as_double((long long)seen);
    if (!(v > o || o != o)) return o;
    old = atomicCAS(a, seen, (unsigned long long)__double_as_longlong(v));
  } while (old != seen);
  return __longlong_as_double((long long)seen);
}
__device__ __forceinline__ double gocu_atomic_min(double* p, double v) {
  unsigned long long* a = (unsigned long long*)p;
  unsigned long long old = *a, seen;
  do {
    seen = old;
    double o = __longlong_as_double((long long)seen);
    if (!(v < o || o != o)) return o;
    old = atomicCAS(a, seen, (unsigned long long)__double_as_longlong(v));
  } while (old != seen);
  return __longlong_as_double((long long)seen);
}

// Thread position as kernel.Dim3 values, and the special registers the
// kernel package exposes.
__device__ __forceinline__ gocu_Dim3 gocu_threadIdx() { return gocu_Dim3{(int)threadIdx.x, (int)threadIdx.y, (int)threadIdx.z}; }
__device__ __forceinline__ gocu_Dim3 gocu_blockIdx() { return gocu_Dim3{(int)blockIdx.x, (int)blockIdx.y, (int)blockIdx.z}; }
__device__ __forceinline__ gocu_Dim3 gocu_blockDim() { return gocu_Dim3{(int)blockDim.x, (int)blockDim.y, (int)blockDim.z}; }
__device__ __forceinline__ gocu_Dim3 gocu_gridDim() { return gocu_Dim3{(int)gridDim.x, (int)gridDim.y, (int)gridDim.z}; }
#ifdef __CUDA_ARCH__
__device__ __forceinline__ int gocu_laneid() { unsigned int r; asm("mov.u32 %0, %%laneid;" : "=r"(r)); return (int)r; }
__device__ __forceinline__ unsigned int gocu_dynsmem_size() { unsigned int r; asm("mov.u32 %0, %%dynamic_smem_size;" : "=r"(r)); return r; }
#else
// Host builds (the translator's tests run kernels on the CPU).
__device__ __forceinline__ int gocu_laneid() { return (int)((threadIdx.x + threadIdx.y * blockDim.x + threadIdx.z * blockDim.x * blockDim.y) % 32u); }
__device__ __forceinline__ unsigned int gocu_dynsmem_size() { return 0; }
#endif
// ---- end of gocu runtime ----
`
