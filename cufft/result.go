package cufft

import (
	"errors"
	"fmt"
)

// Sentinel errors.
var (
	// ErrNotFound: no cuFFT library could be loaded (the error lists
	// every place tried).
	ErrNotFound = errors.New("cufft: library not found")
	// ErrInvalidArgument: a rank, size, stride, pointer or direction is
	// wrong; found before cuFFT is called.
	ErrInvalidArgument = errors.New("cufft: invalid argument")
	// ErrDestroyed: the Plan was destroyed, or never made.
	ErrDestroyed = errors.New("cufft: plan destroyed or never made")
)

// Result is a cufftResult. A Result is itself an error, so
// errors.Is(err, cufft.ResultInvalidSize) tests the result of an *Error.
type Result int32

// The cufftResult values of cufft.h.
const (
	ResultSuccess                 Result = 0
	ResultInvalidPlan             Result = 1
	ResultAllocFailed             Result = 2
	ResultInvalidType             Result = 3
	ResultInvalidValue            Result = 4
	ResultInternalError           Result = 5
	ResultExecFailed              Result = 6
	ResultSetupFailed             Result = 7
	ResultInvalidSize             Result = 8
	ResultUnalignedData           Result = 9
	ResultIncompleteParameterList Result = 10
	ResultInvalidDevice           Result = 11
	ResultParseError              Result = 12
	ResultNoWorkspace             Result = 13
	ResultNotImplemented          Result = 14
	ResultLicenseError            Result = 15
	ResultNotSupported            Result = 16
)

var resultText = map[Result][2]string{
	ResultSuccess:                 {"CUFFT_SUCCESS", "success"},
	ResultInvalidPlan:             {"CUFFT_INVALID_PLAN", "the plan handle is invalid"},
	ResultAllocFailed:             {"CUFFT_ALLOC_FAILED", "cuFFT could not allocate GPU or host memory"},
	ResultInvalidType:             {"CUFFT_INVALID_TYPE", "the transform type is not supported"},
	ResultInvalidValue:            {"CUFFT_INVALID_VALUE", "a bad pointer or parameter was given"},
	ResultInternalError:           {"CUFFT_INTERNAL_ERROR", "an internal driver or cuFFT error"},
	ResultExecFailed:              {"CUFFT_EXEC_FAILED", "the transform failed to execute on the GPU"},
	ResultSetupFailed:             {"CUFFT_SETUP_FAILED", "cuFFT failed to initialise"},
	ResultInvalidSize:             {"CUFFT_INVALID_SIZE", "a transform size is not supported"},
	ResultUnalignedData:           {"CUFFT_UNALIGNED_DATA", "the data are not aligned"},
	ResultIncompleteParameterList: {"CUFFT_INCOMPLETE_PARAMETER_LIST", "parameters are missing"},
	ResultInvalidDevice:           {"CUFFT_INVALID_DEVICE", "the plan is used on a device other than the one it was made on"},
	ResultParseError:              {"CUFFT_PARSE_ERROR", "the plan could not be parsed"},
	ResultNoWorkspace:             {"CUFFT_NO_WORKSPACE", "no work area was given before execution"},
	ResultNotImplemented:          {"CUFFT_NOT_IMPLEMENTED", "the functionality is not implemented"},
	ResultLicenseError:            {"CUFFT_LICENSE_ERROR", "the functionality requires a license"},
	ResultNotSupported:            {"CUFFT_NOT_SUPPORTED", "the operation is not supported for these parameters"},
}

// String returns the C name, e.g. "CUFFT_INVALID_SIZE".
func (r Result) String() string {
	if t, ok := resultText[r]; ok {
		return t[0]
	}
	return fmt.Sprintf("CUFFT_RESULT_UNKNOWN(%d)", int32(r))
}

// Description says what the result means.
func (r Result) Description() string {
	if t, ok := resultText[r]; ok {
		return t[1]
	}
	return "unknown cuFFT result"
}

// Error makes a Result usable as an errors.Is target.
func (r Result) Error() string { return "cufft: " + r.String() }

// Error is a failed cuFFT call.
type Error struct {
	Func   string // the cuFFT function, e.g. "cufftExecC2C"
	Result Result
}

func (e *Error) Error() string {
	return fmt.Sprintf("cufft: %s: %s (%s)", e.Func, e.Result.String(), e.Result.Description())
}

// Is reports whether target is this error's Result.
func (e *Error) Is(target error) bool {
	r, ok := target.(Result)
	return ok && r == e.Result
}

func check(fn string, r Result) error {
	if r == ResultSuccess {
		return nil
	}
	return &Error{Func: fn, Result: r}
}

func invalid(fn, format string, args ...any) error {
	return fmt.Errorf("%w: %s: %s", ErrInvalidArgument, fn, fmt.Sprintf(format, args...))
}
