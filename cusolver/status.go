package cusolver

import (
	"errors"
	"fmt"
)

// Sentinel errors.
var (
	// ErrNotFound: no cuSOLVER library could be loaded (the error lists
	// every place tried).
	ErrNotFound = errors.New("cusolver: library not found")
	// ErrInvalidArgument: a dimension, leading dimension, batch count or
	// pointer is wrong; found before cuSOLVER is called.
	ErrInvalidArgument = errors.New("cusolver: invalid argument")
	// ErrDestroyed: the Handle was destroyed, or never created.
	ErrDestroyed = errors.New("cusolver: handle destroyed or never created")
)

// Status is a cusolverStatus_t. A Status is itself an error, so
// errors.Is(err, cusolver.StatusNotSupported) tests the status of an *Error.
type Status int32

// The cusolverStatus_t values of cusolver_common.h that dense routines
// return.
const (
	StatusSuccess                Status = 0
	StatusNotInitialized         Status = 1
	StatusAllocFailed            Status = 2
	StatusInvalidValue           Status = 3
	StatusArchMismatch           Status = 4
	StatusMappingError           Status = 5
	StatusExecutionFailed        Status = 6
	StatusInternalError          Status = 7
	StatusMatrixTypeNotSupported Status = 8
	StatusNotSupported           Status = 9
	StatusZeroPivot              Status = 10
	StatusInvalidLicense         Status = 11
	StatusInvalidWorkspace       Status = 31
)

var statusText = map[Status][2]string{
	StatusSuccess:                {"CUSOLVER_STATUS_SUCCESS", "success"},
	StatusNotInitialized:         {"CUSOLVER_STATUS_NOT_INITIALIZED", "cuSOLVER is not initialized: is a CUDA context current on this thread, and the handle created?"},
	StatusAllocFailed:            {"CUSOLVER_STATUS_ALLOC_FAILED", "cuSOLVER could not allocate resources"},
	StatusInvalidValue:           {"CUSOLVER_STATUS_INVALID_VALUE", "an unsupported value or parameter was passed to the function"},
	StatusArchMismatch:           {"CUSOLVER_STATUS_ARCH_MISMATCH", "the function needs a feature this GPU's architecture lacks"},
	StatusMappingError:           {"CUSOLVER_STATUS_MAPPING_ERROR", "an access to GPU memory space failed"},
	StatusExecutionFailed:        {"CUSOLVER_STATUS_EXECUTION_FAILED", "the GPU program failed to execute"},
	StatusInternalError:          {"CUSOLVER_STATUS_INTERNAL_ERROR", "an internal cuSOLVER operation failed"},
	StatusMatrixTypeNotSupported: {"CUSOLVER_STATUS_MATRIX_TYPE_NOT_SUPPORTED", "the matrix type is not supported"},
	StatusNotSupported:           {"CUSOLVER_STATUS_NOT_SUPPORTED", "the requested functionality is not supported"},
	StatusZeroPivot:              {"CUSOLVER_STATUS_ZERO_PIVOT", "a zero pivot was met"},
	StatusInvalidLicense:         {"CUSOLVER_STATUS_INVALID_LICENSE", "the requested functionality requires a license"},
	StatusInvalidWorkspace:       {"CUSOLVER_STATUS_INVALID_WORKSPACE", "the workspace is too small or misaligned"},
}

// String returns the C name, e.g. "CUSOLVER_STATUS_INVALID_VALUE".
func (s Status) String() string {
	if t, ok := statusText[s]; ok {
		return t[0]
	}
	return fmt.Sprintf("CUSOLVER_STATUS_UNKNOWN(%d)", int32(s))
}

// Description says what the status means.
func (s Status) Description() string {
	if t, ok := statusText[s]; ok {
		return t[1]
	}
	return "unknown cuSOLVER status"
}

// Error makes a Status usable as an errors.Is target.
func (s Status) Error() string { return "cusolver: " + s.String() }

// Error is a failed cuSOLVER call.
type Error struct {
	Func   string // the cuSOLVER function, e.g. "cusolverDnSgetrf"
	Status Status
}

func (e *Error) Error() string {
	return fmt.Sprintf("cusolver: %s: %s (%s)", e.Func, e.Status.String(), e.Status.Description())
}

// Is reports whether target is this error's Status.
func (e *Error) Is(target error) bool {
	s, ok := target.(Status)
	return ok && s == e.Status
}

func check(fn string, s Status) error {
	if s == StatusSuccess {
		return nil
	}
	return &Error{Func: fn, Status: s}
}

func invalid(fn, format string, args ...any) error {
	return fmt.Errorf("%w: %s: %s", ErrInvalidArgument, fn, fmt.Sprintf(format, args...))
}
