package cuda

import (
	"fmt"
	"sync/atomic"
	"unsafe"
)

// StreamFlags are the flags of a new stream (CUstream_flags).
type StreamFlags uint32

const (
	// StreamDefault makes a blocking stream: work on it is ordered with the
	// work on the device's default (legacy NULL) stream.
	StreamDefault StreamFlags = 0
	// StreamNonBlocking makes a stream that runs concurrently with the
	// default stream.
	StreamNonBlocking StreamFlags = 1
)

// Stream is a queue of GPU work that runs in order. Work on different
// streams may run concurrently. A Stream may be used from any goroutine.
type Stream struct {
	dev       *Device
	handle    uintptr // CUstream; 0 is the legacy default stream
	closed    atomic.Bool
	capturing atomic.Bool
}

// NewStream creates a stream on the device.
func (d *Device) NewStream(flags StreamFlags) (*Stream, error) {
	s := &Stream{dev: d}
	r := d.call(d.api.cuStreamCreate, uintptr(unsafe.Pointer(&s.handle)), uintptr(flags))
	if r != 0 {
		return nil, d.err("cuStreamCreate", r)
	}
	return s, nil
}

// NewStreamWithPriority creates a stream with a priority; lower numbers
// are higher priorities, and the driver clamps out-of-range values.
func (d *Device) NewStreamWithPriority(flags StreamFlags, priority int) (*Stream, error) {
	s := &Stream{dev: d}
	r := d.call(d.api.cuStreamCreateWithPrio, uintptr(unsafe.Pointer(&s.handle)), uintptr(flags), uintptr(int32(priority)))
	if r != 0 {
		return nil, d.err("cuStreamCreateWithPriority", r)
	}
	return s, nil
}

// Device returns the stream's device.
func (s *Stream) Device() *Device { return s.dev }

// Handle returns the CUstream, for calling other CUDA libraries on the same
// stream (0 is the default stream).
func (s *Stream) Handle() uintptr { return s.handle }

// Closed reports whether the stream was closed, for bindings of other CUDA
// libraries that check a stream before handing its handle on.
func (s *Stream) Closed() bool { return s.closed.Load() }

// IsDefault reports whether s is the device's default stream.
func (s *Stream) IsDefault() bool { return s.handle == 0 }

func (s *Stream) String() string {
	if s.handle == 0 {
		return fmt.Sprintf("cuda:%d default stream", s.dev.ordinal)
	}
	return fmt.Sprintf("cuda:%d stream %#x", s.dev.ordinal, s.handle)
}

func (s *Stream) live() error {
	if s.closed.Load() {
		return fmt.Errorf("cuda: stream: %w", ErrClosed)
	}
	return nil
}

// Synchronize waits until all work queued on the stream has finished and
// returns the first error from it.
func (s *Stream) Synchronize() error {
	if err := s.live(); err != nil {
		return err
	}
	return s.dev.err("cuStreamSynchronize", s.dev.call(s.dev.api.cuStreamSynchronize, s.handle))
}

// Query reports whether all work queued on the stream has finished,
// without waiting.
func (s *Stream) Query() (bool, error) {
	if err := s.live(); err != nil {
		return false, err
	}
	switch r := s.dev.call(s.dev.api.cuStreamQuery, s.handle); r {
	case 0:
		return true, nil
	case 600: // CUDA_ERROR_NOT_READY
		return false, nil
	default:
		return false, s.dev.err("cuStreamQuery", r)
	}
}

// WaitEvent makes later work on the stream wait until e has completed,
// without blocking the host.
func (s *Stream) WaitEvent(e *Event) error {
	if err := s.live(); err != nil {
		return err
	}
	if err := e.live(); err != nil {
		return err
	}
	return s.dev.err("cuStreamWaitEvent", s.dev.call(s.dev.api.cuStreamWaitEvent, s.handle, e.handle, 0))
}

// Close waits for the stream's work and destroys it. Memory freed on the
// stream becomes available to every stream. Closing the default stream is
// an error.
func (s *Stream) Close() error {
	if s.handle == 0 {
		return fmt.Errorf("cuda: the default stream cannot be closed: %w", ErrInvalidValue)
	}
	if s.capturing.Load() {
		return fmt.Errorf("cuda: Close of a stream that is capturing a graph (call EndCapture): %w", ErrInvalidValue)
	}
	if !s.closed.CompareAndSwap(false, true) {
		return fmt.Errorf("cuda: stream closed twice: %w", ErrClosed)
	}
	d := s.dev
	err := d.err("cuStreamSynchronize", d.call(d.api.cuStreamSynchronize, s.handle))
	if err == nil {
		d.alloc.streamClosed(s.handle)
	}
	if r := d.call(d.api.cuStreamDestroy, s.handle); r != 0 && err == nil {
		err = d.err("cuStreamDestroy_v2", r)
	}
	return err
}
