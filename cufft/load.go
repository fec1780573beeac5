package cufft

import (
	"fmt"
	"unsafe"

	"github.com/gocu-dev/gocu/internal/dynlib"
)

// spec is where libcufft is looked for.
var spec = dynlib.Spec{
	What:    "libcufft (cuFFT, CUDA 12 or 13)",
	Env:     "GOCU_CUFFT_LIB",
	Sonames: []string{"libcufft.so.12", "libcufft.so.11", "libcufft.so"},
	Dirs: []string{
		"/usr/local/cuda/lib64",
		"/usr/local/cuda/targets/x86_64-linux/lib",
		"/usr/local/cuda-13*/targets/x86_64-linux/lib",
		"/usr/local/cuda-13*/lib64",
		"/usr/local/cuda-12*/targets/x86_64-linux/lib",
		"/usr/local/cuda-12*/lib64",
		"/usr/lib/x86_64-linux-gnu",
	},
	Wheel:    []string{"nvidia/cu13/lib", "nvidia/cufft/lib"},
	Require:  []string{"cufftMakePlanMany"},
	NotFound: ErrNotFound,
}

type lib struct {
	path string

	create, destroy, setAuto, makeMany  uintptr
	setWork, setStream, getSize, getVer uintptr
	getProperty                         uintptr
	exec                                [6]uintptr // by Type index
}

var libOnce = dynlib.NewOnce(open, func(l *lib) string { return l.path })

// Load loads libcufft if it is not loaded yet; NewPlan calls it. The error
// wraps ErrNotFound and lists every place tried. GOCU_CUFFT_LIB names a
// file to use instead of searching.
func Load() error { return libOnce.Err() }

// Available reports whether libcufft can be loaded.
func Available() bool { return Load() == nil }

// LibraryPath returns the name or file libcufft was loaded from, or
// Load's error.
func LibraryPath() (string, error) { return libOnce.Path() }

func load() (*lib, error) { return libOnce.Lib() }

type symbol struct {
	name string
	p    *uintptr
}

func (l *lib) symbols() []symbol {
	s := []symbol{
		{"cufftCreate", &l.create},
		{"cufftDestroy", &l.destroy},
		{"cufftSetAutoAllocation", &l.setAuto},
		{"cufftMakePlanMany", &l.makeMany},
		{"cufftSetWorkArea", &l.setWork},
		{"cufftSetStream", &l.setStream},
		{"cufftGetSize", &l.getSize},
		{"cufftGetVersion", &l.getVer},
		{"cufftGetProperty", &l.getProperty},
	}
	for i, t := range types {
		s = append(s, symbol{"cufftExec" + t.exec, &l.exec[i]})
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
			return nil, fmt.Errorf("cufft: %s is not a usable cuFFT: %w", dl.Path, err)
		}
	}
	return l, nil
}

// Version returns cuFFT's version as one number, e.g. 12000 (cufftGetVersion).
// It needs no GPU.
func Version() (int, error) {
	l, err := load()
	if err != nil {
		return 0, err
	}
	v := new(int32)
	err = check("cufftGetVersion", Result(dynlib.Call(l.getVer, uintptr(unsafe.Pointer(v)))))
	return int(*v), err
}
