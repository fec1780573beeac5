package cuda

import (
	"fmt"
	"reflect"
	"unsafe"
)

// Copies between host and device. The synchronous forms are ordered on the
// device's default stream, like cuMemcpy: CopyDtoH returns when the data
// are in dst; CopyHtoD returns when src may be reused (from pageable memory
// the driver may still be moving the staged data, which work on the default
// stream and blocking streams waits for; synchronise before using dst from a
// non-blocking stream, or use CopyHtoDAsync on that stream); CopyDtoD
// returns when the copy is queued. The Async forms queue
// the copy on a stream (nil for the default stream). From and to pinned
// memory (HostMemory) they are truly asynchronous: the host memory must stay
// untouched until the stream reaches the copy. From and to ordinary Go
// memory the driver stages the copy and returns when the Go memory may be
// reused. Every copy checks that it fits in the device memory; copy into or
// out of part of an allocation through a View.

// CopyHtoD copies src to the start of dst.
func CopyHtoD[T any](dst *Memory, src []T) error {
	n, err := hostCopyCheck[T]("CopyHtoD", dst, len(src))
	if err != nil || n == 0 {
		return err
	}
	d := dst.dev
	op := traceOp(CopyHtoDOp, d, nil, n)
	r := d.call(d.api.cuMemcpyHtoD, uintptr(dst.ptr), uintptr(unsafe.Pointer(unsafe.SliceData(src))), uintptr(n))
	op.end(r)
	return d.err("cuMemcpyHtoD_v2", r)
}

// CopyDtoH copies the start of src into dst.
func CopyDtoH[T any](dst []T, src *Memory) error {
	n, err := hostCopyCheck[T]("CopyDtoH", src, len(dst))
	if err != nil || n == 0 {
		return err
	}
	d := src.dev
	op := traceOp(CopyDtoHOp, d, nil, n)
	r := d.call(d.api.cuMemcpyDtoH, uintptr(unsafe.Pointer(unsafe.SliceData(dst))), uintptr(src.ptr), uintptr(n))
	op.end(r)
	return d.err("cuMemcpyDtoH_v2", r)
}

// CopyHtoDAsync queues a copy of src to the start of dst on stream s.
func CopyHtoDAsync[T any](dst *Memory, src []T, s *Stream) error {
	n, err := hostCopyCheck[T]("CopyHtoDAsync", dst, len(src))
	if err != nil || n == 0 {
		return err
	}
	d := dst.dev
	if s, err = d.streamOrDefault(s); err != nil {
		return err
	}
	op := traceOp(CopyHtoDOp, d, s, n)
	r := d.call(d.api.cuMemcpyHtoDAsync, uintptr(dst.ptr), uintptr(unsafe.Pointer(unsafe.SliceData(src))), uintptr(n), s.handle)
	op.end(r)
	return d.err("cuMemcpyHtoDAsync_v2", r)
}

// CopyDtoHAsync queues a copy of the start of src into dst on stream s.
func CopyDtoHAsync[T any](dst []T, src *Memory, s *Stream) error {
	n, err := hostCopyCheck[T]("CopyDtoHAsync", src, len(dst))
	if err != nil || n == 0 {
		return err
	}
	d := src.dev
	if s, err = d.streamOrDefault(s); err != nil {
		return err
	}
	op := traceOp(CopyDtoHOp, d, s, n)
	r := d.call(d.api.cuMemcpyDtoHAsync, uintptr(unsafe.Pointer(unsafe.SliceData(dst))), uintptr(src.ptr), uintptr(n), s.handle)
	op.end(r)
	return d.err("cuMemcpyDtoHAsync_v2", r)
}

// CopyDtoD copies n bytes from src to dst, ordered on the default stream.
func CopyDtoD(dst, src *Memory, n int) error {
	if err := devCopyCheck("CopyDtoD", dst, src, n); err != nil || n == 0 {
		return err
	}
	d := dst.dev
	op := traceOp(CopyDtoDOp, d, nil, n)
	r := d.call(d.api.cuMemcpyDtoD, uintptr(dst.ptr), uintptr(src.ptr), uintptr(n))
	op.end(r)
	return d.err("cuMemcpyDtoD_v2", r)
}

// CopyDtoDAsync queues a copy of n bytes from src to dst on stream s.
func CopyDtoDAsync(dst, src *Memory, n int, s *Stream) error {
	if err := devCopyCheck("CopyDtoDAsync", dst, src, n); err != nil || n == 0 {
		return err
	}
	d := dst.dev
	s, err := d.streamOrDefault(s)
	if err != nil {
		return err
	}
	op := traceOp(CopyDtoDOp, d, s, n)
	r := d.call(d.api.cuMemcpyDtoDAsync, uintptr(dst.ptr), uintptr(src.ptr), uintptr(n), s.handle)
	op.end(r)
	return d.err("cuMemcpyDtoDAsync_v2", r)
}

