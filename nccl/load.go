package nccl

import (
	"fmt"
	"sync"
	"unsafe"

	"github.com/ebitengine/purego"
	"github.com/gocu-dev/gocu/internal/dynlib"
)

// spec is where libnccl is looked for: the GOCU_NCCL_LIB override, the
// dynamic loader, the directories NVIDIA's packages install to, then the
// pip wheels (nvidia-nccl-cu12 and -cu13 install nvidia/nccl/lib, which is
// where PyTorch's NCCL lives).
var spec = dynlib.Spec{
	What:    "libnccl (NCCL 2)",
	Env:     "GOCU_NCCL_LIB",
	Sonames: []string{"libnccl.so.2", "libnccl.so"},
	Dirs: []string{
		"/usr/lib/x86_64-linux-gnu",
		"/usr/lib64",
		"/usr/local/nccl/lib",
		"/usr/local/cuda/lib64",
		"/usr/local/cuda/targets/x86_64-linux/lib",
		"/usr/local/cuda-13*/targets/x86_64-linux/lib",
		"/usr/local/cuda-12*/targets/x86_64-linux/lib",
	},
	Wheel:    []string{"nvidia/nccl/lib", "nvidia/cu13/lib"},
	NotFound: ErrNoLibrary,
}

// minVersion is the oldest NCCL the package accepts. 2.14 (2022) has every
// entry point it binds (ncclGetLastError came in 2.13, ncclCommFinalize in
// 2.14). Only the FP8 types need a newer one (2.24).
const minVersion = 21400

// lib holds the entry points, resolved once.
type lib struct {
	path                string
	version             int // ncclGetVersion's code, e.g. 22605 for 2.26.5
	major, minor, patch int

	getVersion, getUniqueID, getErrorString                uintptr
	commInitAll, commDestroy, commAbort, commGetAsyncError uintptr
	commCount, commCuDevice, commUserRank                  uintptr
	allReduce, broadcast, reduce, allGather, reduceScatter uintptr
	send, recv, groupStart, groupEnd                       uintptr
	getLastError, commFinalize                             uintptr

	// commInitRank takes the 128-byte ncclUniqueId by value, which only
	// purego's RegisterFunc lays out as the C ABI wants (on the stack on
	// amd64, by reference on arm64).
	commInitRank func(comm *uintptr, nranks int32, id cUniqueID, rank int32) int32

	detailMu   sync.Mutex
	lastDetail string // the ncclGetLastError text last attached to an error
}

// cUniqueID is ncclUniqueId: struct { char internal[128]; }.
type cUniqueID struct{ internal [idBytes]byte }

var libOnce = dynlib.NewOnce(func() (*lib, error) { return open(spec) }, func(l *lib) string { return l.path })

// Load loads libnccl if it is not loaded yet; every other function calls
// it. The error matches ErrNoLibrary and lists every place tried, or names
// the symbol or version that makes the file found unusable. GOCU_NCCL_LIB
// names a file to use instead of searching. Loading needs no GPU.
func Load() error { return libOnce.Err() }

// Available reports whether a usable libnccl can be loaded.
func Available() bool { return Load() == nil }

// LibraryPath returns the name or file libnccl was loaded from, or Load's
// error (as cuda.LibraryPath, nvrtc.LibraryPath and cublas.LibraryPath do).
func LibraryPath() (string, error) { return libOnce.Path() }

// Version returns the version of the loaded NCCL, such as 2, 26, 5.
func Version() (major, minor, patch int, err error) {
	l, err := load()
	if err != nil {
		return 0, 0, 0, err
	}
	return l.major, l.minor, l.patch, nil
}

func load() (*lib, error) { return libOnce.Lib() }

func open(s dynlib.Spec) (*lib, error) {
	dl, err := dynlib.Open(s)
	if err != nil {
		return nil, err
	}
	return resolve(dl)
}

// resolve checks the version and looks every entry point up. A file that
// is too old or lacks a symbol is reported as an error that matches
// ErrNoLibrary: it is not a usable NCCL.
func resolve(dl *dynlib.Lib) (*lib, error) {
	l := &lib{path: dl.Path}
	unusable := func(why string) error {
		return &LoadError{Path: dl.Path, Reason: why}
	}
	var err error
	if l.getVersion, err = dl.Sym("ncclGetVersion"); err != nil {
		return nil, unusable(err.Error())
	}
	var v int32
	if r := Result(dynlib.Call(l.getVersion, uintptr(unsafe.Pointer(&v)))); r != Success {
		return nil, unusable(fmt.Sprintf("ncclGetVersion failed: %v", r))
	}
	l.version = int(v)
	l.major, l.minor, l.patch = splitVersion(l.version)
	if l.version < minVersion {
		return nil, unusable(fmt.Sprintf("NCCL %d.%d.%d is too old: gocu needs NCCL 2.14 or newer", l.major, l.minor, l.patch))
	}
	var initRank uintptr
	for _, s := range []struct {
		name string
		p    *uintptr
	}{
		{"ncclGetUniqueId", &l.getUniqueID},
		{"ncclGetErrorString", &l.getErrorString},
		{"ncclGetLastError", &l.getLastError},
		{"ncclCommInitRank", &initRank},
		{"ncclCommInitAll", &l.commInitAll},
		{"ncclCommFinalize", &l.commFinalize},
		{"ncclCommDestroy", &l.commDestroy},
		{"ncclCommAbort", &l.commAbort},
		{"ncclCommGetAsyncError", &l.commGetAsyncError},
		{"ncclCommCount", &l.commCount},
		{"ncclCommCuDevice", &l.commCuDevice},
		{"ncclCommUserRank", &l.commUserRank},
		{"ncclAllReduce", &l.allReduce},
		{"ncclBroadcast", &l.broadcast},
		{"ncclReduce", &l.reduce},
		{"ncclAllGather", &l.allGather},
		{"ncclReduceScatter", &l.reduceScatter},
		{"ncclSend", &l.send},
		{"ncclRecv", &l.recv},
		{"ncclGroupStart", &l.groupStart},
		{"ncclGroupEnd", &l.groupEnd},
	} {
		if *s.p, err = dl.Sym(s.name); err != nil {
			return nil, unusable(err.Error())
		}
	}
	purego.RegisterFunc(&l.commInitRank, initRank)
	return l, nil
}

// splitVersion decodes NCCL_VERSION_CODE: X*1000+Y*100+Z up to 2.8,
// X*10000+Y*100+Z from 2.9 on.
func splitVersion(code int) (major, minor, patch int) {
	if code < 10000 {
		return code / 1000, code % 1000 / 100, code % 100
	}
	return code / 10000, code % 10000 / 100, code % 100
}

// versionCode is NCCL_VERSION(major, minor, patch) for comparisons.
func versionCode(major, minor, patch int) int {
	if major <= 2 && minor <= 8 {
		return major*1000 + minor*100 + patch
	}
	return major*10000 + minor*100 + patch
}

// atLeast reports whether the loaded version is major.minor or newer.
func (l *lib) atLeast(major, minor int) bool { return l.version >= versionCode(major, minor, 0) }
