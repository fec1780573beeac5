package nccl

import (
	"errors"
	"fmt"
	"strings"
	"unsafe"

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
// Msg is ncclGetErrorString's text for the code. Detail is the warning NCCL
// logged (ncclGetLastError, NCCL 2.13 and newer) during the failed call:
// NCCL keeps one such string for the whole process and never clears it, so
// the package reads it before and after each call and attaches it only
// when the call changed it. A warning left by an earlier call (NCCL also
// warns about calls that it refuses without failing anything else) is
// never attributed to this one; a call that repeats the very text already
// there gets no Detail. For an error found by AsyncError, which NCCL
// records on another thread, Detail is the last warning when no earlier
// error carried it. Run with NCCL_DEBUG=WARN (or INFO) to see everything
// NCCL says.
type Error struct {
	Func   string // the NCCL function, e.g. "ncclAllReduce"
	Code   Result // the ncclResult_t it returned
	Name   string // the code's C name, e.g. "ncclInvalidUsage"
	Msg    string // the code's description
	Detail string // the warning NCCL logged during the call, if any
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

// errMark is a fingerprint of NCCL's last-error text: taken before a
// call and compared after it, it tells whether the call logged a warning.
type errMark struct {
	sum uint64
	n   int
}

// mark reads NCCL's last-error text and fingerprints it (FNV-1a), without
// copying it.
func (l *lib) mark() errMark {
	if l == nil || l.getLastError == 0 {
		return errMark{}
	}
	p := dynlib.Call(l.getLastError, 0)
	if p == 0 {
		return errMark{}
	}
	const maxText = 4096
	m := errMark{sum: 14695981039346656037}
	b := dynlib.PtrAt(p)
	for ; m.n < maxText; m.n++ {
		c := *(*byte)(unsafe.Add(unsafe.Pointer(b), m.n))
		if c == 0 {
			break
		}
		m.sum = (m.sum ^ uint64(c)) * 1099511628211
	}
	return m
}

// lastText returns NCCL's last-error text.
func (l *lib) lastText() string {
	if l == nil || l.getLastError == 0 {
		return ""
	}
	p := dynlib.Call(l.getLastError, 0)
	if p == 0 {
		return ""
	}
	return strings.TrimSpace(dynlib.GoString(dynlib.PtrAt(p)))
}

// error turns a result into an error (nil for Success), with NCCL's own
// description and the warning NCCL logged since before was taken.
func (l *lib) error(fn string, r Result, comm string, before errMark) error {
	if r == Success {
		return nil
	}
	e := l.newError(fn, r, comm)
	if l != nil && l.mark() != before {
		e.Detail = l.lastText()
		l.noteDetail(e.Detail)
	}
	return e
}

// asyncError is the error of a result NCCL recorded on its own threads
// (ncclCommGetAsyncError): the warning it logged then is the last one,
// unless an earlier error carried it already.
func (l *lib) asyncError(fn string, r Result, comm string) error {
	if r == Success {
		return nil
	}
	e := l.newError(fn, r, comm)
	if l != nil {
		s := l.lastText()
		l.detailMu.Lock()
		if s != l.lastDetail {
			e.Detail = s
			l.lastDetail = s
		}
		l.detailMu.Unlock()
	}
	return e
}

func (l *lib) newError(fn string, r Result, comm string) *Error {
	e := &Error{Func: fn, Code: r, Name: r.String(), Msg: r.description(), Comm: comm}
	if l != nil && l.getErrorString != 0 {
		if p := dynlib.Call(l.getErrorString, uintptr(r)); p != 0 {
			if s := dynlib.GoString(dynlib.PtrAt(p)); s != "" && !strings.HasPrefix(s, "unknown") {
				e.Msg = s
			}
		}
	}
	return e
}

// noteDetail records a text attached to an error, so that AsyncError does
// not attach it again.
func (l *lib) noteDetail(s string) {
	l.detailMu.Lock()
	l.lastDetail = s
	l.detailMu.Unlock()
}
