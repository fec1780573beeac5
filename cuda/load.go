package cuda

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"unsafe"

	"github.com/gocu-dev/gocu/internal/dynlib"
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

// LibraryPath returns the name or file libcuda was loaded from, or Init's
// error when no driver could be loaded (nvrtc.LibraryPath and
// cublas.LibraryPath are alike).
func LibraryPath() (string, error) {
	if err := load(); err != nil {
		return "", err
	}
	return libPath, nil
}

// DeviceCount returns the number of CUDA devices the driver sees.
func DeviceCount() (int, error) {
	if err := load(); err != nil {
		return 0, err
	}
	return numDevices, nil
}

func initDriver() error {
	lib, err := openDriver(os.Getenv(envLib), libraryPaths)
	if err != nil {
		return err
	}
	a := &api{}
	if err := a.resolve(lib); err != nil {
		lib.Close()
		return fmt.Errorf("cuda: %s is not a usable CUDA driver: %w", lib.Path, err)
	}
	if r := Result(dynlib.Call(a.cuInit, 0)); r != 0 {
		return a.error("cuInit", r)
	}
	var v, n int32
	if r := Result(dynlib.Call(a.cuDriverGetVersion, uintptr(unsafe.Pointer(&v)))); r != 0 {
		return a.error("cuDriverGetVersion", r)
	}
	if r := Result(dynlib.Call(a.cuDeviceGetCount, uintptr(unsafe.Pointer(&n)))); r != 0 {
		return a.error("cuDeviceGetCount", r)
	}
	drv, libPath, driverVer, numDevices = a, lib.Path, int(v), int(n)
	return nil
}

// openDriver opens the first libcuda that loads and has cuInit (package
// dynlib does the loading): only env when it is set (GOCU_CUDA_LIB), else
// each of paths in turn, RTLD_GLOBAL. The error is a *LoadError listing
// every attempt and its reason.
func openDriver(env string, paths []string) (*dynlib.Lib, error) {
	if env != "" {
		paths = []string{env}
	}
	lib, err := dynlib.Open(dynlib.Spec{What: "a CUDA driver", Paths: paths, Require: []string{"cuInit"}, Global: true})
	if err == nil {
		return lib, nil
	}
	le := &LoadError{Env: env}
	var nf *dynlib.NotFoundError
	if !errors.As(err, &nf) {
		return nil, err
	}
	for _, a := range nf.Tried {
		le.Attempts = append(le.Attempts, LoadAttempt{Path: a.Path, Err: errors.New(a.Reason)})
	}
	return nil, le
}

// resolve finds every entry point; a required one missing is an error that
// names it.
func (a *api) resolve(lib *dynlib.Lib) error {
	var missing []string
	for _, s := range a.symbols() {
		for _, name := range s.names {
			if p, err := lib.Sym(name); err == nil {
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
	if Result(dynlib.Call(a.cuGetErrorName, uintptr(r), uintptr(unsafe.Pointer(&p)))) == 0 && p != 0 {
		e.Name = dynlib.GoString(dynlib.PtrAt(p))
	}
	p = 0
	if Result(dynlib.Call(a.cuGetErrorString, uintptr(r), uintptr(unsafe.Pointer(&p)))) == 0 && p != 0 {
		e.Msg = dynlib.GoString(dynlib.PtrAt(p))
	}
	return e
}
