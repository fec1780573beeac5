package cudagen

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gocu-dev/gocu/internal/clangtest"

	"github.com/gocu-dev/gocu/array/internal/backend"
)

// ixPrelude declares the atomics and warp votes the indexing kernels use,
// which the shared prelude lacks (PTX needs only their signatures).
const ixPrelude = `
__device__ unsigned long long atomicCAS(unsigned long long*, unsigned long long, unsigned long long);
__device__ unsigned int atomicCAS(unsigned int*, unsigned int, unsigned int);
__device__ float atomicAdd(float*, float);
__device__ double atomicAdd(double*, double);
__device__ unsigned long long atomicAdd(unsigned long long*, unsigned long long);
__device__ int atomicMax(int*, int);
__device__ long long atomicMax(long long*, long long);
__device__ unsigned int __ballot_sync(unsigned int, bool);
__device__ int __popc(unsigned int);
`

// ixKernels are the indexing kernels of every specialisation.
func ixKernels(t *testing.T) []*Kernel {
	var ks []*Kernel
	idxs := [][]backend.DType{{backend.Int64}, {backend.Int32}, {backend.Int64, backend.Int32, backend.Int64}}
	for _, rows := range []bool{false, true} {
		for _, o1 := range []bool{false, true} {
			for _, i1 := range []bool{false, true} {
				for _, ix := range idxs {
					s := ixShape{rows: rows, o1: o1, i1: i1 && !rows, idxDT: ix}
					for _, w := range []int{1, 2, 4, 8, 16} {
						ks = append(ks, GatherKernel(w, s))
					}
					for _, op := range []backend.ScatterOp{backend.ScatterSet, backend.ScatterAdd, backend.ScatterMax} {
						for _, dt := range []backend.DType{backend.Float32, backend.Float64, backend.Int32, backend.Int64, backend.Uint8, backend.Bool} {
							k, err := ScatterKernel(op, dt, s)
							if err != nil {
								if op == backend.ScatterSet || dt.Size() >= 4 {
									t.Fatal(err)
								}
								continue
							}
							ks = append(ks, k)
						}
					}
				}
			}
		}
	}
	nz := NonzeroKernels()
	return append(ks, nz[:]...)
}

// TestIndexKernelsClang compiles every indexing kernel, in one
// translation unit, to PTX for sm_90.
func TestIndexKernelsClang(t *testing.T) {
	clang := clangPath(t)
	var body strings.Builder
	ks := ixKernels(t)
	shared := vectorTypes + ixHelpers
	seen := map[string]bool{}
	for _, k := range ks {
		if seen[k.Name] {
			continue // Set of one element size is one kernel for every dtype
		}
		seen[k.Name] = true
		body.WriteString(strings.Replace(k.Source, shared, "", 1))
		body.WriteString("\n")
	}
	dir := t.TempDir()
	src := filepath.Join(dir, "ix.cu")
	if err := os.WriteFile(src, []byte(devicePrelude+ixPrelude+shared+body.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "ix.ptx")
	cmd := exec.Command(clang, "-x", "cuda", "--cuda-device-only", "-nocudainc", "-nocudalib", clangtest.NoCUDA,
		"--cuda-gpu-arch=sm_90", "-std=c++17", "-O1", "-Wall", "-Wno-unused-function", "-Werror=return-type",
		"-S", "-o", out, src)
	msg, err := cmd.CombinedOutput()
	if err != nil || strings.Contains(string(msg), "warning") {
		t.Fatalf("clang: %v\n%s", err, firstLines(string(msg), 30))
	}
	ptx, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range ks {
		if n := strings.Count(entryParams(string(ptx), k.Name), ".param"); n != len(k.Params) || n == 0 {
			t.Errorf("%s: PTX has %d parameters, Kernel.Params %d", k.Name, n, len(k.Params))
		}
	}
	// The widest gather moves rows with 128-bit accesses.
	k := GatherKernel(16, ixShape{rows: true, idxDT: []backend.DType{backend.Int64}})
	e := strings.Index(string(ptx), ".entry "+k.Name)
	if e < 0 || !strings.Contains(string(ptx)[e:], "ld.global.nc.v4") && !strings.Contains(string(ptx)[e:], "ld.global.v4") {
		t.Errorf("no 128-bit loads in %s", k.Name)
	}
}
