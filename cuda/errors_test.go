package cuda

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
)

// The sticky codes of cuda.h: those documented to leave the process in an
// inconsistent state where every further CUDA call fails.
var wantSticky = []Result{214, 220, 226, 700, 702, 710, 714, 715, 716, 717, 718, 719, 721, 810, 911}

func TestResultTable(t *testing.T) {
	// cuda.h of CUDA 13.x: 0-8, 34, 36, 46, 100-102, 200-202, 205-226,
	// 300-304, 400-402, 500, 600, 700-705, 708-721, 800-812, 900-918, 999.
	var want []Result
	for _, r := range [][2]Result{{0, 8}, {34, 34}, {36, 36}, {46, 46}, {100, 102}, {200, 202}, {205, 226},
		{300, 304}, {400, 402}, {500, 500}, {600, 600}, {700, 705}, {708, 721}, {800, 812}, {900, 918}, {999, 999}} {
		for c := r[0]; c <= r[1]; c++ {
			want = append(want, c)
		}
	}
	var got []Result
	for _, r := range results {
		got = append(got, r.code)
	}
	if !slices.Equal(got, want) {
		t.Errorf("the table's codes differ from cuda.h's:\n got %v\nwant %v", got, want)
	}
	names := map[string]bool{}
	var sticky []Result
	for i, r := range results {
		if i > 0 && results[i-1].code >= r.code {
			t.Errorf("table not sorted by code at %s", r.name)
		}
		if names[r.name] {
			t.Errorf("duplicate name %s", r.name)
		}
		names[r.name] = true
		if !strings.HasPrefix(r.name, "CUDA_ERROR_") && r.name != "CUDA_SUCCESS" {
			t.Errorf("bad name %q", r.name)
		}
		if r.msg == "" {
			t.Errorf("%s has no message", r.name)
		}
		if got, ok := r.code.lookup(); !ok || got.name != r.name {
			t.Errorf("lookup(%d) = %v, %v", r.code, got.name, ok)
		}
		if r.code.Name() != r.name {
			t.Errorf("Name(%d) = %s, want %s", r.code, r.code.Name(), r.name)
		}
		if r.sticky {
			sticky = append(sticky, r.code)
		}
	}
	if !slices.Equal(sticky, wantSticky) {
		t.Errorf("sticky codes %v, want %v", sticky, wantSticky)
	}
	for _, spot := range []struct {
		code Result
		name string
	}{
		{0, "CUDA_SUCCESS"}, {1, "CUDA_ERROR_INVALID_VALUE"}, {2, "CUDA_ERROR_OUT_OF_MEMORY"},
		{100, "CUDA_ERROR_NO_DEVICE"}, {201, "CUDA_ERROR_INVALID_CONTEXT"}, {209, "CUDA_ERROR_NO_BINARY_FOR_GPU"},
		{218, "CUDA_ERROR_INVALID_PTX"}, {222, "CUDA_ERROR_UNSUPPORTED_PTX_VERSION"}, {400, "CUDA_ERROR_INVALID_HANDLE"},
		{500, "CUDA_ERROR_NOT_FOUND"}, {600, "CUDA_ERROR_NOT_READY"}, {700, "CUDA_ERROR_ILLEGAL_ADDRESS"},
		{716, "CUDA_ERROR_MISALIGNED_ADDRESS"}, {719, "CUDA_ERROR_LAUNCH_FAILED"}, {910, "CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE"},
		{916, "CUDA_ERROR_KEY_ROTATION"}, {999, "CUDA_ERROR_UNKNOWN"},
	} {
		if got := spot.code.Name(); got != spot.name {
			t.Errorf("code %d is %s, want %s", spot.code, got, spot.name)
		}
	}
	if got := Result(12345).Name(); got != "CUresult(12345)" {
		t.Errorf("unknown code named %q", got)
	}
}

// sentinels maps every exported sentinel to its code.
var sentinels = map[*Error]Result{
	ErrInvalidValue: 1, ErrOutOfMemory: 2, ErrNotInitialized: 3, ErrDeinitialized: 4, ErrStubLibrary: 34,
	ErrDeviceUnavailable: 46, ErrNoDevice: 100, ErrInvalidDevice: 101, ErrInvalidImage: 200, ErrInvalidContext: 201,
	ErrNoBinaryForGPU: 209, ErrECCUncorrectable: 214, ErrInvalidPTX: 218, ErrJITCompilerNotFound: 221,
	ErrUnsupportedPTXVersion: 222, ErrInvalidSource: 300, ErrInvalidHandle: 400, ErrNotFound: 500, ErrNotReady: 600,
	ErrIllegalAddress: 700, ErrLaunchOutOfResources: 701, ErrLaunchTimeout: 702, ErrAssert: 710,
	ErrHardwareStackError: 714, ErrIllegalInstruction: 715, ErrMisalignedAddress: 716, ErrInvalidAddressSpace: 717,
	ErrInvalidPC: 718, ErrLaunchFailed: 719, ErrNotPermitted: 800, ErrNotSupported: 801, ErrSystemDriverMismatch: 803,
	ErrCompatNotSupported: 804, ErrCaptureUnsupported: 900, ErrCaptureInvalidated: 901, ErrCaptureWrongThread: 908,
	ErrGraphExecUpdate: 910, ErrUnknown: 999,
}

