package cudagen

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gocu-dev/gocu/array/internal/backend"
	"github.com/gocu-dev/gocu/internal/clangtest"
)

// ssPrelude declares the intrinsics the sort and scan kernels use beyond
// devicePrelude's (NVRTC provides them).
const ssPrelude = `
__device__ unsigned int __match_any_sync(unsigned int, unsigned int);
__device__ void __syncwarp(unsigned int = 0xffffffffu);
extern "C" __device__ int __popc(unsigned int);
__device__ unsigned int atomicAdd(unsigned int*, unsigned int);
__device__ unsigned long long atomicAdd(unsigned long long*, unsigned long long);
__device__ double atomicAdd(double*, double);
__device__ int atomicExch(int*, int);
__device__ unsigned int __ballot_sync(unsigned int, bool);
__device__ float __shfl_up_sync(unsigned int, float, int, int = 32);
__device__ double __shfl_up_sync(unsigned int, double, int, int = 32);
__device__ int __shfl_up_sync(unsigned int, int, int, int = 32);
__device__ long long __shfl_up_sync(unsigned int, long long, int, int = 32);
__device__ unsigned int __shfl_sync(unsigned int, unsigned int, int, int = 32);
__device__ unsigned int __shfl_up_sync(unsigned int, unsigned int, int, int = 32);
__device__ int __all_sync(unsigned int, int);
__device__ int __any_sync(unsigned int, int);
extern "C" __device__ int __ffs(int);
`

// TestSortScanClang compiles every sort, scan, search, histogram, unique
// and zero kernel for sm_90 with clang, warnings as failures, and checks
// that each entry point is there with its parameters.
func TestSortScanClang(t *testing.T) {
	clang := clangPath(t)
	type entry struct {
		k      *Kernel
		params int
	}
	var es []entry
	for _, d := range []backend.DType{backend.Bool, backend.Uint8, backend.Int32, backend.Int64, backend.Float32, backend.Float64} {
		for _, v := range []int{1, 2, 4, 8} {
			for _, wide := range []bool{false, true} {
				s := SortKernels(d, v, wide)
				es = append(es, entry{s.GHist, 6}, entry{s.Plan, 5}, entry{s.Pass, 22}, entry{s.Finish, 8}, entry{s.RHist, 6}, entry{s.RPlan, 3})
			}
		}
		es = append(es, entry{TopKKernel(d), 12})
		u := UniqueKernels(d)
		es = append(es, entry{u.Groups.Rows, 8}, entry{u.Scatter, 9}, entry{u.Finish, 11})
		if d == backend.Bool {
			continue
		}
		es = append(es, entry{SearchKernel(d), 6}, entry{HistKernel(d, false), 8}, entry{HistKernel(d, true), 8})
		for _, k := range []backend.ScanKind{backend.CumSum, backend.CumProd, backend.CumMax, backend.CumMin} {
			s := ScanKernels(d, k)
			es = append(es, entry{s.Rows, 8}, entry{s.Cols, 6})
		}
	}
	es = append(es, entry{ZeroKernel(), 2})
	bySrc := map[string][]entry{}
	var order []string
	for _, e := range es {
		if _, ok := bySrc[e.k.Source]; !ok {
			order = append(order, e.k.Source)
		}
		bySrc[e.k.Source] = append(bySrc[e.k.Source], e)
	}
	dir := t.TempDir()
	for i, src := range order {
		path := filepath.Join(dir, "k.cu")
		if err := os.WriteFile(path, []byte(devicePrelude+ssPrelude+"\n#line 1 \"generated\"\n"+src), 0o600); err != nil {
			t.Fatal(err)
		}
		out := filepath.Join(dir, "k.ptx")
		cmd := exec.Command(clang, "-x", "cuda", "--cuda-device-only", "-nocudainc", "-nocudalib", clangtest.NoCUDA,
			"--cuda-gpu-arch=sm_90", "-std=c++17", "-O2", "-Wall", "-Wno-unused-function", "-Werror=return-type",
			"-Werror=implicit-function-declaration", "-S", "-o", out, path)
		msg, err := cmd.CombinedOutput()
		if err != nil || strings.Contains(string(msg), "warning") {
			t.Fatalf("clang rejected source %d: %v\n%s\n--- source ---\n%s", i, err, msg, numbered(src))
		}
		ptx, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range bySrc[src] {
			if !strings.Contains(string(ptx), ".entry "+e.k.Name) {
				t.Errorf("PTX lacks %s", e.k.Name)
			} else if n := strings.Count(entryParams(string(ptx), e.k.Name), ".param"); n != e.params {
				t.Errorf("%s: %d parameters, want %d", e.k.Name, n, e.params)
			}
		}
	}
	t.Logf("clang compiled %d sources, %d entry points", len(order), len(es))
}
