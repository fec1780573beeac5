package gocu

import (
	"errors"
	"fmt"

	"github.com/gocu-dev/gocu/internal/bufarg"
)

func init() { bufarg.Use = useArg }

// launchArg is implemented by every *Buffer[T].
type launchArg interface {
	use(d *Device) (bufarg.Bound, error)
}

var errNilBuffer = errors.New("nil *gocu.Buffer")

func useArg(buf, dev any) (bufarg.Bound, error) {
	a, ok := buf.(launchArg)
	if !ok {
		return nil, fmt.Errorf("%T is not a *gocu.Buffer", buf)
	}
	return a.use(dev.(*Device))
}

// use checks b as an argument of a launch on d and gives an In, Out or
// InOut buffer its memory there.
func (b *Buffer[T]) use(d *Device) (bufarg.Bound, error) {
	if b == nil {
		return nil, errNilBuffer
	}
	if b.err != nil {
		return nil, b.err
	}
	var bound bufarg.Bound
	if b.bind != nil {
		if err := b.attach(d); err != nil {
			return nil, err
		}
		bound = boundBuffer[T]{b}
	}
	if b.freed || (b.mem != nil && b.mem.Freed()) {
		return bound, ErrFreed
	}
	if b.dev != d {
		return bound, fmt.Errorf("%v is on another device than the launch (%v): copy it there first", b, d)
	}
	return bound, nil
}

// boundBuffer is an In, Out or InOut buffer during a launch.
type boundBuffer[T any] struct{ b *Buffer[T] }

func (x boundBuffer[T]) Detach() error { return x.b.detach() }
func (x boundBuffer[T]) Release()      { x.b.release() }
