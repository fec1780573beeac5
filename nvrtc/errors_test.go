package nvrtc

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

func TestEveryCodeHasItsName(t *testing.T) {
	want := map[Code]string{
		0: "NVRTC_SUCCESS", 1: "NVRTC_ERROR_OUT_OF_MEMORY", 2: "NVRTC_ERROR_PROGRAM_CREATION_FAILURE",
		3: "NVRTC_ERROR_INVALID_INPUT", 4: "NVRTC_ERROR_INVALID_PROGRAM", 5: "NVRTC_ERROR_INVALID_OPTION",
		6: "NVRTC_ERROR_COMPILATION", 7: "NVRTC_ERROR_BUILTIN_OPERATION_FAILURE",
		8: "NVRTC_ERROR_NO_NAME_EXPRESSIONS_AFTER_COMPILATION", 9: "NVRTC_ERROR_NO_LOWERED_NAMES_BEFORE_COMPILATION",
		10: "NVRTC_ERROR_NAME_EXPRESSION_NOT_VALID", 11: "NVRTC_ERROR_INTERNAL_ERROR",
		12: "NVRTC_ERROR_TIME_FILE_WRITE_FAILED", 13: "NVRTC_ERROR_NO_PCH_CREATE_ATTEMPTED",
		14: "NVRTC_ERROR_PCH_CREATE_HEAP_EXHAUSTED", 15: "NVRTC_ERROR_PCH_CREATE", 16: "NVRTC_ERROR_CANCELLED",
		17: "NVRTC_ERROR_TIME_TRACE_FILE_WRITE_FAILED",
	}
	if len(codeNames) != len(want) {
		t.Errorf("table has %d codes, nvrtc.h has %d", len(codeNames), len(want))
	}
	for c, name := range want {
		if c.String() != name {
			t.Errorf("Code(%d).String() = %q, want %q", int32(c), c.String(), name)
		}
	}
	if got := Code(99).String(); got != "NVRTC_ERROR_UNKNOWN(99)" {
		t.Errorf("unknown code: %q", got)
	}
	if got := Code(-1).String(); got != "NVRTC_ERROR_UNKNOWN(-1)" {
		t.Errorf("negative code: %q", got)
	}
}

func TestErrorMatchesItsCode(t *testing.T) {
	var err error = &Error{Func: "nvrtcCompileProgram", Code: InvalidOption, Message: "NVRTC_ERROR_INVALID_OPTION",
		Log: "nvrtc: error: unrecognized option --bogus found\n"}
	if !errors.Is(err, InvalidOption) || errors.Is(err, Compilation) {
		t.Error("errors.Is does not follow the code")
	}
	wrapped := fmt.Errorf("loading kernel: %w", err)
	var e *Error
	if !errors.As(wrapped, &e) || e.Code != InvalidOption {
		t.Error("errors.As fails through wrapping")
	}
	if got, want := err.Error(), "nvrtc: nvrtcCompileProgram: NVRTC_ERROR_INVALID_OPTION: nvrtc: error: unrecognized option --bogus found"; got != want {
		t.Errorf("Error() = %q\nwant %q", got, want)
	}
	err = &Error{Func: "nvrtcCreateProgram", Code: OutOfMemory, Message: "out of memory"}
	if got := err.Error(); got != "nvrtc: nvrtcCreateProgram: NVRTC_ERROR_OUT_OF_MEMORY (out of memory)" {
		t.Errorf("Error() = %q", got)
	}
	if !strings.HasPrefix(Compilation.Error(), "nvrtc: NVRTC_ERROR_COMPILATION") {
		t.Errorf("Code.Error() = %q", Compilation.Error())
	}
}