// TestErrorMapping turns every code into an error the way a failed driver
// call does without a driver to describe it, and checks the name, message,
// sentinels and stickiness.
func TestErrorMapping(t *testing.T) {
	var none *api // no driver loaded: the static table describes the code
	if none.error("cuFoo", 0) != nil {
		t.Fatal("success must map to nil")
	}
	for _, info := range results[1:] {
		err := none.error("cuFoo_v2", info.code)
		var e *Error
		if !errors.As(err, &e) {
			t.Fatalf("%s: not an *Error: %T", info.name, err)
		}
		if e.Func != "cuFoo_v2" || e.Code != info.code || e.Name != info.name || e.Msg != info.msg {
			t.Errorf("%s: got %+v", info.name, e)
		}
		msg := err.Error()
		if !strings.Contains(msg, "cuFoo_v2") || !strings.Contains(msg, info.name) || !strings.Contains(msg, info.msg) {
			t.Errorf("%s: message %q lacks the function, name or description", info.name, msg)
		}
		wrapped := fmt.Errorf("context: %w", err)
		if got := errors.Is(wrapped, ErrContextLost); got != info.sticky || e.Sticky() != info.sticky {
			t.Errorf("%s: errors.Is(ErrContextLost) = %v, want %v", info.name, got, info.sticky)
		}
		if info.sticky != strings.Contains(msg, "restart the process") {
			t.Errorf("%s: sticky %v but message %q", info.name, info.sticky, msg)
		}
		for s, code := range sentinels {
			if got := errors.Is(wrapped, s); got != (code == info.code) {
				t.Errorf("errors.Is(%s, %s) = %v", info.name, s.Name, got)
			}
		}
	}
	for s, code := range sentinels {
		if s.Code != code || s.Name != code.Name() {
			t.Errorf("sentinel for %d is %+v", code, s)
		}
	}
	unknown := none.error("cuBar", 4242)
	if !strings.Contains(unknown.Error(), "CUresult(4242)") || !strings.Contains(unknown.Error(), "newer") {
		t.Errorf("unknown code: %v", unknown)
	}
}

func TestErrorTypes(t *testing.T) {
	launch := &LaunchError{Kernel: "vadd", Grid: Dim3{4, 1, 1}, Block: Dim3{256, 1, 1}, Caller: "main.go:12",
		Err: (*api)(nil).error("cuStreamSynchronize", 700)}
	msg := launch.Error()
	for _, want := range []string{"vadd<<<(4,1,1), (256,1,1), 0>>>", "main.go:12", "CUDA_ERROR_ILLEGAL_ADDRESS", "restart"} {
		if !strings.Contains(msg, want) {
			t.Errorf("LaunchError %q lacks %q", msg, want)
		}
	}
	if !errors.Is(launch, ErrIllegalAddress) || !errors.Is(launch, ErrContextLost) {
		t.Error("LaunchError must unwrap to its *Error")
	}
	cfg := &ConfigError{Kernel: "k", Grid: Dim3{1, 1, 1}, Block: Dim3{2048, 1, 1}, Reason: "too big"}
	if !errors.Is(cfg, ErrInvalidConfig) || !strings.Contains(cfg.Error(), "k<<<(1,1,1), (2048,1,1), 0>>>: too big") {
		t.Errorf("ConfigError: %v", cfg)
	}
	arg := &ArgError{Kernel: "k", Index: 2, Type: "int", Reason: "use int32", Err: ErrFreed}
	if !errors.Is(arg, ErrInvalidArg) || !errors.Is(arg, ErrFreed) || !strings.Contains(arg.Error(), "k argument 2 (int): use int32") {
		t.Errorf("ArgError: %v", arg)
	}
	mod := &ModuleError{Err: (*api)(nil).error("cuModuleLoadDataEx", 218), Log: "ptxas: line 3: error"}
	if !errors.Is(mod, ErrInvalidPTX) || !strings.Contains(mod.Error(), "line 3") {
		t.Errorf("ModuleError: %v", mod)
	}
}

// A sticky error names the kernels launched last, the most recent first.
func TestStickyErrorNamesRecentKernels(t *testing.T) {
	d := &Device{api: &api{}}
	for _, name := range []string{"a", "b", "b", "c", "d", "e", "f", "g", "h", "user_kernel", "array_op"} {
		d.launched(&Function{name: name})
	}
	err := d.err("cuStreamSynchronize", 700)
	var e *Error
	if !errors.As(err, &e) || !errors.Is(err, ErrContextLost) {
		t.Fatalf("err = %v", err)
	}
	want := []string{"array_op", "user_kernel", "h", "g", "f", "e", "d", "c"}
	if strings.Join(e.Recent, ",") != strings.Join(want, ",") {
		t.Errorf("Recent = %v, want %v", e.Recent, want)
	}
	if !strings.Contains(err.Error(), "kernels launched last on the device, most recent first: array_op, user_kernel, h") {
		t.Errorf("message %q", err)
	}
	if err := d.err("cuMemAlloc_v2", 2); strings.Contains(err.Error(), "launched last") {
		t.Errorf("a non-sticky error names kernels: %v", err)
	}
	fresh := &Device{api: &api{}}
	if e := fresh.err("cuCtxSynchronize", 700).(*Error); len(e.Recent) != 0 {
		t.Errorf("no launches, yet Recent = %v", e.Recent)
	}
}

// Repeated launches of one kernel take one slot of the ring, so older
// kernels stay named.
func TestRecentKernelsRepeats(t *testing.T) {
	d := &Device{api: &api{}}
	a, b := &Function{name: "a"}, &Function{name: "b"}
	d.launched(a)
	for range 100 {
		d.launched(b)
	}
	if got := strings.Join(d.recentNames(), ","); got != "b,a" {
		t.Errorf("recent kernels %q, want b,a", got)
	}
}
