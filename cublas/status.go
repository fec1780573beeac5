package cublas

import (
	"errors"
	"fmt"
)

// Sentinel errors.
var (
	// ErrNotFound: no cuBLAS library could be loaded (the error lists every
	// place tried).
	ErrNotFound = errors.New("cublas: library not found")
	// ErrInvalidArgument: a dimension, leading dimension, increment, stride
	// or pointer is wrong; found before cuBLAS is called.
	ErrInvalidArgument = errors.New("cublas: invalid argument")
	// ErrDestroyed: the Handle was destroyed, or never created.
	ErrDestroyed = errors.New("cublas: handle destroyed or never created")
)

// Status is a cublasStatus_t. A Status is itself an error, so
// errors.Is(err, cublas.StatusNotSupported) tests the status of an *Error.
type Status int32

// The cublasStatus_t values of cublas_api.h.
const (
	StatusSuccess         Status = 0
	StatusNotInitialized  Status = 1
	StatusAllocFailed     Status = 3
	StatusInvalidValue    Status = 7
	StatusArchMismatch    Status = 8
	StatusMappingError    Status = 11
	StatusExecutionFailed Status = 13
	StatusInternalError   Status = 14
	StatusNotSupported    Status = 15
	StatusLicenseError    Status = 16
)

var statusText = map[Status][2]string{
	StatusSuccess:         {"CUBLAS_STATUS_SUCCESS", "success"},
	StatusNotInitialized:  {"CUBLAS_STATUS_NOT_INITIALIZED", "cuBLAS is not initialized: is a CUDA context current on this thread, and the handle created?"},
	StatusAllocFailed:     {"CUBLAS_STATUS_ALLOC_FAILED", "cuBLAS could not allocate resources"},
	StatusInvalidValue:    {"CUBLAS_STATUS_INVALID_VALUE", "an unsupported value or parameter was passed to the function"},
	StatusArchMismatch:    {"CUBLAS_STATUS_ARCH_MISMATCH", "the function needs a feature this GPU's architecture lacks"},
	StatusMappingError:    {"CUBLAS_STATUS_MAPPING_ERROR", "an access to GPU memory space failed"},
	StatusExecutionFailed: {"CUBLAS_STATUS_EXECUTION_FAILED", "the GPU program failed to execute"},
	StatusInternalError:   {"CUBLAS_STATUS_INTERNAL_ERROR", "an internal cuBLAS operation failed"},
	StatusNotSupported:    {"CUBLAS_STATUS_NOT_SUPPORTED", "the requested functionality (type or mode combination) is not supported"},
	StatusLicenseError:    {"CUBLAS_STATUS_LICENSE_ERROR", "the requested functionality requires a license"},
}

// String returns the C name, e.g. "CUBLAS_STATUS_INVALID_VALUE".
func (s Status) String() string {
	if t, ok := statusText[s]; ok {
		return t[0]
	}
	return fmt.Sprintf("CUBLAS_STATUS_UNKNOWN(%d)", int32(s))
}

// Description says what the status means.
func (s Status) Description() string {
	if t, ok := statusText[s]; ok {
		return t[1]
	}
	return "unknown cuBLAS status"
}

// Error makes a Status usable as an errors.Is target.
func (s Status) Error() string { return "cublas: " + s.String() }

// Error is a failed cuBLAS call.
type Error struct {
	Func   string // the cuBLAS function, e.g. "cublasSgemm_v2"
	Status Status
}

func (e *Error) Error() string {
	return fmt.Sprintf("cublas: %s: %s (%s)", e.Func, e.Status.String(), e.Status.Description())
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
