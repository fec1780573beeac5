package gocu

import (
	"unsafe"

	"github.com/gocu-dev/gocu/cuda"
)

// AnyBuffer is any *Buffer[T], for APIs that take buffers of different
// element types, such as Tuning.Written.
type AnyBuffer interface {
	Len() int
	Device() *Device
	String() string
	// scratch points the buffer at a scratch copy of its contents until
	// restore; reset copies the real contents into it again. Copies on a
	// GPU are queued on stream s.
	scratch(s *cuda.Stream) (scratchBuf, error)
}

// scratchBuf undoes and refreshes a scratch copy.
type scratchBuf struct {
	reset   func() error
	restore func()
}

func (b *Buffer[T]) scratch(s *cuda.Stream) (scratchBuf, error) {
	if b == nil {
		return scratchBuf{}, errNilBuffer
	}
	if b.bind != nil { // In, Out, InOut: the host slice is what a launch reads and writes
		if b.dev != nil {
			return scratchBuf{}, errBoundInUse(b.bind.dir)
		}
		real := b.bind.host
		tmp := make([]T, len(real))
		b.bind.host = tmp
		return scratchBuf{
			reset:   func() error { copy(tmp, real); return nil },
			restore: func() { b.bind.host = real },
		}, nil
	}
	if err := b.check("Autotune"); err != nil {
		return scratchBuf{}, err
	}
	if b.dev.kind != CUDA {
		real := b.host
		tmp := alignedSlice[T](len(real))
		b.host = tmp
		return scratchBuf{
			reset:   func() error { copy(tmp, real); return nil },
			restore: func() { b.host = real },
		}, nil
	}
	var zero T
	bytes := b.n * int(unsafe.Sizeof(zero))
	real := b.mem
	tmp, err := b.dev.gpu.AllocOn(s, bytes)
	if err != nil {
		return scratchBuf{}, err
	}
	b.mem = tmp
	return scratchBuf{
		reset: func() error { return cuda.CopyDtoDAsync(tmp, real, bytes, s) },
		restore: func() {
			b.mem = real
			tmp.FreeOn(s)
		},
	}, nil
}
