package cusolver

import (
	"fmt"
	"unsafe"

	"github.com/gocu-dev/gocu/internal/dynlib"
)

// spec is where libcusolver is looked for. Its dependencies (cuBLAS,
// cuSPARSE, nvJitLink) are opened first from the candidate's directory,
// so a pip wheel loads without LD_LIBRARY_PATH.
var spec = dynlib.Spec{
	What:    "libcusolver (cuSOLVER, CUDA 12 or 13)",
	Env:     "GOCU_CUSOLVER_LIB",
	Sonames: []string{"libcusolver.so.12", "libcusolver.so.11", "libcusolver.so"},
	Dirs: []string{
		"/usr/local/cuda/lib64",
		"/usr/local/cuda/targets/x86_64-linux/lib",
		"/usr/local/cuda-13*/targets/x86_64-linux/lib",
		"/usr/local/cuda-13*/lib64",
		"/usr/local/cuda-12*/targets/x86_64-linux/lib",
		"/usr/local/cuda-12*/lib64",
		"/usr/lib/x86_64-linux-gnu",
	},
	Wheel: []string{"nvidia/cu13/lib", "nvidia/cusolver/lib"},
	Deps: []string{
		"libnvJitLink.so.13", "libnvJitLink.so.12",
		"libcublasLt.so.13", "libcublasLt.so.12", "libcublas.so.13", "libcublas.so.12",
		"libcusparse.so.12",
	},
	Require:  []string{"cusolverDnCreate"},
	NotFound: ErrNotFound,
}

// DType is the element type of a routine: its S or D variant.
type DType int

// The element types bound.
const (
	Float32 DType = iota // the S routines
	Float64              // the D routines
)

func (d DType) String() string {
	switch d {
	case Float32:
		return "float32"
	case Float64:
		return "float64"
	}
	return fmt.Sprintf("DType(%d)", int(d))
}

func (d DType) valid() bool { return d == Float32 || d == Float64 }

// letter is the routine prefix of d.
func (d DType) letter() string { return [2]string{"S", "D"}[d] }

// typed holds the entry points that exist once per element type.
type typed struct {
	getrfBuf, getrf, getrs                         uintptr
	potrfBuf, potrf, potrs, potrfBatched, potrsBat uintptr
	geqrfBuf, geqrf, orgqrBuf, orgqr               uintptr
	gesvdBuf, gesvd, gesvdjBuf, gesvdj             uintptr
	gesvdjBatBuf, gesvdjBat                        uintptr
	syevdBuf, syevd, syevjBatBuf, syevjBat         uintptr
}

type lib struct {
	path string

	create, destroy, setStream, getProperty uintptr
	createGesvdj, destroyGesvdj             uintptr
	gesvdjSweeps, gesvdjSort                uintptr
	createSyevj, destroySyevj               uintptr
	syevjSweeps, syevjSort                  uintptr

	t [2]typed
}

var libOnce = dynlib.NewOnce(open, func(l *lib) string { return l.path })

// Load loads libcusolver if it is not loaded yet; Create calls it. The
// error wraps ErrNotFound and lists every place tried. GOCU_CUSOLVER_LIB
// names a file to use instead of searching.
func Load() error { return libOnce.Err() }

// Available reports whether libcusolver can be loaded.
func Available() bool { return Load() == nil }

// LibraryPath returns the name or file libcusolver was loaded from, or
// Load's error.
func LibraryPath() (string, error) { return libOnce.Path() }

func load() (*lib, error) { return libOnce.Lib() }

// symbol is one entry point: its C name and where its address goes.
type symbol struct {
	name string
	p    *uintptr
}

// symbols lists every entry point of l.
func (l *lib) symbols() []symbol {
	s := []symbol{
		{"cusolverDnCreate", &l.create},
		{"cusolverDnDestroy", &l.destroy},
		{"cusolverDnSetStream", &l.setStream},
		{"cusolverGetProperty", &l.getProperty},
		{"cusolverDnCreateGesvdjInfo", &l.createGesvdj},
		{"cusolverDnDestroyGesvdjInfo", &l.destroyGesvdj},
		{"cusolverDnXgesvdjSetMaxSweeps", &l.gesvdjSweeps},
		{"cusolverDnXgesvdjSetSortEig", &l.gesvdjSort},
		{"cusolverDnCreateSyevjInfo", &l.createSyevj},
		{"cusolverDnDestroySyevjInfo", &l.destroySyevj},
		{"cusolverDnXsyevjSetMaxSweeps", &l.syevjSweeps},
		{"cusolverDnXsyevjSetSortEig", &l.syevjSort},
	}
	for d := Float32; d <= Float64; d++ {
		t, x := &l.t[d], "cusolverDn"+d.letter()
		s = append(s,
			symbol{x + "getrf_bufferSize", &t.getrfBuf},
			symbol{x + "getrf", &t.getrf},
			symbol{x + "getrs", &t.getrs},
			symbol{x + "potrf_bufferSize", &t.potrfBuf},
			symbol{x + "potrf", &t.potrf},
			symbol{x + "potrs", &t.potrs},
			symbol{x + "potrfBatched", &t.potrfBatched},
			symbol{x + "potrsBatched", &t.potrsBat},
			symbol{x + "geqrf_bufferSize", &t.geqrfBuf},
			symbol{x + "geqrf", &t.geqrf},
			symbol{x + "orgqr_bufferSize", &t.orgqrBuf},
			symbol{x + "orgqr", &t.orgqr},
			symbol{x + "gesvd_bufferSize", &t.gesvdBuf},
			symbol{x + "gesvd", &t.gesvd},
			symbol{x + "gesvdj_bufferSize", &t.gesvdjBuf},
			symbol{x + "gesvdj", &t.gesvdj},
			symbol{x + "gesvdjBatched_bufferSize", &t.gesvdjBatBuf},
			symbol{x + "gesvdjBatched", &t.gesvdjBat},
			symbol{x + "syevd_bufferSize", &t.syevdBuf},
			symbol{x + "syevd", &t.syevd},
			symbol{x + "syevjBatched_bufferSize", &t.syevjBatBuf},
			symbol{x + "syevjBatched", &t.syevjBat},
		)
	}
	return s
}

func open() (*lib, error) {
	dl, err := dynlib.Open(spec)
	if err != nil {
		return nil, err
	}
	l := &lib{path: dl.Path}
	for _, s := range l.symbols() {
		if *s.p, err = dl.Sym(s.name); err != nil {
			return nil, fmt.Errorf("cusolver: %s is not a usable cuSOLVER: %w", dl.Path, err)
		}
	}
	return l, nil
}

// Version returns the cuSOLVER library version (12, 0, 4 for cuSOLVER
// 12.0.4). It needs no handle and no GPU.
func Version() (major, minor, patch int, err error) {
	l, err := load()
	if err != nil {
		return 0, 0, 0, err
	}
	var v [3]int32
	for i := range v {
		// libraryPropertyType: MAJOR_VERSION 0, MINOR_VERSION 1, PATCH_LEVEL 2.
		if err := check("cusolverGetProperty", Status(dynlib.Call(l.getProperty, uintptr(i), uintptr(unsafe.Pointer(&v[i]))))); err != nil {
			return 0, 0, 0, err
		}
	}
	return int(v[0]), int(v[1]), int(v[2]), nil
}
