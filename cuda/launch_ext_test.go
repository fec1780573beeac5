package cuda_test

import (
	"bytes"
	"errors"
	"log/slog"
	"strings"
	"testing"

	"github.com/gocu-dev/gocu/cuda"
)

// A driver error from a launch names the kernel, its configuration and the
// line of Go code that launched it.
func TestLaunchErrorNamesKernelAndCallSite(t *testing.T) {
	f := cuda.FakeFunction(t, "vadd", 700)                                                  // cuLaunchKernel fails with CUDA_ERROR_ILLEGAL_ADDRESS
	err := f.Launch(cuda.Config{Grid: cuda.Dim3{X: 8}, Block: cuda.Dim3{X: 128}}, int32(1)) // the call site
	var le *cuda.LaunchError
	if !errors.As(err, &le) {
		t.Fatalf("want a *LaunchError, got %v", err)
	}
	if le.Kernel != "vadd" || le.Grid != (cuda.Dim3{8, 1, 1}) || le.Block != (cuda.Dim3{128, 1, 1}) {
		t.Errorf("error fields: %+v", le)
	}
	if !strings.HasSuffix(le.Caller, "launch_ext_test.go:17") {
		t.Errorf("call site %q, want launch_ext_test.go:17", le.Caller)
	}
	if !errors.Is(err, cuda.ErrIllegalAddress) || !errors.Is(err, cuda.ErrContextLost) {
		t.Errorf("sentinels: %v", err)
	}
	for _, want := range []string{"vadd<<<(8,1,1), (128,1,1), 0>>>", "cuLaunchKernel", "CUDA_ERROR_ILLEGAL_ADDRESS", "restart the process"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%q lacks %q", err, want)
		}
	}
}

func TestLaunchLog(t *testing.T) {
	var buf bytes.Buffer
	old := slog.Default()
	slog.SetDefault(slog.New(slog.NewTextHandler(&buf, nil)))
	cuda.SetLogLaunches(true)
	defer func() {
		cuda.SetLogLaunches(false)
		slog.SetDefault(old)
	}()
	f := cuda.FakeFunction(t, "saxpy", 0)
	if err := f.Launch(cuda.Config{Grid: cuda.Dim3{X: 3}, Block: cuda.Dim3{X: 64}, SharedMem: 512}, float32(2)); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"cuda: launch", "kernel=saxpy", "grid=(3,1,1)", "block=(64,1,1)", "shared=512", "launch_ext_test.go:"} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("log %q lacks %q", buf.String(), want)
		}
	}
}

func BenchmarkLaunchFakeDriver(b *testing.B) {
	f := cuda.FakeFunction(b, "k", 0)
	m := cuda.FakeMemory(f, 4096)
	cfg := cuda.Config{Grid: cuda.Dim3{X: 1}, Block: cuda.Dim3{X: 1}}
	b.ReportAllocs()
	for b.Loop() {
		_ = f.Launch(cfg, m, int32(1))
	}
}

// BenchmarkLaunchWordsFakeDriver: the launch of package array's tiny add
// kernel (three pointers and a length) through LaunchWords, against
// BenchmarkLaunchFakeDriver's two boxed arguments.
func BenchmarkLaunchWordsFakeDriver(b *testing.B) {
	f := cuda.FakeFunction(b, "k", 0)
	m := cuda.FakeMemory(f, 4096)
	cfg := cuda.Config{Grid: cuda.Dim3{X: 1}, Block: cuda.Dim3{X: 128}}
	words := []uint64{uint64(m.Ptr()), uint64(m.Ptr()) + 64, uint64(m.Ptr()) + 128, 16}
	b.ReportAllocs()
	for b.Loop() {
		_ = f.LaunchWords(cfg, words)
	}
}
