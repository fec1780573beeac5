package nccl

import (
	"errors"
	"fmt"
	"strings"

	"github.com/gocu-dev/gocu/internal/dynlib"
)

// Result is an ncclResult_t.
type Result int32

// The ncclResult_t values of nccl.h.
const (
	Success            Result = 0
	UnhandledCUDAError Result = 1
	SystemError        Result = 2
	InternalError      Result = 3
	InvalidArgument    Result = 4
	InvalidUsage       Result = 5
	RemoteError        Result = 6 // NCCL 2.13
	InProgress         Result = 7 // NCCL 2.14
	Timeout            Result = 8 // NCCL 2.30
)

var resultText = map[Result][2]string{
	Success:            {"ncclSuccess", "no error"},
	UnhandledCUDAError: {"ncclUnhandledCudaError", "a call to CUDA failed"},
	SystemError:        {"ncclSystemError", "a call to the system failed"},
	InternalError:      {"ncclInternalError", "an internal check failed: a bug in NCCL or memory corruption"},
	InvalidArgument:    {"ncclInvalidArgument", "an argument has an invalid value"},
	InvalidUsage:       {"ncclInvalidUsage", "the call is not valid in this state or configuration"},
	RemoteError:        {"ncclRemoteError", "a remote process exited or there was a network error"},
	InProgress:         {"ncclInProgress", "the operation is still in progress"},
	Timeout:            {"ncclTimeout", "the operation timed out"},
}

// String returns the C name, such as "ncclInvalidUsage".
func (r Result) String() string {
	if t, ok := resultText[r]; ok {
		return t[0]
	}
	return fmt.Sprintf("ncclResult(%d)", int32(r))
}

// description is the built-in meaning of r, for when the library cannot
// say (it is not loaded, or does not know the code).
func (r Result) description() string {
	if t, ok := resultText[r]; ok {
		return t[1]
	}
	return "unknown NCCL result code"
}

// Error is a failed NCCL call.
//
// Msg is ncclGetErrorString's text for the code, Detail the last warning
// NCCL logged (ncclGetLastError, NCCL 2.13 and newer) when it is new since
// the previous error this package reported: NCCL keeps one such string for
// the whole process and never clears it, so a warning seen before is left
// out rather than attributed to the wrong call. Run with NCCL_DEBUG=WARN
// (or INFO) to see everything NCCL says.
type Error struct {
	Func   string // the NCCL function, e.g. "ncclAllReduce"
	Code   Result // the ncclResult_t it returned
	Name   string // the code's C name, e.g. "ncclInvalidUsage"
	Msg    string // the code's description
	Detail string // NCCL's last warning, when new
	Comm   string // the communicator, e.g. "rank 1 of 4 on cuda:1"; empty when none
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString("nccl: ")
	if e.Func != "" {
		b.WriteString(e.Func)
		if e.Comm != "" {
			b.WriteString(" (")
			b.WriteString(e.Comm)
			b.WriteString(")")
		}
		b.WriteString(": ")
	}
	b.WriteString(e.Name)
	if e.Msg != "" {
		b.WriteString(": ")
		b.WriteString(e.Msg)
	}
	if e.Detail != "" {
		b.WriteString(": ")
		b.WriteString(e.Detail)
	}
	return b.String()
}

// Is makes errors.Is match the sentinel of the error's code
// (ErrInvalidUsage, ErrRemote, ...).
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Func == "" && t.Code == e.Code
}

func sentinel(r Result) *Error {
	return &Error{Code: r, Name: r.String(), Msg: r.description()}
}

// Sentinels for NCCL's result codes; match them with errors.Is. Argument
// errors found before NCCL is called match ErrInvalidArgument too.
var (
	ErrUnhandledCUDA   = sentinel(UnhandledCUDAError)
	ErrSystem          = sentinel(SystemError)
	ErrInternal        = sentinel(InternalError)
	ErrInvalidArgument = sentinel(InvalidArgument)
	ErrInvalidUsage    = sentinel(InvalidUsage)
	ErrRemote          = sentinel(RemoteError)
	ErrInProgress      = sentinel(InProgress)
	ErrTimeout         = sentinel(Timeout)
)

// Errors that do not come from an NCCL result code.
var (
	// ErrNoLibrary: no usable libnccl could be loaded. The error lists every
	// place tried, or says why the file found is not usable.
	ErrNoLibrary = errors.New("nccl: no usable NCCL library")
	// ErrDestroyed: the communicator was destroyed or aborted, or never
	// came to be because the Group that created it failed.
	ErrDestroyed = errors.New("nccl: communicator destroyed, aborted or never created")
	// ErrNotSupported: the loaded NCCL is too old for the feature.
	ErrNotSupported = errors.New("nccl: not supported by the loaded NCCL version")
)

// LoadError says why a library that was found is not a usable NCCL (a
// missing entry point, a version that is too old). errors.Is(err,
// ErrNoLibrary) is true.
type LoadError struct {
	Path   string
	Reason string
}

func (e *LoadError) Error() string {
	return fmt.Sprintf("nccl: %s is not a usable NCCL: %s; set GOCU_NCCL_LIB to the libnccl.so.2 to use", e.Path, e.Reason)
}

// Is reports ErrNoLibrary.
func (e *LoadError) Is(target error) bool { return target == ErrNoLibrary }

// ArgError is an argument found invalid before NCCL was called: a nil or
// freed buffer, one too small for the count, one on another device, a
// count that overflows, a rank out of range. errors.Is(err,
// ErrInvalidArgument) is true; Err, when set, is the underlying cause
// (cuda.ErrFreed, cuda.ErrClosed, ErrDestroyed).
type ArgError struct {
	Func string // the NCCL function that was not called
	Msg  string
	Err  error
}

func (e *ArgError) Error() string {
	s := "nccl: " + e.Func + ": " + e.Msg
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

// Is reports ErrInvalidArgument.
func (e *ArgError) Is(target error) bool { return target == ErrInvalidArgument }

// Unwrap returns the cause.
func (e *ArgError) Unwrap() error { return e.Err }

func argErr(fn, format string, args ...any) error {
	return &ArgError{Func: fn, Msg: fmt.Sprintf(format, args...)}
}

// error turns a result into an error (nil for Success), with NCCL's own
// description and its last warning.
func (l *lib) error(fn string, r Result, comm string) error {
	if r == Success {
		return nil
	}
	e := &Error{Func: fn, Code: r, Name: r.String(), Msg: r.description(), Comm: comm}
	if l == nil {
		return e
	}
	if l.getErrorString != 0 {
		if p := dynlib.Call(l.getErrorString, uintptr(r)); p != 0 {
			if s := dynlib.GoString(dynlib.PtrAt(p)); s != "" && !strings.HasPrefix(s, "unknown") {
				e.Msg = s
			}
		}
	}
	e.Detail = l.newDetail()
	return e
}

// newDetail returns NCCL's last warning if no earlier error carried it.
func (l *lib) newDetail() string {
	if l.getLastError == 0 {
		return ""
	}
	p := dynlib.Call(l.getLastError, 0)
	if p == 0 {
		return ""
	}
	s := strings.TrimSpace(dynlib.GoString(dynlib.PtrAt(p)))
	l.detailMu.Lock()
	defer l.detailMu.Unlock()
	if s == l.lastDetail {
		return ""
	}
	l.lastDetail = s
	return s
}
