package nn_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gocu-dev/gocu/array"
	"github.com/gocu-dev/gocu/internal/clangtest"
	"github.com/gocu-dev/gocu/nn"
)

// fusedPrelude adds to clangPrelude what the fused kernels call beyond
// the optimiser: shared memory, warp shuffles, atomics and float maths.
const fusedPrelude = `#define __shared__ __attribute__((shared))
#define __launch_bounds__(...) __attribute__((launch_bounds(__VA_ARGS__)))
__device__ float __uint_as_float(unsigned int);
__device__ unsigned int __float_as_uint(float);
__device__ float __int_as_float(int);
__device__ float __shfl_xor_sync(unsigned int, float, int, int);
__device__ void __syncwarp(unsigned int = 0xffffffffu);
__device__ float atomicAdd(float*, float);
__device__ float fmaxf(float, float);
__device__ float sqrtf(float);
__device__ float tanhf(float);
__device__ float erff(float);
__device__ float expf(float);
__device__ float logf(float);
`

// TestFusedSourceCompiles compiles the fused kernels' CUDA C for sm_90
// with clang (no GPU needed), for each pair of dtypes, and checks that
// every kernel is there with its parameters.
func TestFusedSourceCompiles(t *testing.T) {
	clang := clangtest.Need(t, "clang-16")
	dts := []array.DType{array.Float32, array.BFloat16}
	for _, in := range dts {
		for _, out := range dts {
			dir := t.TempDir()
			src := filepath.Join(dir, "fused.cu")
			if err := os.WriteFile(src, []byte(clangPrelude+fusedPrelude+"#line 1 \"fused\"\n"+nn.FusedSource(in, out)), 0o600); err != nil {
				t.Fatal(err)
			}
			ptxPath := filepath.Join(dir, "fused.ptx")
			msg, err := exec.Command(clang, "-x", "cuda", clangtest.NoCUDA, "--cuda-device-only", "-nocudainc", "-nocudalib",
				"--cuda-gpu-arch=sm_90", "-std=c++17", "-O2", "-Wall", "-S", "-o", ptxPath, src).CombinedOutput()
			if err != nil || strings.Contains(string(msg), "warning") {
				t.Fatalf("%v→%v: clang: %v\n%s", in, out, err, msg)
			}
			ptx, err := os.ReadFile(ptxPath)
			if err != nil {
				t.Fatal(err)
			}
			for name, params := range map[string]int{
				"gocu_ln_fwd": 10, "gocu_ln_bwd": 10, "gocu_ln_dwdb": 8, "gocu_ln_wsum": 5,
				"gocu_gelu_fwd": 4, "gocu_gelu_bwd": 5, "gocu_xent_fwd": 5, "gocu_xent_fused": 8, "gocu_xent_bwd": 9,
				"gocu_bias_gelu_fwd": 6, "gocu_bias_gelu_bwd": 9, "gocu_colsum": 4,
			} {
				i := strings.Index(string(ptx), ".entry "+name+"(")
				if i < 0 {
					t.Fatalf("%v→%v: no entry %s", in, out, name)
				}
				j := strings.Index(string(ptx[i:]), ")")
				if n := strings.Count(string(ptx[i:i+j]), ".param"); n != params {
					t.Fatalf("%v→%v: %s has %d parameters, want %d", in, out, name, n, params)
				}
			}
		}
	}
}
