package gpu

import (
	"errors"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/gocu-dev/gocu/array/internal/cudagen"
	"github.com/gocu-dev/gocu/cublas"
	"github.com/gocu-dev/gocu/cuda"
	"github.com/gocu-dev/gocu/nvrtc"
)

// Backend runs array operations on one GPU. It is safe for concurrent use;
// all its work goes to one stream, in the order the calls are made.
type Backend struct {
	dev    *cuda.Device
	stream *cuda.Stream
	name   string
	sms    int
	arch   string

	fault atomic.Pointer[error] // the sticky error that lost the context
	syncs atomic.Int64          // host waits (Read, Sync, Trim)

	// mu serialises launches with the scratch arena they share and with
	// module unloads.
	mu           sync.Mutex
	scratch      *cuda.Memory
	scratchBytes int
	zero         *cuda.Memory // zeroed tickets, left zero by every plan

	mods    modules
	plans   planCache
	kernels *cudagen.Cache[any] // generated kernels by specialisation key

	gm graphMem // CUDA graphs: capture state and the memory graphs hold

	// load is function, or a fake driver's loader (NewFake).
	load func(*cudagen.Kernel) (*kfunc, error)

	pace pacer // starts collections when dropped arrays' memory piles up

	ix      ixState  // the indexing kernels' device-side error flag
	ssFuncs sync.Map // *cudagen.Kernel -> *kfunc: the sort and scan kernels loaded (sortscan.go)

	blasOnce sync.Once
	blas     *cublas.Handle
	blasWS   *cuda.Memory
	blasErr  error
}

// New returns the backend of GPU dev, queuing every operation on stream s
// (the gocu device's default stream, which launches of user kernels share).
// One backend per device and process: package array keeps it.
func New(dev *cuda.Device, s *cuda.Stream) (*Backend, error) {
	if err := nvrtc.Load(); err != nil {
		return nil, err
	}
	major, minor := dev.ComputeCapability()
	arch, err := nvrtc.TargetFor(major, minor)
	if err != nil {
		return nil, err
	}
	b := &Backend{
		dev:     dev,
		stream:  s,
		name:    "cuda:" + strconv.Itoa(dev.Ordinal()),
		sms:     max(dev.Props().Multiprocessors, 1),
		arch:    arch,
		kernels: cudagen.NewCache[any](4096, nil),
	}
	b.load = b.function
	b.mods.init(b, moduleLimit)
	b.plans.init(planLimit)
	zero, err := dev.AllocOn(s, 4*ticketWords)
	if err != nil {
		return nil, err
	}
	if err := zero.MemsetD32Async(0, s); err != nil {
		return nil, err
	}
	b.zero = zero
	// The indexing error words, made now: not inside a graph capture.
	if _, err := b.ixWords(); err != nil {
		return nil, err
	}
	return b, nil
}

// Name implements backend.Backend ("cuda:0").
func (b *Backend) Name() string { return b.name }

// Device returns the GPU.
func (b *Backend) Device() *cuda.Device { return b.dev }

// Stream returns the stream every operation is queued on.
func (b *Backend) Stream() *cuda.Stream { return b.stream }

// Syncs counts the times the backend made the host wait for the GPU
// (reads, Sync, Trim), for tests that prove a chain of operations does not.
func (b *Backend) Syncs() int64 { return b.syncs.Load() }

// Busy reports whether work queued on the stream is still running.
func (b *Backend) Busy() (bool, error) {
	if b.capturing() {
		return true, nil
	}
	done, err := b.stream.Query()
	if err != nil {
		return false, b.note(err)
	}
	return !done, nil
}

// FaultError is the sticky error a GPU fault leaves: the context is lost
// and every later operation fails with it.
type FaultError struct {
	Device string
	Err    error
}

func (e *FaultError) Error() string {
	return fmt.Sprintf("%s: the GPU reported a fault and its context is lost (restart the process): %v", e.Device, e.Err)
}

func (e *FaultError) Unwrap() error { return e.Err }

// note records err if it lost the context and returns the error to report.
func (b *Backend) note(err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, cuda.ErrContextLost) {
		var fe error = &FaultError{Device: b.name, Err: err}
		if b.fault.CompareAndSwap(nil, &fe) {
			return fe
		}
		return *b.fault.Load()
	}
	return err
}

// failed returns the sticky fault, if any.
func (b *Backend) failed() error {
	if p := b.fault.Load(); p != nil {
		return *p
	}
	return nil
}

// Poll implements backend.Backend: a fault already reported, or one the
// stream reports now (cuStreamQuery does not wait).
func (b *Backend) Poll() error {
	if err := b.failed(); err != nil {
		return err
	}
	if b.capturing() {
		return nil // a query would invalidate the capture
	}
	_, err := b.stream.Query()
	return b.note(err)
}

// Sync implements backend.Backend.
func (b *Backend) Sync() error {
	if err := b.failed(); err != nil {
		return err
	}
	if b.capturing() {
		return b.captureErr("waiting for the device")
	}
	b.syncs.Add(1)
	err := b.note(b.stream.Synchronize())
	if err == nil {
		b.mods.reap()
		err = b.ixCheck()
	}
	return err
}

// Trim returns the memory the allocator caches to the driver (it waits for
// the device).
func (b *Backend) Trim() {
	if b.capturing() {
		return // it waits for the device
	}
	b.syncs.Add(1)
	_, _ = b.dev.Allocator().Trim()
}
