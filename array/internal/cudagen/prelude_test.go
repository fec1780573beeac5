package cudagen

import (
	"fmt"
	"slices"
	"strings"

	"github.com/gocu-dev/gocu/array/internal/backend"
)

// devicePrelude stands in for what NVRTC provides without headers, so that
// clang can compile the generated sources to PTX: execution-space
// attributes, the builtin index variables, vector types, and declarations
// of the math functions and intrinsics (left external: PTX only needs
// their signatures).
var devicePrelude = func() string {
	var b strings.Builder
	b.WriteString(`#define __global__ __attribute__((global))
#define __device__ __attribute__((device))
#define __shared__ __attribute__((shared))
#define __forceinline__ __inline__ __attribute__((always_inline))
#define __launch_bounds__(...) __attribute__((launch_bounds(__VA_ARGS__)))
#define GOCU_BUILTIN(T, NAME, SREG)                                                            \
struct T {                                                                                     \
	__declspec(property(get = gx)) unsigned int x;                                             \
	__declspec(property(get = gy)) unsigned int y;                                             \
	__declspec(property(get = gz)) unsigned int z;                                             \
	static __device__ __forceinline__ unsigned int gx() { return __nvvm_read_ptx_sreg_##SREG##_x(); } \
	static __device__ __forceinline__ unsigned int gy() { return __nvvm_read_ptx_sreg_##SREG##_y(); } \
	static __device__ __forceinline__ unsigned int gz() { return __nvvm_read_ptx_sreg_##SREG##_z(); } \
};                                                                                             \
extern const __device__ T NAME;
GOCU_BUILTIN(gocu_tid_t, threadIdx, tid)
GOCU_BUILTIN(gocu_ctaid_t, blockIdx, ctaid)
GOCU_BUILTIN(gocu_ntid_t, blockDim, ntid)
GOCU_BUILTIN(gocu_nctaid_t, gridDim, nctaid)
`)
	for _, v := range []struct {
		name, t string
		size    int
	}{{"uchar", "unsigned char", 1}, {"int", "int", 4}, {"float", "float", 4}, {"longlong", "long long", 8}, {"double", "double", 8}} {
		for _, w := range []int{2, 4} {
			comps := []string{"x", "y", "z", "w"}[:w]
			fmt.Fprintf(&b, "struct __attribute__((aligned(%d))) %s%d { %s %s; };\n", v.size*w, v.name, w, v.t, strings.Join(comps, ", "))
		}
	}
	// The math functions the op table spells, and those the helpers call.
	unary := []string{"exp", "fabs"}
	binary := []string{"fmod", "copysign", "nextafter", "fmax", "fmin"}
	for _, in := range backend.Ops {
		if in.CUDA == "" || in.CUDA[0] < 'a' || in.CUDA[0] > 'z' {
			continue
		}
		if in.Arity == 1 && !slices.Contains(unary, in.CUDA) {
			unary = append(unary, in.CUDA)
		} else if in.Arity == 2 && !slices.Contains(binary, in.CUDA) {
			binary = append(binary, in.CUDA)
		}
	}
	for _, f := range unary {
		fmt.Fprintf(&b, "extern \"C\" __device__ float %sf(float);\nextern \"C\" __device__ double %s(double);\n", f, f)
	}
	for _, f := range binary {
		fmt.Fprintf(&b, "extern \"C\" __device__ float %sf(float, float);\nextern \"C\" __device__ double %s(double, double);\n", f, f)
	}
	b.WriteString(`extern "C" __device__ float __int_as_float(int);
extern "C" __device__ int __float_as_int(float);
extern "C" __device__ double __longlong_as_double(long long);
extern "C" __device__ long long __double_as_longlong(double);
extern "C" __device__ unsigned int __umulhi(unsigned int, unsigned int);
extern "C" __device__ float __fmul_rn(float, float);
extern "C" __device__ float __fadd_rn(float, float);
extern "C" __device__ double __dmul_rn(double, double);
extern "C" __device__ double __dadd_rn(double, double);
extern "C" __device__ double __dsub_rn(double, double);
extern "C" __device__ double __ddiv_rn(double, double);
extern "C" __device__ double __dsqrt_rn(double);
extern "C" __device__ float __double2float_rn(double);
extern "C" __device__ float __double2float_rz(double);
static __device__ __forceinline__ int atomicAdd(int *p, int v) { return __nvvm_atom_add_gen_i(p, v); }
static __device__ __forceinline__ void __threadfence() { __nvvm_membar_gl(); }
__device__ float __shfl_down_sync(unsigned int, float, int, int = 32);
__device__ double __shfl_down_sync(unsigned int, double, int, int = 32);
__device__ int __shfl_down_sync(unsigned int, int, int, int = 32);
__device__ long long __shfl_down_sync(unsigned int, long long, int, int = 32);
__device__ unsigned char __shfl_down_sync(unsigned int, unsigned char, int, int = 32);
__device__ bool __shfl_down_sync(unsigned int, bool, int, int = 32);
__device__ float __shfl_sync(unsigned int, float, int, int = 32);
__device__ double __shfl_sync(unsigned int, double, int, int = 32);
__device__ int __shfl_sync(unsigned int, int, int, int = 32);
__device__ long long __shfl_sync(unsigned int, long long, int, int = 32);
__device__ unsigned char __shfl_sync(unsigned int, unsigned char, int, int = 32);
__device__ bool __shfl_sync(unsigned int, bool, int, int = 32);
`)
	return b.String()
}()