// hostCopyCheck validates a copy of count elements of T and returns its
// size in bytes.
func hostCopyCheck[T any](op string, m *Memory, count int) (int, error) {
	if m == nil {
		return 0, fmt.Errorf("cuda: %s: nil *Memory: %w", op, ErrInvalidValue)
	}
	if err := m.check(); err != nil {
		return 0, fmt.Errorf("cuda: %s: %w", op, err)
	}
	t := reflect.TypeFor[T]()
	if !pointerFree(t) {
		return 0, fmt.Errorf("cuda: %s: element type %v holds Go pointers, which cannot live in device memory: %w", op, t, ErrInvalidValue)
	}
	n := count * int(t.Size())
	if n > m.size {
		return 0, fmt.Errorf("cuda: %s: %d bytes (%d × %v) do not fit in %d bytes of device memory: %w", op, n, count, t, m.size, ErrInvalidValue)
	}
	return n, nil
}

func devCopyCheck(op string, dst, src *Memory, n int) error {
	if dst == nil || src == nil {
		return fmt.Errorf("cuda: %s: nil *Memory: %w", op, ErrInvalidValue)
	}
	if err := dst.check(); err != nil {
		return fmt.Errorf("cuda: %s destination: %w", op, err)
	}
	if err := src.check(); err != nil {
		return fmt.Errorf("cuda: %s source: %w", op, err)
	}
	if dst.dev != src.dev {
		return fmt.Errorf("cuda: %s between devices %d and %d is not supported: %w", op, src.dev.ordinal, dst.dev.ordinal, ErrInvalidValue)
	}
	if n < 0 || n > dst.size || n > src.size {
		return fmt.Errorf("cuda: %s of %d bytes from %d into %d bytes: %w", op, n, src.size, dst.size, ErrInvalidValue)
	}
	return nil
}

// Memset. The value is repeated over the whole Memory, which must be a
// multiple of the value's width and aligned to it. The plain forms are
// ordered on the default stream and return when the fill is queued.

// MemsetD8 sets every byte of m to v.
func (m *Memory) MemsetD8(v uint8) error { return m.memset(1, uint32(v), nil, false) }

// MemsetD16 sets every 16-bit word of m to v.
func (m *Memory) MemsetD16(v uint16) error { return m.memset(2, uint32(v), nil, false) }

// MemsetD32 sets every 32-bit word of m to v (math.Float32bits(f) fills
// with a float32).
func (m *Memory) MemsetD32(v uint32) error { return m.memset(4, v, nil, false) }

// MemsetD8Async queues MemsetD8 on stream s.
func (m *Memory) MemsetD8Async(v uint8, s *Stream) error { return m.memset(1, uint32(v), s, true) }

// MemsetD16Async queues MemsetD16 on stream s.
func (m *Memory) MemsetD16Async(v uint16, s *Stream) error { return m.memset(2, uint32(v), s, true) }

// MemsetD32Async queues MemsetD32 on stream s.
func (m *Memory) MemsetD32Async(v uint32, s *Stream) error { return m.memset(4, v, s, true) }

func (m *Memory) memset(width int, v uint32, s *Stream, async bool) error {
	if m == nil {
		return fmt.Errorf("cuda: Memset of a nil *Memory: %w", ErrInvalidValue)
	}
	if err := m.check(); err != nil {
		return err
	}
	if m.size%width != 0 || int(m.ptr)%width != 0 {
		return fmt.Errorf("cuda: MemsetD%d: %d bytes at %#x are not a whole number of aligned %d-byte words: %w",
			8*width, m.size, uint64(m.ptr), width, ErrInvalidValue)
	}
	if m.size == 0 {
		return nil
	}
	d := m.dev
	count := uintptr(m.size / width)
	var fn uintptr
	var name string
	if async {
		var err error
		if s, err = d.streamOrDefault(s); err != nil {
			return err
		}
		fn, name = [...]uintptr{d.api.cuMemsetD8Async, d.api.cuMemsetD16Async, 0, d.api.cuMemsetD32Async}[width-1],
			fmt.Sprintf("cuMemsetD%dAsync", 8*width)
		op := traceOp(MemsetOp, d, s, m.size)
		r := d.call(fn, uintptr(m.ptr), uintptr(v), count, s.handle)
		op.end(r)
		return d.err(name, r)
	}
	fn, name = [...]uintptr{d.api.cuMemsetD8, d.api.cuMemsetD16, 0, d.api.cuMemsetD32}[width-1],
		fmt.Sprintf("cuMemsetD%d_v2", 8*width)
	op := traceOp(MemsetOp, d, nil, m.size)
	r := d.call(fn, uintptr(m.ptr), uintptr(v), count)
	op.end(r)
	return d.err(name, r)
}

// Raw-pointer copies for Function.Call (the host side is Go memory that
// the caller keeps alive).

func (d *Device) copyHtoDAsync(dst DevicePtr, src unsafe.Pointer, n int, s *Stream) error {
	op := traceOp(CopyHtoDOp, d, s, n)
	r := d.call(d.api.cuMemcpyHtoDAsync, uintptr(dst), uintptr(src), uintptr(n), s.handle)
	op.end(r)
	return d.err("cuMemcpyHtoDAsync_v2", r)
}

func (d *Device) copyDtoHAsync(dst unsafe.Pointer, src DevicePtr, n int, s *Stream) error {
	op := traceOp(CopyDtoHOp, d, s, n)
	r := d.call(d.api.cuMemcpyDtoHAsync, uintptr(dst), uintptr(src), uintptr(n), s.handle)
	op.end(r)
	return d.err("cuMemcpyDtoHAsync_v2", r)
}
