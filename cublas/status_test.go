package cublas

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

func TestEveryStatusHasItsName(t *testing.T) {
	want := map[Status]string{
		0: "CUBLAS_STATUS_SUCCESS", 1: "CUBLAS_STATUS_NOT_INITIALIZED", 3: "CUBLAS_STATUS_ALLOC_FAILED",
		7: "CUBLAS_STATUS_INVALID_VALUE", 8: "CUBLAS_STATUS_ARCH_MISMATCH", 11: "CUBLAS_STATUS_MAPPING_ERROR",
		13: "CUBLAS_STATUS_EXECUTION_FAILED", 14: "CUBLAS_STATUS_INTERNAL_ERROR", 15: "CUBLAS_STATUS_NOT_SUPPORTED",
		16: "CUBLAS_STATUS_LICENSE_ERROR",
	}
	if len(statusText) != len(want) {
		t.Errorf("table has %d statuses, cublas_api.h has %d", len(statusText), len(want))
	}
	for s, name := range want {
		if s.String() != name {
			t.Errorf("Status(%d) = %q, want %q", int32(s), s.String(), name)
		}
		if d := s.Description(); d == "" || d == "unknown cuBLAS status" {
			t.Errorf("%s has no description", name)
		}
	}
	for _, s := range []Status{2, 4, 12, 17, -1} {
		if !strings.HasPrefix(s.String(), "CUBLAS_STATUS_UNKNOWN(") || s.Description() != "unknown cuBLAS status" {
			t.Errorf("Status(%d): %q %q", int32(s), s.String(), s.Description())
		}
	}
}

func TestErrorMatchesItsStatus(t *testing.T) {
	var err error = &Error{Func: "cublasGemmEx", Status: StatusNotSupported}
	if !errors.Is(err, StatusNotSupported) || errors.Is(err, StatusInvalidValue) {
		t.Error("errors.Is does not follow the status")
	}
	var e *Error
	if !errors.As(fmt.Errorf("matmul: %w", err), &e) || e.Status != StatusNotSupported {
		t.Error("errors.As through wrapping")
	}
	want := "cublas: cublasGemmEx: CUBLAS_STATUS_NOT_SUPPORTED (the requested functionality (type or mode combination) is not supported)"
	if err.Error() != want {
		t.Errorf("Error() = %q\nwant %q", err.Error(), want)
	}
	if check("f", StatusSuccess) != nil {
		t.Error("success is an error")
	}
	if !errors.Is(check("f", StatusAllocFailed), StatusAllocFailed) {
		t.Error("check")
	}
}
