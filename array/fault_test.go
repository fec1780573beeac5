package array

import (
	"errors"
	"sync/atomic"
	"testing"

	"github.com/gocu-dev/gocu/array/internal/backend"
	"github.com/gocu-dev/gocu/array/internal/gpu"
	"github.com/gocu-dev/gocu/cuda"
)

// faultyBackend behaves like a GPU whose kernel faults asynchronously: the
// launch that faults returns nil, and the fault shows from then on in
// Poll, reads, syncs and every later operation (as a lost CUDA context
// does).
type faultyBackend struct {
	backend.Backend
	faultAt int64 // the evaluation that faults
	evals   atomic.Int64
	fault   atomic.Pointer[error]
}

func (f *faultyBackend) err() error {
	if p := f.fault.Load(); p != nil {
		return *p
	}
	return nil
}

func (f *faultyBackend) Eval(p *backend.Program, out backend.Operand) error {
	if err := f.err(); err != nil {
		return err
	}
	if f.evals.Add(1) == f.faultAt {
		var e error = &gpu.FaultError{Device: "cuda:9", Err: &cuda.Error{Func: "cuStreamQuery", Code: 700, Name: "CUDA_ERROR_ILLEGAL_ADDRESS"}}
		f.fault.Store(&e)
	}
	return f.Backend.Eval(p, out)
}

func (f *faultyBackend) Alloc(dt backend.DType, n int) (backend.Buffer, error) {
	if err := f.err(); err != nil {
		return nil, err
	}
	return f.Backend.Alloc(dt, n)
}

func (f *faultyBackend) Read(dst any, src backend.Buffer, off int) error {
	if err := f.err(); err != nil {
		return err
	}
	return f.Backend.Read(dst, src, off)
}

func (f *faultyBackend) Sync() error { return f.err() }
func (f *faultyBackend) Poll() error { return f.err() }

// An asynchronous GPU fault surfaces at the next Err or read, sticks to
// the arrays that see it, and fails every later operation of the device.
func TestAsynchronousFaultSurfaces(t *testing.T) {
	fb := &faultyBackend{Backend: CPU().be, faultAt: 2}
	d := &Maker{be: fb}
	x := d.Arange(Float32, 10).Eval() // evaluation 1: fine
	y := x.Mul(2).Eval()              // evaluation 2: "faults" on the GPU, returns at once
	if y.IsLazy() {
		t.Fatal("y was not evaluated")
	}
	err := y.Err()
	if !errors.Is(err, ErrDevice) || !errors.Is(err, cuda.ErrIllegalAddress) || !errors.Is(err, cuda.ErrContextLost) {
		t.Fatalf("Err after the fault: %v", err)
	}
	if z := y.Add(1); !errors.Is(z.Err(), cuda.ErrIllegalAddress) {
		t.Errorf("an operation on the faulted array: %v", z.Err())
	}
	if _, err := x.Float32s(); !errors.Is(err, cuda.ErrIllegalAddress) {
		t.Errorf("reading another array of the device: %v", err)
	}
	if err := d.Ones(Float32, 3).Err(); !errors.Is(err, cuda.ErrIllegalAddress) {
		t.Errorf("a new array on the device: %v", err)
	}
	if err := d.Sync(); !errors.Is(err, cuda.ErrContextLost) {
		t.Errorf("Sync: %v", err)
	}
}
