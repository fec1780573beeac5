package nccl

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/gocu-dev/gocu/cuda"
)

func TestResultNames(t *testing.T) {
	for r, want := range map[Result]string{
		Success: "ncclSuccess", UnhandledCUDAError: "ncclUnhandledCudaError", SystemError: "ncclSystemError",
		InternalError: "ncclInternalError", InvalidArgument: "ncclInvalidArgument", InvalidUsage: "ncclInvalidUsage",
		RemoteError: "ncclRemoteError", InProgress: "ncclInProgress", Timeout: "ncclTimeout", 42: "ncclResult(42)",
	} {
		if got := r.String(); got != want {
			t.Errorf("Result(%d).String() = %q, want %q", r, got, want)
		}
		if r.description() == "" {
			t.Errorf("Result(%d) has no description", r)
		}
	}
}

func TestSentinelsMatchTheirCodes(t *testing.T) {
	sentinels := map[Result]error{
		UnhandledCUDAError: ErrUnhandledCUDA, SystemError: ErrSystem, InternalError: ErrInternal,
		InvalidArgument: ErrInvalidArgument, InvalidUsage: ErrInvalidUsage, RemoteError: ErrRemote,
		InProgress: ErrInProgress, Timeout: ErrTimeout,
	}
	for code := range sentinels {
		err := fmt.Errorf("wrapped: %w", (*lib)(nil).error("ncclAllReduce", code, "rank 0 of 2 on cuda:0", errMark{}))
		for other, s := range sentinels {
			if got := errors.Is(err, s); got != (other == code) {
				t.Errorf("errors.Is(%v error, %v) = %v", code, other, got)
			}
		}
		var e *Error
		if !errors.As(err, &e) || e.Code != code || e.Func != "ncclAllReduce" {
			t.Errorf("errors.As: %#v", e)
		}
		if errors.Is(err, ErrNoLibrary) || errors.Is(err, ErrDestroyed) {
			t.Errorf("%v matches an unrelated sentinel", code)
		}
	}
	if (*lib)(nil).error("x", Success, "", errMark{}) != nil {
		t.Error("Success is an error")
	}
}

func TestErrorText(t *testing.T) {
	e := &Error{Func: "ncclCommInitRank", Code: InvalidUsage, Name: "ncclInvalidUsage",
		Msg: "invalid usage", Detail: "Duplicate GPU detected", Comm: "rank 1 of 2 on cuda:0"}
	want := "nccl: ncclCommInitRank (rank 1 of 2 on cuda:0): ncclInvalidUsage: invalid usage: Duplicate GPU detected"
	if e.Error() != want {
		t.Errorf("got  %q\nwant %q", e.Error(), want)
	}
	if got := ErrRemote.Error(); got != "nccl: ncclRemoteError: a remote process exited or there was a network error" {
		t.Errorf("sentinel text %q", got)
	}
}

func TestArgError(t *testing.T) {
	err := argErr("ncclAllReduce", "recv holds %d bytes, the call needs %d", 8, 16)
	if !errors.Is(err, ErrInvalidArgument) {
		t.Error("an ArgError does not match ErrInvalidArgument")
	}
	if err.Error() != "nccl: ncclAllReduce: recv holds 8 bytes, the call needs 16" {
		t.Errorf("text %q", err)
	}
	wrapped := &ArgError{Func: "ncclSend", Msg: "buf was freed", Err: cuda.ErrFreed}
	if !errors.Is(wrapped, cuda.ErrFreed) || !errors.Is(wrapped, ErrInvalidArgument) {
		t.Error("the cause or the sentinel is lost")
	}
	if !strings.Contains(wrapped.Error(), "buf was freed") {
		t.Errorf("text %q", wrapped)
	}
	le := &LoadError{Path: "/x/libc.so.6", Reason: "symbol ncclGetVersion not found in /x/libc.so.6"}
	if !errors.Is(le, ErrNoLibrary) || errors.Is(le, ErrInvalidArgument) {
		t.Error("LoadError matches wrongly")
	}
}
