package cuda

import (
	"errors"
	"fmt"
	"os"
	"strings"
)

// Error is a failed CUDA driver call.
//
// Name and Msg come from the driver (cuGetErrorName, cuGetErrorString) when
// it is loaded and knows the code, and from a built-in table of every
// CUresult in cuda.h otherwise. Compare errors with errors.Is against the
// sentinels (ErrOutOfMemory, ErrIllegalAddress, ...); errors.Is(err,
// ErrContextLost) reports a sticky error.
type Error struct {
	Func string // the driver function that failed, e.g. "cuMemAlloc_v2"
	Code Result // the CUresult it returned
	Name string // CUDA's name of the code, e.g. "CUDA_ERROR_OUT_OF_MEMORY"
	Msg  string // the description of the code, plus detail gocu adds

	// Recent names, for a sticky error, the kernels launched last on the
	// device before the error was reported, the most recent first: a
	// kernel fault surfaces at a later call, so the kernel that caused it
	// is among them (GOCU_LAUNCH_BLOCKING=1 names it exactly).
	Recent []string
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString("cuda: ")
	if e.Func != "" {
		b.WriteString(e.Func)
		b.WriteString(": ")
	}
	b.WriteString(e.Name)
	if e.Msg != "" {
		b.WriteString(": ")
		b.WriteString(e.Msg)
	}
	if e.Code.Sticky() {
		b.WriteString(" (sticky error: the CUDA context is lost and every later CUDA call in this process fails; restart the process")
		if len(e.Recent) > 0 {
			b.WriteString("; kernels launched last on the device, most recent first: ")
			b.WriteString(strings.Join(e.Recent, ", "))
		}
		if !launchBlocking.Load() {
			// Kernel faults surface at a later synchronising call.
			b.WriteString("; to find the kernel that caused it, run with GOCU_LAUNCH_BLOCKING=1")
		}
		b.WriteString(")")
	}
	return b.String()
}

// Sticky reports whether the error left the CUDA context unusable; only a
// restart of the process recovers.
func (e *Error) Sticky() bool { return e.Code.Sticky() }

// Is makes errors.Is match a sentinel *Error by its code, and ErrContextLost
// for every sticky code.
func (e *Error) Is(target error) bool {
	if target == ErrContextLost {
		return e.Code.Sticky()
	}
	t, ok := target.(*Error)
	return ok && t.Func == "" && t.Code == e.Code
}

// sentinel returns the *Error that errors.Is matches against every error
// with the same code.
func sentinel(code Result) *Error {
	return &Error{Code: code, Name: code.Name(), Msg: code.staticMessage()}
}

// Sentinels for driver errors; match them with errors.Is.
var (
	ErrInvalidValue          = sentinel(1)
	ErrOutOfMemory           = sentinel(2)
	ErrNotInitialized        = sentinel(3)
	ErrDeinitialized         = sentinel(4)
	ErrStubLibrary           = sentinel(34)
	ErrDeviceUnavailable     = sentinel(46)
	ErrNoDevice              = sentinel(100)
	ErrInvalidDevice         = sentinel(101)
	ErrInvalidImage          = sentinel(200)
	ErrInvalidContext        = sentinel(201)
	ErrNoBinaryForGPU        = sentinel(209)
	ErrECCUncorrectable      = sentinel(214)
	ErrInvalidPTX            = sentinel(218)
	ErrJITCompilerNotFound   = sentinel(221)
	ErrUnsupportedPTXVersion = sentinel(222)
	ErrInvalidSource         = sentinel(300)
	ErrInvalidHandle         = sentinel(400)
	ErrNotFound              = sentinel(500)
	ErrNotReady              = sentinel(600)
	ErrIllegalAddress        = sentinel(700)
	ErrLaunchOutOfResources  = sentinel(701)
	ErrLaunchTimeout         = sentinel(702)
	ErrAssert                = sentinel(710)
	ErrHardwareStackError    = sentinel(714)
	ErrIllegalInstruction    = sentinel(715)
	ErrMisalignedAddress     = sentinel(716)
	ErrInvalidAddressSpace   = sentinel(717)
	ErrInvalidPC             = sentinel(718)
	ErrLaunchFailed          = sentinel(719)
	ErrNotPermitted          = sentinel(800)
	ErrNotSupported          = sentinel(801)
	ErrSystemDriverMismatch  = sentinel(803)
	ErrCompatNotSupported    = sentinel(804)
	ErrCaptureUnsupported    = sentinel(900)
	ErrCaptureInvalidated    = sentinel(901)
	ErrCaptureWrongThread    = sentinel(908)
	ErrGraphExecUpdate       = sentinel(910)
	ErrUnknown               = sentinel(999)
)

// Errors that are not driver codes.
var (
	// ErrNoDriver means libcuda could not be loaded; the error that wraps it
	// (a *LoadError) lists every path tried and why each failed.
	ErrNoDriver = errors.New("cuda: no CUDA driver found")

	// ErrContextLost matches every sticky error (illegal address, misaligned
	// address, illegal instruction, device assert, launch failure, ...):
	// the CUDA context is unusable and the process must restart.
	ErrContextLost = errors.New("cuda: the CUDA context is lost after a sticky error; restart the process")

	// ErrFreed is returned by any use of device or host memory after Free,
	// and by a second Free.
	ErrFreed = errors.New("cuda: memory already freed")

	// ErrInvalidConfig matches launch configurations rejected before the
	// driver sees them (a *ConfigError says which limit was broken).
	ErrInvalidConfig = errors.New("cuda: invalid launch configuration")

	// ErrInvalidArg matches kernel arguments that cannot be passed (an
	// *ArgError names the argument and what to pass instead).
	ErrInvalidArg = errors.New("cuda: invalid kernel argument")

	// ErrClosed is returned by any use of a stream, event, module, graph or
	// function after Close or Unload.
	ErrClosed = errors.New("cuda: use of a closed object")
)

