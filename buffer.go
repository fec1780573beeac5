package gocu

import (
	"errors"
	"fmt"
	"strings"
	"unsafe"

	"github.com/gocu-dev/gocu/cuda"
	"github.com/gocu-dev/gocu/internal/hostmem"
	"github.com/gocu-dev/gocu/internal/syncdebug"
)

// Buffer is n elements of type T in a device's memory: GPU memory on a CUDA
// device, a Go slice on the CPU and the simulator. Kernels take Buffers as
// arguments. An array of package array is viewed as a Buffer without a
// copy by array.AsBuffer, and a Buffer as an array by array.FromBuffer.
//
// Like GPU memory, a new buffer's contents are undefined: on the simulator
// it is filled with 0xFF bytes (NaN for floats, -1 for signed integers) so
// that a kernel reading memory nothing wrote shows it at once.
//
// Free releases the memory; a Buffer dropped without Free is reclaimed by
// the garbage collector only as a backstop. Any use after Free returns
// ErrFreed.
type Buffer[T any] struct {
	dev   *Device
	mem   *cuda.Memory // CUDA
	host  []T          // CPU and Sim
	n     int
	view  bool
	freed bool
	bind  *binding[T] // In, Out, InOut

	err    error  // a buffer that stands for something that failed (see Failed)
	onFree func() // Wrap: what Free calls instead of freeing the memory
}

// ErrFreed is returned for a Buffer used after Free.
var ErrFreed = errors.New("gocu: buffer used after Free")

// Alloc returns a buffer of n elements of T on d, with undefined contents.
// On the CPU and the simulator a request larger than the machine's memory
// is an error matching cuda.ErrOutOfMemory, as on a GPU.
func Alloc[T any](d *Device, n int) (*Buffer[T], error) {
	if n < 0 {
		return nil, fmt.Errorf("gocu: Alloc of %d elements", n)
	}
	var zero T
	size := int(unsafe.Sizeof(zero))
	if size == 0 {
		return nil, fmt.Errorf("gocu: Alloc of zero-size %T", zero)
	}
	if d == nil || d.kind == 0 {
		return nil, fmt.Errorf("gocu: Alloc on a nil or zero Device: use gocu.Default or gocu.Open")
	}
	if n > (1<<62)/size {
		return nil, fmt.Errorf("gocu: Alloc of %d elements of %T (%d bytes each) overflows", n, zero, size)
	}
	b := &Buffer[T]{dev: d, n: n}
	switch d.kind {
	case Sim, CPU:
		// Go's runtime ends the program on a failed mmap: refuse first.
		if err := hostmem.Check(n, size, fmt.Sprintf("%T", zero)); err != nil {
			return nil, fmt.Errorf("gocu: Alloc on %v: %w", d, hostOOM{err})
		}
		b.host = alignedSlice[T](n)
		if d.kind == Sim {
			poison(b.host)
		}
	case CUDA:
		m, err := d.gpu.AllocOn(d.stream.s, n*size)
		if err != nil {
			return nil, err
		}
		b.mem = m
	}
	return b, nil
}

// hostOOM is a host allocation refused as too large; it matches
// cuda.ErrOutOfMemory, as a GPU's does, without printing the CUDA name.
type hostOOM struct{ err error }

func (e hostOOM) Error() string   { return e.err.Error() }
func (e hostOOM) Unwrap() []error { return []error{e.err, cuda.ErrOutOfMemory} }

// Wrap returns a buffer of n elements over device memory that something
// else owns, m on a GPU, without a copy: Free calls release (which may be
// nil) instead of freeing m. Package array views its arrays as buffers this
// way.
func Wrap[T any](d *Device, m *cuda.Memory, n int, release func()) (*Buffer[T], error) {
	var zero T
	switch {
	case d == nil || d.kind != CUDA:
		return nil, fmt.Errorf("gocu: Wrap of device memory on %v, which is not a GPU", d)
	case m == nil:
		return nil, fmt.Errorf("gocu: Wrap of nil memory")
	case n < 0 || n > m.Size()/max(int(unsafe.Sizeof(zero)), 1):
		return nil, fmt.Errorf("gocu: Wrap of %d elements of %T over %d bytes", n, zero, m.Size())
	case m.Device() != d.gpu:
		return nil, fmt.Errorf("gocu: Wrap on %v of memory of another GPU", d)
	}
	return &Buffer[T]{dev: d, mem: m, n: n, onFree: release}, nil
}

