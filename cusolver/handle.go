package cusolver

import (
	"math"
	"runtime"
	"sync"
	"unsafe"

	"github.com/gocu-dev/gocu/internal/dynlib"
)

// Handle is a cuSOLVER dense context (cusolverDnHandle_t) bound to the
// device whose CUDA context was current when it was created.
//
// Every method, Create and Destroy included, must run on an OS thread where
// that CUDA context is current. Operations are queued on the handle's
// stream (SetStream) and return before the GPU is done. A Handle may be
// used from several goroutines; calls are serialised.
type Handle struct {
	mu sync.Mutex
	h  uintptr
	l  *lib
}

// Create makes a handle (cusolverDnCreate) for the current CUDA context,
// loading libcusolver on first use.
func Create() (*Handle, error) {
	l, err := load()
	if err != nil {
		return nil, err
	}
	var h uintptr
	if err := check("cusolverDnCreate", Status(dynlib.Call(l.create, uintptr(unsafe.Pointer(&h))))); err != nil {
		return nil, err
	}
	return &Handle{h: h, l: l}, nil
}

// Destroy releases the handle (cusolverDnDestroy). Calls on a destroyed
// handle return ErrDestroyed; a second Destroy is a no-op.
func (h *Handle) Destroy() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.h == 0 {
		return nil
	}
	err := check("cusolverDnDestroy", Status(dynlib.Call(h.l.destroy, h.h)))
	h.h = 0
	return err
}

// lock takes the handle for one call.
func (h *Handle) lock() error {
	h.mu.Lock()
	if h.h == 0 {
		h.mu.Unlock()
		return ErrDestroyed
	}
	return nil
}

// Raw returns the cusolverDnHandle_t, for calling functions this package
// does not bind.
func (h *Handle) Raw() uintptr {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.h
}

// SetStream makes later operations queue on stream, the raw CUstream
// handle (0 is the legacy default stream).
func (h *Handle) SetStream(stream uintptr) error {
	if err := h.lock(); err != nil {
		return err
	}
	defer h.mu.Unlock()
	return check("cusolverDnSetStream", Status(dynlib.Call(h.l.setStream, h.h, stream)))
}

// size runs the buffer-size query sel selects for dt; its last argument
// is the int it writes.
func (h *Handle) size(fn string, dt DType, sel func(*typed) uintptr, args ...uintptr) (int, error) {
	if err := h.lock(); err != nil {
		return 0, err
	}
	defer h.mu.Unlock()
	fp := sel(&h.l.t[dt])
	// The result lives on the heap, where nothing moves it, and stays
	// reachable until it is read after the call.
	n := new(int32)
	args = append(append([]uintptr{h.h}, args...), uintptr(unsafe.Pointer(n)))
	err := check(fn, Status(dynlib.Call(fp, args...)))
	v := int(*n)
	runtime.KeepAlive(n)
	if err != nil {
		return 0, err
	}
	return v, nil
}

// run runs the entry point sel selects for dt under the handle's lock.
func (h *Handle) run(fn string, dt DType, sel func(*typed) uintptr, args ...uintptr) error {
	if err := h.lock(); err != nil {
		return err
	}
	defer h.mu.Unlock()
	fp := sel(&h.l.t[dt])
	return check(fn, Status(dynlib.Call(fp, append([]uintptr{h.h}, args...)...)))
}

// i32 passes a C int (checked to fit beforehand); the callee reads the low
// 32 bits of the register or stack slot, sign included.
func i32(v int) uintptr { return uintptr(int64(int32(v))) }

func fitsInt32(v int) bool { return v >= 0 && v <= math.MaxInt32 }