// LoadAttempt is one place the loader looked for libcuda.
type LoadAttempt struct {
	Path string // what was passed to dlopen
	Err  error  // why it failed
}

// LoadError reports that no usable libcuda was found. errors.Is(err,
// ErrNoDriver) is true.
type LoadError struct {
	Attempts []LoadAttempt
	Env      string // the GOCU_CUDA_LIB value in effect, if any
}

// Error is one line: Summary and what to do. The places searched and why
// each failed are in Places, and in Error too when GOCU_LOAD_VERBOSE=1.
func (e *LoadError) Error() string {
	s := e.Summary()
	if e.Env != "" {
		s += ": unset GOCU_CUDA_LIB to search the usual places, or point it at the libcuda.so.1 of the NVIDIA driver"
	} else {
		s += ": install the NVIDIA driver, or set GOCU_CUDA_LIB to the path of its libcuda.so.1"
	}
	if os.Getenv("GOCU_LOAD_VERBOSE") == "1" {
		return s + "; tried:\n" + e.Places()
	}
	return s + " (GOCU_LOAD_VERBOSE=1 lists the places)"
}

// Places lists every path tried and why it failed, one a line.
func (e *LoadError) Places() string {
	var b strings.Builder
	for i, a := range e.Attempts {
		if i > 0 {
			b.WriteByte('\n')
		}
		fmt.Fprintf(&b, "\t%s: %v", a.Path, a.Err)
	}
	return b.String()
}

// Summary says in one line what Error lists: "no NVIDIA driver
// (libcuda.so.1 not found in 13 places searched)", with the GOCU_CUDA_LIB
// value in effect, if any.
func (e *LoadError) Summary() string {
	s := fmt.Sprintf("no NVIDIA driver (libcuda.so.1 not found in %d places searched", len(e.Attempts))
	if e.Env != "" {
		s += ", GOCU_CUDA_LIB=" + e.Env
	}
	return s + ")"
}

// Is reports ErrNoDriver.
func (e *LoadError) Is(target error) bool { return target == ErrNoDriver }

// ConfigError is a launch configuration that breaks a device or kernel
// limit; it is caught before the driver sees it.
type ConfigError struct {
	Kernel    string
	Grid      Dim3
	Block     Dim3
	SharedMem int
	Reason    string
}

func (e *ConfigError) Error() string {
	return fmt.Sprintf("cuda: cannot launch %s<<<%v, %v, %d>>>: %s", e.Kernel, e.Grid, e.Block, e.SharedMem, e.Reason)
}

// Is reports ErrInvalidConfig.
func (e *ConfigError) Is(target error) bool { return target == ErrInvalidConfig }

// ArgError is a kernel argument that cannot be passed.
type ArgError struct {
	Kernel string
	Index  int    // position of the argument, from 0; -1 when not known
	Type   string // its Go type
	Reason string
	Err    error // the underlying error, if any (such as ErrFreed)
}

func (e *ArgError) Error() string {
	k := e.Kernel
	if k == "" {
		k = "kernel"
	}
	if e.Index < 0 {
		return fmt.Sprintf("cuda: %s argument of type %s: %s", k, e.Type, e.Reason)
	}
	return fmt.Sprintf("cuda: %s argument %d (%s): %s", k, e.Index, e.Type, e.Reason)
}

// Is reports ErrInvalidArg.
func (e *ArgError) Is(target error) bool { return target == ErrInvalidArg }

func (e *ArgError) Unwrap() error { return e.Err }

// LaunchError attributes a failure to one kernel launch: the kernel, its
// configuration and the Go call site. With GOCU_LAUNCH_BLOCKING=1 (or
// SetLaunchBlocking) every launch is synchronised, so an asynchronous fault
// such as an illegal address is reported by the launch that caused it;
// without it, a sticky error from earlier work may surface at a later
// launch.
type LaunchError struct {
	Kernel    string
	Grid      Dim3
	Block     Dim3
	SharedMem int
	Caller    string // file:line of the Go code that launched the kernel
	Err       error  // the underlying *Error
}

func (e *LaunchError) Error() string {
	at := ""
	if e.Caller != "" {
		at = " launched at " + e.Caller
	}
	return fmt.Sprintf("cuda: kernel %s<<<%v, %v, %d>>>%s failed: %v", e.Kernel, e.Grid, e.Block, e.SharedMem, at,
		strings.TrimPrefix(e.Err.Error(), "cuda: "))
}

func (e *LaunchError) Unwrap() error { return e.Err }

// ModuleError is a module that failed to load, with the JIT compiler's log
// (for PTX, the ptxas errors with line numbers).
type ModuleError struct {
	Err error  // the *Error from cuModuleLoadDataEx
	Log string // the JIT error log, possibly empty
}

func (e *ModuleError) Error() string {
	if e.Log == "" {
		return e.Err.Error()
	}
	return e.Err.Error() + "\n" + e.Log
}

func (e *ModuleError) Unwrap() error { return e.Err }