// WrapSlice returns a buffer over the Go slice s on the CPU or the
// simulator, without a copy: kernels read and write s itself. Free calls
// release (which may be nil).
func WrapSlice[T any](d *Device, s []T, release func()) (*Buffer[T], error) {
	if d == nil || (d.kind != CPU && d.kind != Sim) {
		return nil, fmt.Errorf("gocu: WrapSlice of host memory on %v: only the CPU and the simulator run kernels on Go slices", d)
	}
	return &Buffer[T]{dev: d, host: s[:len(s):len(s)], n: len(s), onFree: release}, nil
}

// Failed returns a buffer that stands for a value that could not be made:
// every use of it, a launch that takes it included, returns err. Package
// array gives one for an array whose error is set, so that the error
// carries over to the launch.
func Failed[T any](err error) *Buffer[T] {
	if err == nil {
		err = errors.New("gocu: Failed buffer without an error")
	}
	return &Buffer[T]{err: err}
}

// Err returns the error a Failed buffer stands for, or nil.
func (b *Buffer[T]) Err() error {
	if b == nil {
		return nil
	}
	return b.err
}

// FromSlice returns a buffer on d holding a copy of src.
func FromSlice[T any](d *Device, src []T) (*Buffer[T], error) {
	if d != nil && d.kind == CUDA && syncdebug.On() {
		if err := syncdebug.Report(syncdebug.Copy, "FromSlice"); err != nil {
			return nil, err
		}
	}
	b, err := Alloc[T](d, len(src))
	if err != nil {
		return nil, err
	}
	if err := b.copyFrom(src); err != nil {
		b.Free()
		return nil, err
	}
	return b, nil
}

// simAlign is the alignment of simulator buffers: cudaMalloc's, so that
// kernel.Reinterpret to wide vector types behaves as it does on the GPU.
const simAlign = 256

// alignedSlice returns n elements of T whose first element is simAlign-byte
// aligned when the element size allows it.
func alignedSlice[T any](n int) []T {
	var zero T
	size := int(unsafe.Sizeof(zero))
	extra := (simAlign + size - 1) / size
	s := make([]T, n+extra)
	base := uintptr(unsafe.Pointer(unsafe.SliceData(s)))
	for k := 0; k <= extra; k++ {
		if (base+uintptr(k*size))%simAlign == 0 {
			return s[k : k+n : k+n]
		}
	}
	return s[:n:n]
}

func poison[T any](s []T) {
	if len(s) == 0 {
		return
	}
	var zero T
	bytes := unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(s))), len(s)*int(unsafe.Sizeof(zero)))
	for i := range bytes {
		bytes[i] = 0xFF
	}
}

// Len returns the number of elements.
func (b *Buffer[T]) Len() int { return b.n }

// Device returns the device the buffer lives on (nil for an In, Out or
// InOut buffer before its first launch).
func (b *Buffer[T]) Device() *Device { return b.dev }

func (b *Buffer[T]) check(op string) error {
	if b == nil {
		return fmt.Errorf("gocu: %s on a nil *Buffer", op)
	}
	if b.err != nil {
		return b.err
	}
	if b.freed || (b.mem != nil && b.mem.Freed()) {
		return &opError{op: op, err: ErrFreed}
	}
	if b.dev == nil {
		return fmt.Errorf("gocu: %s: the %s buffer is bound to a device only during a launch", op, b.bind.dir)
	}
	return nil
}

