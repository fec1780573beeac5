package cuda

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"unsafe"

	"github.com/ebitengine/purego"
)

// The driver is loaded, initialised and its devices counted once per
// process, on first use.
var (
	loadOnce   sync.Once
	loadErr    error
	drv        *api
	libPath    string
	driverVer  int
	numDevices int
)

func load() error {
	loadOnce.Do(func() { loadErr = initDriver() })
	return loadErr
}

// Available reports whether a CUDA driver was loaded and initialised and
// has at least one device. It never panics; Init says why not.
func Available() bool {
	return load() == nil && numDevices > 0
}

// Init loads and initialises the driver (once per process) and returns why
// CUDA cannot be used, or nil: a *LoadError (errors.Is ErrNoDriver) listing
// every path tried when libcuda is missing, the *Error of cuInit when the
// driver fails, ErrNoDevice when it sees no GPU. Every function of the
// package calls it; calling it first only makes the reason available early.
func Init() error {
	if err := load(); err != nil {
		return err
	}
	if numDevices == 0 {
		return fmt.Errorf("cuda: the driver (%s) sees no device: %w", libPath, ErrNoDevice)
	}
	return nil
}

// DriverVersion returns the CUDA version the driver supports, such as
// 13000 for CUDA 13.0 (cuDriverGetVersion).
func DriverVersion() (int, error) {
	if err := load(); err != nil {
		return 0, err
	}
	return driverVer, nil
}

// LibraryPath returns the path libcuda was loaded from, or "" when none was.
func LibraryPath() string {
	if load() != nil {
		return ""
	}
	return libPath
}

// DeviceCount returns the number of CUDA devices the driver sees.
func DeviceCount() (int, error) {
	if err := load(); err != nil {
		return 0, err
	}
	return numDevices, nil
}

func initDriver() error {
	env := os.Getenv(envLib)
	h, path, err := openDriver(env, libraryPaths)
	if err != nil {
		return err
	}
	a := &api{}
	if err := a.resolve(h); err != nil {
		dlclose(h)
		return fmt.Errorf("cuda: %s is not a usable CUDA driver: %w", path, err)
	}
	if r := ccall(a.cuInit, 0); r != 0 {
		return a.error("cuInit", r)
	}
	var v, n int32
	if r := ccall(a.cuDriverGetVersion, uintptr(unsafe.Pointer(&v))); r != 0 {
		return a.error("cuDriverGetVersion", r)
	}
	if r := ccall(a.cuDeviceGetCount, uintptr(unsafe.Pointer(&n))); r != 0 {
		return a.error("cuDeviceGetCount", r)
	}
	drv, libPath, driverVer, numDevices = a, path, int(v), int(n)
	return nil
}

// openDriver dlopens the first libcuda that works: only env when it is set
// (GOCU_CUDA_LIB), else each of paths in turn. The error lists every
// attempt and its reason.
func openDriver(env string, paths []string) (uintptr, string, error) {
	if env != "" {
		paths = []string{env}
	}
	le := &LoadError{Env: env}
	for _, p := range paths {
		h, err := dlopen(p)
		if err != nil {
			le.Attempts = append(le.Attempts, LoadAttempt{Path: p, Err: errors.New(cleanDlerror(p, err))})
			continue
		}
		if dlsym(h, "cuInit") == 0 {
			dlclose(h)
			le.Attempts = append(le.Attempts, LoadAttempt{Path: p, Err: errors.New("loaded, but it has no cuInit: not a CUDA driver")})
			continue
		}
		return h, p, nil
	}
	return 0, "", le
}

// cleanDlerror shortens dlerror's "path: reason" to the reason.
func cleanDlerror(path string, err error) string {
	s := err.Error()
	s = strings.TrimPrefix(s, path+": ")
	if s == "" {
		s = "dlopen failed"
	}
	return s
}

// resolve finds every entry point; a required one missing is an error that
// names it.
func (a *api) resolve(h uintptr) error {
	var missing []string
	for _, s := range a.symbols() {
		for _, name := range s.names {
			if p := dlsym(h, name); p != 0 {
				*s.dst = p
				break
			}
		}
		if *s.dst == 0 && !s.optional {
			missing = append(missing, s.names[0])
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("the driver lacks %s (it is older than CUDA 11.4; update the NVIDIA driver)", strings.Join(missing, ", "))
	}
	return nil
}

// ccall calls the C function fn. Pointers converted to uintptr in the call
// expression are kept alive and on the heap for the call (uintptrescapes).
//
//go:uintptrescapes
func ccall(fn uintptr, args ...uintptr) Result {
	r, _, _ := purego.SyscallN(fn, args...)
	return Result(int32(r))
}

// error returns nil for success, else the *Error for a failed call of
// function fn, named and described by the driver when it can.
func (a *api) error(fn string, r Result) error {
	if r == 0 {
		return nil
	}
	e := &Error{Func: fn, Code: r, Name: r.Name(), Msg: r.staticMessage()}
	if a == nil || a.cuGetErrorName == 0 {
		return e
	}
	var p uintptr
	if ccall(a.cuGetErrorName, uintptr(r), uintptr(unsafe.Pointer(&p))) == 0 && p != 0 {
		e.Name = goString(p)
	}
	p = 0
	if ccall(a.cuGetErrorString, uintptr(r), uintptr(unsafe.Pointer(&p))) == 0 && p != 0 {
		e.Msg = goString(p)
	}
	return e
}

// goString copies the NUL-terminated C string at p.
func goString(p uintptr) string {
	if p == 0 {
		return ""
	}
	n := 0
	for *(*byte)(unsafe.Add(unsafe.Pointer(nil), p+uintptr(n))) != 0 {
		n++
	}
	return string(unsafe.Slice((*byte)(unsafe.Add(unsafe.Pointer(nil), p)), n))
}
