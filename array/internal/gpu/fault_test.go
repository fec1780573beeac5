package gpu

import (
	"errors"
	"strings"
	"testing"

	"github.com/gocu-dev/gocu/array/internal/backend"
	"github.com/gocu-dev/gocu/cuda"
)

// A sticky driver error (the context is lost) is recorded once and then
// returned by every operation, without reaching the driver; other errors
// pass through unrecorded.
func TestFaultIsSticky(t *testing.T) {
	b := testBackend()
	if err := b.note(&cuda.Error{Func: "cuMemAlloc_v2", Code: 2}); b.failed() != nil || err == nil {
		t.Fatalf("out of memory was recorded as a fault: %v", b.failed())
	}
	fault := &cuda.Error{Func: "cuStreamSynchronize", Code: 700, Name: "CUDA_ERROR_ILLEGAL_ADDRESS"}
	err := b.note(fault)
	var fe *FaultError
	if !errors.As(err, &fe) || !errors.Is(err, cuda.ErrIllegalAddress) || !errors.Is(err, cuda.ErrContextLost) {
		t.Fatalf("note(illegal address) = %v", err)
	}
	if !strings.Contains(err.Error(), "cuda:test") || !strings.Contains(err.Error(), "context is lost") {
		t.Errorf("message %q does not name the device and the lost context", err)
	}
	if again := b.note(&cuda.Error{Func: "cuLaunchKernel", Code: 719}); again != err {
		t.Errorf("a second fault replaced the first: %v", again)
	}
	ops := map[string]error{
		"Poll":  b.Poll(),
		"Sync":  b.Sync(),
		"Eval":  b.Eval(&backend.Program{}, backend.Operand{}),
		"Read":  b.Read([]float32{0}, nil, 0),
		"Write": b.Write(nil, 0, []float32{1}),
	}
	if _, aerr := b.Alloc(backend.Float32, 4); aerr != err {
		t.Errorf("Alloc after the fault: %v", aerr)
	}
	for name, e := range ops {
		if e != err {
			t.Errorf("%s after the fault: %v, want the fault", name, e)
		}
	}
}