// CopyFrom copies src into the start of b; len(src) must not exceed Len.
func (b *Buffer[T]) CopyFrom(src []T) error {
	if err := b.check("CopyFrom"); err != nil {
		return err
	}
	if len(src) > b.n {
		return fmt.Errorf("gocu: CopyFrom of %d elements into a buffer of %d", len(src), b.n)
	}
	if b.dev.kind == CUDA && syncdebug.On() {
		if err := syncdebug.Report(syncdebug.Copy, "CopyFrom"); err != nil {
			return err
		}
	}
	return b.copyFrom(src)
}

// copyFrom is CopyFrom after its checks, without reporting the wait.
func (b *Buffer[T]) copyFrom(src []T) error {
	if b.dev.kind != CUDA {
		copy(b.host, src)
		return nil
	}
	// On the device's stream, after the work queued there, and waited for:
	// src may be pinned memory, which the driver reads asynchronously.
	s := b.dev.stream.s
	if err := cuda.CopyHtoDAsync(b.mem, src, s); err != nil {
		return err
	}
	return s.Synchronize()
}

// CopyTo copies the start of b into dst; len(dst) must not exceed Len. It
// waits for the work queued before it on the device's default stream.
func (b *Buffer[T]) CopyTo(dst []T) error {
	if err := b.check("CopyTo"); err != nil {
		return err
	}
	if len(dst) > b.n {
		return fmt.Errorf("gocu: CopyTo of %d elements from a buffer of %d", len(dst), b.n)
	}
	if b.dev.kind == CUDA && syncdebug.On() {
		if err := syncdebug.Report(syncdebug.Copy, "CopyTo"); err != nil {
			return err
		}
	}
	return b.copyTo(dst)
}

// copyTo is CopyTo after its checks, without reporting the wait.
func (b *Buffer[T]) copyTo(dst []T) error {
	if b.dev.kind != CUDA {
		copy(dst, b.host)
		return nil
	}
	s := b.dev.stream.s
	if err := cuda.CopyDtoHAsync(dst, b.mem, s); err != nil {
		return err
	}
	return s.Synchronize()
}

// CopyFromAsync queues a copy of src into b on stream s. src must stay
// unchanged until the stream reaches the copy when it is pinned memory.
func (b *Buffer[T]) CopyFromAsync(src []T, s *Stream) error {
	if err := b.check("CopyFromAsync"); err != nil {
		return err
	}
	if len(src) > b.n {
		return fmt.Errorf("gocu: CopyFromAsync of %d elements into a buffer of %d", len(src), b.n)
	}
	if b.dev.kind != CUDA {
		copy(b.host, src)
		return nil
	}
	cs, err := b.dev.CUDAStream(s)
	if err != nil {
		return err
	}
	return cuda.CopyHtoDAsync(b.mem, src, cs)
}

// CopyToAsync queues a copy of b into dst on stream s; dst holds the data
// once the stream has reached the copy.
func (b *Buffer[T]) CopyToAsync(dst []T, s *Stream) error {
	if err := b.check("CopyToAsync"); err != nil {
		return err
	}
	if len(dst) > b.n {
		return fmt.Errorf("gocu: CopyToAsync of %d elements from a buffer of %d", len(dst), b.n)
	}
	if b.dev.kind != CUDA {
		copy(dst, b.host)
		return nil
	}
	cs, err := b.dev.CUDAStream(s)
	if err != nil {
		return err
	}
	// Into pageable memory the driver returns only when the copy is done.
	if syncdebug.On() && len(dst) > 0 && !cuda.Pinned(dst) {
		if err := syncdebug.Report(syncdebug.PageableCopy, "CopyToAsync"); err != nil {
			return err
		}
	}
	return cuda.CopyDtoHAsync(dst, b.mem, cs)
}

