package frame

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gocu-dev/gocu/array"
	"github.com/gocu-dev/gocu/internal/clangtest"
)

// hashClangPrelude stands in for the CUDA headers: the attributes, the
// builtin index variables and the signatures of the atomics the kernels
// call (PTX needs only those).
const hashClangPrelude = `#define __global__ __attribute__((global))
#define __device__ __attribute__((device))
#define __shared__ __attribute__((shared))
#define __align__(n) __attribute__((aligned(n)))
#define __forceinline__ __inline__ __attribute__((always_inline))
#define __restrict__ __restrict
#define GOCU_BUILTIN(T, NAME, SREG) \
struct T { \
	__declspec(property(get = gx)) unsigned int x; \
	static __device__ __forceinline__ unsigned int gx() { return __nvvm_read_ptx_sreg_##SREG##_x(); } \
}; \
extern const __device__ T NAME;
GOCU_BUILTIN(gocu_tid_t, threadIdx, tid)
GOCU_BUILTIN(gocu_ctaid_t, blockIdx, ctaid)
GOCU_BUILTIN(gocu_ntid_t, blockDim, ntid)
GOCU_BUILTIN(gocu_nctaid_t, gridDim, nctaid)
__device__ void __syncthreads();
__device__ unsigned long long atomicCAS(unsigned long long*, unsigned long long, unsigned long long);
__device__ unsigned int atomicCAS(unsigned int*, unsigned int, unsigned int);
__device__ double atomicAdd(double*, double);
__device__ unsigned long long atomicAdd(unsigned long long*, unsigned long long);
__device__ int atomicMax(int*, int);
__device__ int atomicMin(int*, int);
__device__ long long atomicMax(long long*, long long);
__device__ long long atomicMin(long long*, long long);
__device__ float __uint_as_float(unsigned int);
__device__ unsigned int __float_as_uint(float);
__device__ double __longlong_as_double(long long);
__device__ long long __double_as_longlong(double);
`

// TestHashSourceCompiles compiles the hash and group kernels' CUDA C for
// sm_90 with clang, for every value and key dtype, and checks that each kernel is
// an entry with the parameters the launches pass.
func TestHashSourceCompiles(t *testing.T) {
	clang := clangtest.Need(t, "clang-16")
	for i, dt := range []array.DType{array.Int32, array.Int64, array.Float32, array.Float64} {
		key := []array.DType{array.Int32, array.Int64}[i%2]
		dir := t.TempDir()
		src := filepath.Join(dir, "hash.cu")
		if err := os.WriteFile(src, []byte(hashClangPrelude+"#line 1 \"hash\"\n"+hashSource(dt, key)), 0o600); err != nil {
			t.Fatal(err)
		}
		out := filepath.Join(dir, "hash.ptx")
		msg, err := exec.Command(clang, "-x", "cuda", clangtest.NoCUDA, "--cuda-device-only", "-nocudainc", "-nocudalib",
			"--cuda-gpu-arch=sm_90", "-std=c++17", "-O2", "-Wall", "-S", "-o", out, src).CombinedOutput()
		if err != nil || strings.Contains(string(msg), "warning") {
			t.Fatalf("%v: clang: %v\n%s", dt, err, msg)
		}
		ptx, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		for name, params := range map[string]int{"gocu_hash_insert": 6, "gocu_hash_find": 6, "gocu_group_sum": 8,
			"gocu_group_count": 7, "gocu_group_first": 5, "gocu_group_extreme": 9} {
			i := strings.Index(string(ptx), ".entry "+name+"(")
			if i < 0 {
				t.Fatalf("%v: no entry %s", dt, name)
			}
			j := strings.Index(string(ptx[i:]), ")")
			if n := strings.Count(string(ptx[i:i+j]), ".param"); n != params {
				t.Errorf("%v: %s has %d parameters, want %d", dt, name, n, params)
			}
		}
	}
}
