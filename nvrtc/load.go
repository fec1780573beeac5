package nvrtc

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"unsafe"

	"github.com/gocu-dev/gocu/internal/dynlib"
)

// spec is where libnvrtc is looked for: the GOCU_NVRTC_LIB override, the
// dynamic loader, the toolkit directories, then NVIDIA's pip wheels
// (nvidia/cu13/lib for CUDA 13, nvidia/cuda_nvrtc/lib for CUDA 12).
var spec = dynlib.Spec{
	What:    "libnvrtc (NVRTC, CUDA 12 or 13)",
	Env:     "GOCU_NVRTC_LIB",
	Sonames: []string{"libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so"},
	Dirs: []string{
		"/usr/local/cuda/lib64",
		"/usr/local/cuda/targets/x86_64-linux/lib",
		"/usr/local/cuda-13*/targets/x86_64-linux/lib",
		"/usr/local/cuda-13*/lib64",
		"/usr/local/cuda-12*/targets/x86_64-linux/lib",
		"/usr/local/cuda-12*/lib64",
		"/usr/lib/x86_64-linux-gnu",
	},
	Wheel:    []string{"nvidia/cu13/lib", "nvidia/cuda_nvrtc/lib"},
	NotFound: ErrNotFound,
}

// lib holds the entry points, resolved once.
type lib struct {
	path                 string
	fileID               string // the mapped library file, see mappedFile
	major, minor         int
	getErrorString       uintptr
	version              uintptr
	getNumSupportedArchs uintptr
	getSupportedArchs    uintptr
	createProgram        uintptr
	destroyProgram       uintptr
	compileProgram       uintptr
	getPTXSize           uintptr
	getPTX               uintptr
	getCUBINSize         uintptr
	getCUBIN             uintptr
	getProgramLogSize    uintptr
	getProgramLog        uintptr
	addNameExpression    uintptr
	getLoweredName       uintptr
}

var libOnce = dynlib.NewOnce(open, func(l *lib) string { return l.path })

// Load loads libnvrtc if it is not loaded yet. Every other function calls it;
// call it directly to learn early whether NVRTC is there. The error wraps
// ErrNotFound and lists every place tried. NVRTC needs no GPU, only the
// library.
func Load() error { return libOnce.Err() }

// Available reports whether libnvrtc can be loaded.
func Available() bool { return Load() == nil }

// LibraryPath returns the name or file libnvrtc was loaded from, or Load's
// error (cuda.LibraryPath and cublas.LibraryPath are alike).
func LibraryPath() (string, error) { return libOnce.Path() }

func load() (*lib, error) { return libOnce.Lib() }

func open() (*lib, error) {
	dl, err := dynlib.Open(spec)
	if err != nil {
		return nil, err
	}
	l := &lib{path: dl.Path}
	syms := []struct {
		name string
		p    *uintptr
	}{
		{"nvrtcGetErrorString", &l.getErrorString},
		{"nvrtcVersion", &l.version},
		{"nvrtcGetNumSupportedArchs", &l.getNumSupportedArchs},
		{"nvrtcGetSupportedArchs", &l.getSupportedArchs},
		{"nvrtcCreateProgram", &l.createProgram},
		{"nvrtcDestroyProgram", &l.destroyProgram},
		{"nvrtcCompileProgram", &l.compileProgram},
		{"nvrtcGetPTXSize", &l.getPTXSize},
		{"nvrtcGetPTX", &l.getPTX},
		{"nvrtcGetCUBINSize", &l.getCUBINSize},
		{"nvrtcGetCUBIN", &l.getCUBIN},
		{"nvrtcGetProgramLogSize", &l.getProgramLogSize},
		{"nvrtcGetProgramLog", &l.getProgramLog},
		{"nvrtcAddNameExpression", &l.addNameExpression},
		{"nvrtcGetLoweredName", &l.getLoweredName},
	}
	for _, s := range syms {
		if *s.p, err = dl.Sym(s.name); err != nil {
			return nil, fmt.Errorf("nvrtc: %s is not a usable NVRTC: %w", dl.Path, err)
		}
	}
	var major, minor int32
	if err := l.check("nvrtcVersion", Code(dynlib.Call(l.version, uintptr(unsafe.Pointer(&major)), uintptr(unsafe.Pointer(&minor))))); err != nil {
		return nil, err
	}
	l.major, l.minor = int(major), int(minor)
	l.fileID = mappedFile("libnvrtc.so")
	return l, nil
}

// mappedFile identifies the loaded library whose file name starts with
// prefix: the loader may have found it by soname, so its real file is read
// from /proc/self/maps. It returns "" where that is not possible.
func mappedFile(prefix string) string {
	maps, err := os.ReadFile("/proc/self/maps")
	if err != nil {
		return ""
	}
	for line := range strings.Lines(string(maps)) {
		i := strings.IndexByte(line, '/')
		if i < 0 {
			continue
		}
		p := strings.TrimSpace(line[i:])
		if !strings.HasPrefix(filepath.Base(p), prefix) {
			continue
		}
		st, err := os.Stat(p)
		if err != nil {
			return p
		}
		return fmt.Sprintf("%s %d %d", p, st.Size(), st.ModTime().UnixNano())
	}
	return ""
}

// check turns a result into an *Error carrying NVRTC's own message.
func (l *lib) check(fn string, c Code) error {
	if c == Success {
		return nil
	}
	return &Error{Func: fn, Code: c, Message: l.errorString(c)}
}

func (l *lib) errorString(c Code) string {
	return dynlib.GoString(dynlib.PtrAt(dynlib.Call(l.getErrorString, uintptr(c))))
}

// Version returns the NVRTC version (13, 0 for CUDA 13.0).
func Version() (major, minor int, err error) {
	l, err := load()
	if err != nil {
		return 0, 0, err
	}
	return l.major, l.minor, nil
}

// SupportedArchs returns the compute capabilities this NVRTC can compile for,
// as numbers like 75, 80, 90, 120, in ascending order.
func SupportedArchs() ([]int, error) {
	l, err := load()
	if err != nil {
		return nil, err
	}
	var n int32
	if err := l.check("nvrtcGetNumSupportedArchs", Code(dynlib.Call(l.getNumSupportedArchs, uintptr(unsafe.Pointer(&n))))); err != nil {
		return nil, err
	}
	if n <= 0 {
		return nil, nil
	}
	archs := make([]int32, n)
	if err := l.check("nvrtcGetSupportedArchs", Code(dynlib.Call(l.getSupportedArchs, uintptr(unsafe.Pointer(&archs[0]))))); err != nil {
		return nil, err
	}
	out := make([]int, n)
	for i, a := range archs {
		out[i] = int(a)
	}
	return out, nil
}
