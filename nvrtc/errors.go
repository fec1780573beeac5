package nvrtc

import (
	"errors"
	"fmt"
	"strings"
)

// ErrNotFound is returned (wrapped in an error that lists every place tried)
// when no NVRTC library can be loaded.
var ErrNotFound = errors.New("nvrtc: library not found")

// Code is an nvrtcResult. A Code is itself an error, so that
// errors.Is(err, nvrtc.InvalidOption) tests the code of an *Error.
type Code int32

// The nvrtcResult values of nvrtc.h (CUDA 12 and 13).
const (
	Success                           Code = 0
	OutOfMemory                       Code = 1
	ProgramCreationFailure            Code = 2
	InvalidInput                      Code = 3
	InvalidProgram                    Code = 4
	InvalidOption                     Code = 5
	Compilation                       Code = 6
	BuiltinOperationFailure           Code = 7
	NoNameExpressionsAfterCompilation Code = 8
	NoLoweredNamesBeforeCompilation   Code = 9
	NameExpressionNotValid            Code = 10
	InternalError                     Code = 11
	TimeFileWriteFailed               Code = 12
	NoPCHCreateAttempted              Code = 13
	PCHCreateHeapExhausted            Code = 14
	PCHCreate                         Code = 15
	Cancelled                         Code = 16
	TimeTraceFileWriteFailed          Code = 17
)

// codeNames is the static table used when the library is absent (and for
// codes the library does not know).
var codeNames = [...]string{
	Success:                           "NVRTC_SUCCESS",
	OutOfMemory:                       "NVRTC_ERROR_OUT_OF_MEMORY",
	ProgramCreationFailure:            "NVRTC_ERROR_PROGRAM_CREATION_FAILURE",
	InvalidInput:                      "NVRTC_ERROR_INVALID_INPUT",
	InvalidProgram:                    "NVRTC_ERROR_INVALID_PROGRAM",
	InvalidOption:                     "NVRTC_ERROR_INVALID_OPTION",
	Compilation:                       "NVRTC_ERROR_COMPILATION",
	BuiltinOperationFailure:           "NVRTC_ERROR_BUILTIN_OPERATION_FAILURE",
	NoNameExpressionsAfterCompilation: "NVRTC_ERROR_NO_NAME_EXPRESSIONS_AFTER_COMPILATION",
	NoLoweredNamesBeforeCompilation:   "NVRTC_ERROR_NO_LOWERED_NAMES_BEFORE_COMPILATION",
	NameExpressionNotValid:            "NVRTC_ERROR_NAME_EXPRESSION_NOT_VALID",
	InternalError:                     "NVRTC_ERROR_INTERNAL_ERROR",
	TimeFileWriteFailed:               "NVRTC_ERROR_TIME_FILE_WRITE_FAILED",
	NoPCHCreateAttempted:              "NVRTC_ERROR_NO_PCH_CREATE_ATTEMPTED",
	PCHCreateHeapExhausted:            "NVRTC_ERROR_PCH_CREATE_HEAP_EXHAUSTED",
	PCHCreate:                         "NVRTC_ERROR_PCH_CREATE",
	Cancelled:                         "NVRTC_ERROR_CANCELLED",
	TimeTraceFileWriteFailed:          "NVRTC_ERROR_TIME_TRACE_FILE_WRITE_FAILED",
}

// String returns the C name, e.g. "NVRTC_ERROR_COMPILATION".
func (c Code) String() string {
	if c >= 0 && int(c) < len(codeNames) {
		return codeNames[c]
	}
	return fmt.Sprintf("NVRTC_ERROR_UNKNOWN(%d)", int32(c))
}

// Error makes a Code usable as an errors.Is target.
func (c Code) Error() string { return "nvrtc: " + c.String() }

// Error is a failed NVRTC call.
type Error struct {
	Func    string // the NVRTC function, e.g. "nvrtcCompileProgram"
	Code    Code
	Message string // nvrtcGetErrorString's text, when the library gave one
	Log     string // the program log, for failures that leave one (invalid options)
}

func (e *Error) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "nvrtc: %s: %s", e.Func, e.Code.String())
	if e.Message != "" && e.Message != e.Code.String() {
		fmt.Fprintf(&b, " (%s)", e.Message)
	}
	if log := strings.TrimSpace(e.Log); log != "" {
		b.WriteString(": ")
		b.WriteString(log)
	}
	return b.String()
}

// Is reports whether target is this error's Code.
func (e *Error) Is(target error) bool {
	c, ok := target.(Code)
	return ok && c == e.Code
}
