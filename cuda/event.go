package cuda

import (
	"fmt"
	"math"
	"sync/atomic"
	"time"
	"unsafe"
)

// EventFlags are the flags of a new event (CUevent_flags).
type EventFlags uint32

const (
	EventDefault       EventFlags = 0
	EventBlockingSync  EventFlags = 1 // Synchronize blocks the thread instead of spinning
	EventDisableTiming EventFlags = 2 // cheaper; Elapsed cannot use it
)

// Event marks a point in a stream: to wait for it, to make another stream
// wait for it, or to time the GPU work between two events.
type Event struct {
	dev    *Device
	handle uintptr
	flags  EventFlags
	closed atomic.Bool
}

// NewEvent creates an event on the device.
func (d *Device) NewEvent(flags EventFlags) (*Event, error) {
	e := &Event{dev: d, flags: flags}
	r := d.call(d.api.cuEventCreate, uintptr(unsafe.Pointer(&e.handle)), uintptr(flags))
	if r != 0 {
		return nil, d.err("cuEventCreate", r)
	}
	return e, nil
}

func (e *Event) live() error {
	if e == nil {
		return fmt.Errorf("cuda: nil *Event: %w", ErrInvalidValue)
	}
	if e.closed.Load() {
		return fmt.Errorf("cuda: event: %w", ErrClosed)
	}
	return nil
}

// Handle returns the CUevent.
func (e *Event) Handle() uintptr { return e.handle }

// Record marks the current end of stream s (nil for the default stream):
// the event completes when the work queued on s so far has finished.
func (e *Event) Record(s *Stream) error {
	if err := e.live(); err != nil {
		return err
	}
	s, err := e.dev.streamOrDefault(s)
	if err != nil {
		return err
	}
	return e.dev.err("cuEventRecord", e.dev.call(e.dev.api.cuEventRecord, e.handle, s.handle))
}

// Synchronize waits until the event has completed.
func (e *Event) Synchronize() error {
	if err := e.live(); err != nil {
		return err
	}
	return e.dev.err("cuEventSynchronize", e.dev.call(e.dev.api.cuEventSynchronize, e.handle))
}

// Query reports whether the event has completed, without waiting.
func (e *Event) Query() (bool, error) {
	if err := e.live(); err != nil {
		return false, err
	}
	switch r := e.dev.call(e.dev.api.cuEventQuery, e.handle); r {
	case 0:
		return true, nil
	case 600:
		return false, nil
	default:
		return false, e.dev.err("cuEventQuery", r)
	}
}

// Close destroys the event.
func (e *Event) Close() error {
	if e == nil || !e.closed.CompareAndSwap(false, true) {
		return fmt.Errorf("cuda: event closed twice: %w", ErrClosed)
	}
	return e.dev.err("cuEventDestroy_v2", e.dev.call(e.dev.api.cuEventDestroy, e.handle))
}

// Elapsed returns the GPU time between two recorded, completed events
// (resolution about half a microsecond). Both must have timing enabled.
func Elapsed(start, end *Event) (time.Duration, error) {
	if err := start.live(); err != nil {
		return 0, err
	}
	if err := end.live(); err != nil {
		return 0, err
	}
	if start.flags&EventDisableTiming != 0 || end.flags&EventDisableTiming != 0 {
		return 0, fmt.Errorf("cuda: Elapsed: an event was created with EventDisableTiming: %w", ErrInvalidValue)
	}
	d := start.dev
	var ms float32
	r := d.call(d.api.cuEventElapsedTime, uintptr(unsafe.Pointer(&ms)), start.handle, end.handle)
	if r != 0 {
		return 0, d.err("cuEventElapsedTime", r)
	}
	return time.Duration(math.Round(float64(ms) * 1e6)), nil
}
