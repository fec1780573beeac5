package cublas

import (
	"fmt"
	"unsafe"

	"github.com/gocu-dev/gocu/internal/dynlib"
)

// spec is where libcublas is looked for. libcublasLt, which libcublas needs,
// is opened first from the same directory, so a pip wheel loads without
// LD_LIBRARY_PATH.
var spec = dynlib.Spec{
	What:    "libcublas (cuBLAS, CUDA 12 or 13)",
	Env:     "GOCU_CUBLAS_LIB",
	Sonames: []string{"libcublas.so.13", "libcublas.so.12", "libcublas.so"},
	Dirs: []string{
		"/usr/local/cuda/lib64",
		"/usr/local/cuda/targets/x86_64-linux/lib",
		"/usr/local/cuda-13*/targets/x86_64-linux/lib",
		"/usr/local/cuda-13*/lib64",
		"/usr/local/cuda-12*/targets/x86_64-linux/lib",
		"/usr/local/cuda-12*/lib64",
		"/usr/lib/x86_64-linux-gnu",
	},
	Wheel:    []string{"nvidia/cu13/lib", "nvidia/cublas/lib"},
	Deps:     []string{"libcublasLt.so.13", "libcublasLt.so.12"},
	NotFound: ErrNotFound,
}

type lib struct {
	path string

	create, destroy, getVersion, getProperty uintptr
	setStream, setMathMode, getMathMode      uintptr
	setWorkspace                             uintptr
	sgemm, dgemm, gemmEx                     uintptr
	sgemmStridedBatched, dgemmStridedBatched uintptr
	cgemm, zgemm                             uintptr
	gemmStridedBatchedEx                     uintptr
	sgemv, dgemv, saxpy, daxpy, sdot, ddot   uintptr
	sscal, dscal                             uintptr
	getrfBatched, getrsBatched, getriBatched [2]uintptr // S, D
}

var libOnce = dynlib.NewOnce(open, func(l *lib) string { return l.path })

// Load loads libcublas if it is not loaded yet; Create calls it. The error
// wraps ErrNotFound and lists every place tried. GOCU_CUBLAS_LIB names a
// file to use instead of searching.
func Load() error { return libOnce.Err() }

// Available reports whether libcublas can be loaded.
func Available() bool { return Load() == nil }

// LibraryPath returns the name or file libcublas was loaded from, or
// Load's error (cuda.LibraryPath and nvrtc.LibraryPath are alike).
func LibraryPath() (string, error) { return libOnce.Path() }

func load() (*lib, error) { return libOnce.Lib() }

func open() (*lib, error) {
	dl, err := dynlib.Open(spec)
	if err != nil {
		return nil, err
	}
	l := &lib{path: dl.Path}
	for _, s := range []struct {
		name string
		p    *uintptr
	}{
		{"cublasCreate_v2", &l.create},
		{"cublasDestroy_v2", &l.destroy},
		{"cublasGetVersion_v2", &l.getVersion},
		{"cublasGetProperty", &l.getProperty},
		{"cublasSetStream_v2", &l.setStream},
		{"cublasSetMathMode", &l.setMathMode},
		{"cublasGetMathMode", &l.getMathMode},
		{"cublasSetWorkspace_v2", &l.setWorkspace},
		{"cublasSgemm_v2", &l.sgemm},
		{"cublasDgemm_v2", &l.dgemm},
		{"cublasCgemm_v2", &l.cgemm},
		{"cublasZgemm_v2", &l.zgemm},
		{"cublasGemmEx", &l.gemmEx},
		{"cublasSgemmStridedBatched", &l.sgemmStridedBatched},
		{"cublasDgemmStridedBatched", &l.dgemmStridedBatched},
		{"cublasGemmStridedBatchedEx", &l.gemmStridedBatchedEx},
		{"cublasSgemv_v2", &l.sgemv},
		{"cublasDgemv_v2", &l.dgemv},
		{"cublasSaxpy_v2", &l.saxpy},
		{"cublasDaxpy_v2", &l.daxpy},
		{"cublasSdot_v2", &l.sdot},
		{"cublasDdot_v2", &l.ddot},
		{"cublasSscal_v2", &l.sscal},
		{"cublasDscal_v2", &l.dscal},
		{"cublasSgetrfBatched", &l.getrfBatched[0]},
		{"cublasDgetrfBatched", &l.getrfBatched[1]},
		{"cublasSgetrsBatched", &l.getrsBatched[0]},
		{"cublasDgetrsBatched", &l.getrsBatched[1]},
		{"cublasSgetriBatched", &l.getriBatched[0]},
		{"cublasDgetriBatched", &l.getriBatched[1]},
	} {
		if *s.p, err = dl.Sym(s.name); err != nil {
			return nil, fmt.Errorf("cublas: %s is not a usable cuBLAS: %w", dl.Path, err)
		}
	}
	return l, nil
}

// libraryPropertyType values.
const (
	propMajor = 0
	propMinor = 1
	propPatch = 2
)

// Version returns the cuBLAS library version (13, 1, 0 for cuBLAS 13.1.0).
// It needs no handle and no GPU.
func Version() (major, minor, patch int, err error) {
	l, err := load()
	if err != nil {
		return 0, 0, 0, err
	}
	var v [3]int32
	for i, p := range []int{propMajor, propMinor, propPatch} {
		if err := check("cublasGetProperty", Status(dynlib.Call(l.getProperty, uintptr(p), uintptr(unsafe.Pointer(&v[i]))))); err != nil {
			return 0, 0, 0, err
		}
	}
	return int(v[0]), int(v[1]), int(v[2]), nil
}
