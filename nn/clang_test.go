package nn_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gocu-dev/gocu/array"
	"github.com/gocu-dev/gocu/nn"
)

// clangPrelude stands in for the CUDA headers: the attributes, the
// builtin index variables and the math functions the kernels call.
const clangPrelude = `#define __global__ __attribute__((global))
#define __device__ __attribute__((device))
#define __forceinline__ __inline__ __attribute__((always_inline))
#define __restrict__ __restrict
#define GOCU_BUILTIN(T, NAME, SREG) \
struct T { \
	__declspec(property(get = gx)) unsigned int x; \
	__declspec(property(get = gy)) unsigned int y; \
	__declspec(property(get = gz)) unsigned int z; \
	static __device__ __forceinline__ unsigned int gx() { return __nvvm_read_ptx_sreg_##SREG##_x(); } \
	static __device__ __forceinline__ unsigned int gy() { return __nvvm_read_ptx_sreg_##SREG##_y(); } \
	static __device__ __forceinline__ unsigned int gz() { return __nvvm_read_ptx_sreg_##SREG##_z(); } \
}; \
extern const __device__ T NAME;
GOCU_BUILTIN(gocu_tid_t, threadIdx, tid)
GOCU_BUILTIN(gocu_ctaid_t, blockIdx, ctaid)
GOCU_BUILTIN(gocu_ntid_t, blockDim, ntid)
GOCU_BUILTIN(gocu_nctaid_t, gridDim, nctaid)
__device__ double pow(double, double);
__device__ double sqrt(double);
__device__ float sqrt(float);
`

// TestOptimSourceCompiles compiles the fused optimiser's CUDA C for sm_90
// with clang (no GPU needed) and checks the kernels' parameter lists: the
// tensor list travels as one 1408-byte struct.
func TestOptimSourceCompiles(t *testing.T) {
	clang, err := exec.LookPath("clang-16")
	if err != nil {
		t.Skip("clang-16 not installed: the optimiser's CUDA C is not compile-checked")
	}
	for _, dt := range []array.DType{array.Float32, array.Float64} {
		dir := t.TempDir()
		src := filepath.Join(dir, "optim.cu")
		if err := os.WriteFile(src, []byte(clangPrelude+"#line 1 \"optim\"\n"+nn.OptimSource(dt)), 0o600); err != nil {
			t.Fatal(err)
		}
		out := filepath.Join(dir, "optim.ptx")
		msg, err := exec.Command(clang, "-x", "cuda", "--cuda-device-only", "-nocudainc", "-nocudalib",
			"--cuda-gpu-arch=sm_90", "-std=c++17", "-O2", "-Wall", "-S", "-o", out, src).CombinedOutput()
		if err != nil || strings.Contains(string(msg), "warning") {
			t.Fatalf("%v: clang: %v\n%s", dt, err, msg)
		}
		ptx, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		for name, params := range map[string]int{"gocu_count": 1, "gocu_adam": 8, "gocu_sgd": 6} {
			i := strings.Index(string(ptx), ".entry "+name+"(")
			if i < 0 {
				t.Fatalf("%v: no entry %s", dt, name)
			}
			j := strings.Index(string(ptx[i:]), ")")
			decl := string(ptx[i : i+j])
			if n := strings.Count(decl, ".param"); n != params {
				t.Fatalf("%v: %s has %d parameters, want %d:\n%s", dt, name, n, params, decl)
			}
			if name != "gocu_count" && !strings.Contains(decl, "[1408]") {
				t.Fatalf("%v: %s: the tensor list is not one 1408-byte parameter:\n%s", dt, name, decl)
			}
		}
	}
}
