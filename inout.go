package gocu

import (
	"fmt"

	"github.com/gocu-dev/gocu/internal/syncdebug"
)

// In, Out and InOut wrap a host slice as a kernel argument that copies
// around one launch, like PyCUDA's drv.In/Out/InOut: at the launch the
// buffer gets device memory, In and InOut copy the slice there first, and
// Out and InOut copy the result back into the slice when the kernel has
// finished. The launch then waits for the kernel. They trade speed for
// convenience; keep data on the device with Alloc and FromSlice instead when
// it is used by more than one launch.
func In[T any](s []T) *Buffer[T] { return bound(s, dirIn) }

// Out wraps s to receive a kernel's output; see In.
func Out[T any](s []T) *Buffer[T] { return bound(s, dirOut) }

// InOut wraps s to be copied to the device and back; see In.
func InOut[T any](s []T) *Buffer[T] { return bound(s, dirInOut) }

type direction uint8

const (
	dirIn direction = iota + 1
	dirOut
	dirInOut
)

func (d direction) String() string {
	return [...]string{"", "In", "Out", "InOut"}[d]
}

func errBoundInUse(d direction) error {
	return fmt.Errorf("gocu: the %s buffer is in use by a launch", d)
}

type binding[T any] struct {
	dir  direction
	host []T
}

func bound[T any](s []T, dir direction) *Buffer[T] {
	return &Buffer[T]{n: len(s), bind: &binding[T]{dir: dir, host: s}}
}

// hostArg is implemented by In, Out and InOut buffers.
type hostArg interface {
	isBound() bool
	// attach gives the buffer memory on d and copies the input in.
	attach(d *Device) error
	// detach copies the output back (after the launch completed) and
	// releases the memory.
	detach() error
	// release releases the memory without copying anything back, after a
	// failed launch.
	release()
}

func (b *Buffer[T]) isBound() bool { return b != nil && b.bind != nil }

func (b *Buffer[T]) attach(d *Device) error {
	if b.bind == nil {
		return nil
	}
	if b.dev != nil {
		return fmt.Errorf("gocu: %s buffer used by two launches at once", b.bind.dir)
	}
	// The launch waits for the kernel to copy the outputs back.
	if d.kind == CUDA && syncdebug.On() {
		if err := syncdebug.Report(syncdebug.Launch, "Launch"); err != nil {
			return err
		}
	}
	tmp, err := Alloc[T](d, b.n)
	if err != nil {
		return err
	}
	if b.bind.dir != dirOut {
		if err := tmp.copyFrom(b.bind.host); err != nil {
			tmp.Free()
			return err
		}
	}
	b.dev, b.mem, b.host = d, tmp.mem, tmp.host
	return nil
}

func (b *Buffer[T]) detach() error {
	if b.bind == nil || b.dev == nil {
		return nil
	}
	var err error
	if b.bind.dir != dirIn {
		err = b.copyTo(b.bind.host)
	}
	if b.mem != nil {
		if ferr := b.mem.Free(); err == nil {
			err = ferr
		}
	}
	b.dev, b.mem, b.host = nil, nil, nil
	return err
}

func (b *Buffer[T]) release() {
	if b.bind == nil || b.dev == nil {
		return
	}
	if b.mem != nil {
		b.mem.Free()
	}
	b.dev, b.mem, b.host = nil, nil, nil
}

// attachAll binds the In/Out/InOut arguments among args to d. It reports
// whether there were any, so that the launch knows to wait and detach.
func attachAll(d *Device, args []any) (bool, error) {
	found := false
	for i, a := range args {
		h, ok := a.(hostArg)
		if !ok || !h.isBound() {
			continue
		}
		if err := h.attach(d); err != nil {
			detachAll(args[:i])
			return false, err
		}
		found = true
	}
	return found, nil
}

// detachAll copies the outputs back and frees the temporary memory,
// returning the first error.
func detachAll(args []any) error {
	var first error
	for _, a := range args {
		if h, ok := a.(hostArg); ok {
			if err := h.detach(); err != nil && first == nil {
				first = err
			}
		}
	}
	return first
}
