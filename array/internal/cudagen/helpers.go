package cudagen

// helpersSource are device functions shared by the generated kernels:
// NumPy's floor division and modulo, wrapping integer powers, saturating
// float-to-integer conversions (NaN to 0, as the CPU backend), the
// float predicates, and NaN-propagating maximum/minimum. Static inline
// functions cost nothing when unused.
var helpersSource = vectorTypes + lowpHelpers + `
static __device__ __forceinline__ int gocu_f2i32(double x) {
	return x != x ? 0 : x <= -2147483648.0 ? (int)(-2147483647 - 1) : x >= 2147483647.0 ? 2147483647 : (int)x;
}
static __device__ __forceinline__ long long gocu_f2i64(double x) {
	return x != x ? 0ll : x <= -9223372036854775808.0 ? (long long)(-9223372036854775807ll - 1) : x >= 9223372036854775808.0 ? 9223372036854775807ll : (long long)x;
}
static __device__ __forceinline__ unsigned char gocu_f2u8(double x) {
	return x != x ? (unsigned char)0 : x <= 0.0 ? (unsigned char)0 : x >= 255.0 ? (unsigned char)255 : (unsigned char)(int)x;
}
static __device__ __forceinline__ bool gocu_isinff(float x) { return fabsf(x) == __int_as_float(0x7f800000); }
static __device__ __forceinline__ bool gocu_isinf(double x) { return fabs(x) == __longlong_as_double(0x7ff0000000000000ll); }
static __device__ __forceinline__ bool gocu_isfinitef(float x) { return x == x && !gocu_isinff(x); }
static __device__ __forceinline__ bool gocu_isfinite(double x) { return x == x && !gocu_isinf(x); }

// NumPy's npy_divmod: floor division and a remainder with the divisor's sign.
static __device__ double gocu_divmod(double a, double b, double *mod) {
	if (b == 0.0) { *mod = __longlong_as_double(0x7ff8000000000000ll); return a / b; }
	double m = fmod(a, b);
	double div = (a - m) / b;
	if (m != 0.0) {
		if ((b < 0.0) != (m < 0.0)) { m += b; div -= 1.0; }
	} else {
		m = copysign(0.0, b);
	}
	double q;
	if (div != 0.0) {
		q = floor(div);
		if (div - q > 0.5) q += 1.0;
	} else {
		q = copysign(0.0, a / b);
	}
	*mod = m;
	return q;
}
static __device__ __forceinline__ double gocu_floordiv(double a, double b) { double m; return gocu_divmod(a, b, &m); }
static __device__ __forceinline__ double gocu_fmod_py(double a, double b) { double m; gocu_divmod(a, b, &m); return m; }

// Python's // and % on integers; division by zero gives 0 (as NumPy).
#define GOCU_INT_DIVMOD(T, U, NAME)                                                       \
static __device__ __forceinline__ T gocu_floordiv_##NAME(T a, T b) {                      \
	if (b == 0) return 0;                                                                 \
	if (b == (T)-1) return (T)((U)0 - (U)a);                                              \
	T q = a / b;                                                                          \
	if ((a % b != 0) && ((a < 0) != (b < 0))) q--;                                       \
	return q;                                                                             \
}                                                                                         \
static __device__ __forceinline__ T gocu_mod_##NAME(T a, T b) {                           \
	if (b == 0 || b == (T)-1) return 0;                                                   \
	T r = a % b;                                                                          \
	if (r != 0 && ((r < 0) != (b < 0))) r += b;                                           \
	return r;                                                                             \
}
GOCU_INT_DIVMOD(int, unsigned int, i32)
GOCU_INT_DIVMOD(long long, unsigned long long, i64)
static __device__ __forceinline__ unsigned char gocu_floordiv_u8(unsigned char a, unsigned char b) { return b == 0 ? (unsigned char)0 : (unsigned char)(a / b); }
static __device__ __forceinline__ unsigned char gocu_mod_u8(unsigned char a, unsigned char b) { return b == 0 ? (unsigned char)0 : (unsigned char)(a % b); }

// Wrapping integer powers; a negative exponent gives 1/a^-b truncated.
#define GOCU_IPOW(T, U, NAME)                                                             \
static __device__ T gocu_pow_##NAME(T a, T b) {                                          \
	if (b < 0) return a == 1 ? (T)1 : a == (T)-1 ? ((b & 1) ? a : (T)1) : (T)0;           \
	U r = 1, x = (U)a;                                                                    \
	while (b > 0) { if (b & 1) r *= x; x *= x; b >>= 1; }                                 \
	return (T)r;                                                                          \
}
GOCU_IPOW(int, unsigned int, i32)
GOCU_IPOW(long long, unsigned long long, i64)
static __device__ unsigned char gocu_pow_u8(unsigned char a, unsigned char b) {
	unsigned int r = 1, x = a;
	while (b > 0) { if (b & 1) r *= x; x *= x; b >>= 1; }
	return (unsigned char)r;
}
`