// ToSlice returns a new host slice holding the buffer's contents.
func (b *Buffer[T]) ToSlice() ([]T, error) {
	if err := b.check("ToSlice"); err != nil {
		return nil, err
	}
	if b.dev.kind == CUDA && syncdebug.On() {
		if err := syncdebug.Report(syncdebug.Copy, "ToSlice"); err != nil {
			return nil, err
		}
	}
	s := make([]T, b.n)
	if err := b.copyTo(s); err != nil {
		return nil, err
	}
	return s, nil
}

// Zero sets every element's bytes to zero.
func (b *Buffer[T]) Zero() error {
	if err := b.check("Zero"); err != nil {
		return err
	}
	if b.dev.kind != CUDA {
		clear(b.host)
		return nil
	}
	return b.mem.MemsetD8Async(0, b.dev.stream.s)
}

// Slice returns a view of elements [i, j) of b, sharing its memory. Freeing
// a view does nothing; the view is unusable once b is freed.
func (b *Buffer[T]) Slice(i, j int) (*Buffer[T], error) {
	if err := b.check("Slice"); err != nil {
		return nil, err
	}
	if i < 0 || j < i || j > b.n {
		return nil, fmt.Errorf("gocu: Slice [%d:%d] of a buffer of %d elements", i, j, b.n)
	}
	v := &Buffer[T]{dev: b.dev, n: j - i, view: true}
	if b.dev.kind != CUDA {
		v.host = b.host[i:j:j]
		return v, nil
	}
	var zero T
	size := int(unsafe.Sizeof(zero))
	m, err := b.mem.View(i*size, (j-i)*size)
	if err != nil {
		return nil, err
	}
	v.mem = m
	return v, nil
}

// Free releases the buffer's memory. Freeing a view does nothing; freeing
// twice returns ErrFreed.
func (b *Buffer[T]) Free() error {
	if b == nil {
		return nil
	}
	if b.freed {
		return &opError{op: "Free", err: ErrFreed}
	}
	if b.view || b.err != nil {
		return nil
	}
	b.freed = true
	b.host = nil
	if rel := b.onFree; rel != nil {
		b.onFree, b.mem = nil, nil
		rel()
		return nil
	}
	if b.mem != nil {
		return b.mem.Free()
	}
	return nil
}

// DevicePointer returns the buffer's device address. It fails on the
// simulator.
func (b *Buffer[T]) DevicePointer() (cuda.DevicePtr, error) {
	m, err := b.memory()
	if err != nil {
		return 0, err
	}
	return m.Ptr(), nil
}

// memoryArg is how a Buffer of any element type travels as a CUDA kernel
// argument: as its *cuda.Memory.
type memoryArg interface {
	memory() (*cuda.Memory, error)
}

func (b *Buffer[T]) memory() (*cuda.Memory, error) {
	if err := b.check("launch"); err != nil {
		return nil, err
	}
	if b.mem == nil {
		return nil, fmt.Errorf("gocu: %v has no device memory: the CPU and the simulator run kernels written in Go only", b)
	}
	return b.mem, nil
}

// Memory returns the device memory behind b, or nil on the CPU and the
// simulator.
func (b *Buffer[T]) Memory() *cuda.Memory { return b.mem }

// Host returns the memory of a buffer on the CPU or the simulator: the
// slice kernels running on the simulator read and write. It is nil on a
// GPU.
func (b *Buffer[T]) Host() []T { return b.host }

// String describes the buffer, as "Buffer[float32](1024) on cuda:0 (...)".
func (b *Buffer[T]) String() string {
	var zero T
	where := "unbound"
	if b.dev != nil {
		where = b.dev.String()
	}
	return fmt.Sprintf("Buffer[%T](%d) on %s", zero, b.n, where)
}

// opError is the error err of the operation op, as "gocu: op: message":
// the "gocu: " that starts err's own message is said once.
type opError struct {
	op  string
	err error
}

func (e *opError) Error() string {
	return "gocu: " + e.op + ": " + strings.TrimPrefix(e.err.Error(), "gocu: ")
}

func (e *opError) Unwrap() error { return e.err }
