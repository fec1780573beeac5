package array

import (
	"runtime"
	"sync"
	"unsafe"

	"github.com/gocu-dev/gocu"
	"github.com/gocu-dev/gocu/array/internal/backend"
	"github.com/gocu-dev/gocu/array/internal/cpu"
	"github.com/gocu-dev/gocu/lowp"
)

// AsBuffer returns a's memory as a *gocu.Buffer[T], without a copy, to pass
// to a kernel: a launcher written by gocu gen, or a gocu.Kernel. T must be
// a's element type (float32 for a Float32 array, ...). A pending expression
// is evaluated first (queued, not waited for). The buffer shares a's
// memory: a kernel writing it changes a and every view of it.
//
// Only contiguous arrays have a buffer: a strided view (a transpose, a
// slice with a step, a broadcast) is refused, because a kernel indexes a
// []T slice densely; pass x.Contiguous() (a copy when needed) instead. A
// contiguous view with an offset (rows of a matrix) is fine.
//
// When a cannot be given, the result is a gocu.Failed buffer: the launch
// that takes it returns the error (a's own error if it has one). The
// buffer keeps a's memory alive until it is freed or unreachable; Free
// releases it and leaves the array alone.
//
// On a GPU the launch goes on the device's default stream, where the
// arrays queue their operations too, so kernel and array operations run in
// the order they are called, without a host synchronisation. A launch on
// another stream (Config.Stream) must be ordered by the caller.
func AsBuffer[T Elem](a *Array) *gocu.Buffer[T] {
	b, err := asBuffer[T](a, true)
	if err != nil {
		return gocu.Failed[T](err)
	}
	return b
}

// asBuffer makes the buffer view of a; keep takes a reference on a's
// storage for the buffer's lifetime.
func asBuffer[T Elem](a *Array, keep bool) (*gocu.Buffer[T], error) {
	const op = "AsBuffer"
	s, err := a.force(op)
	if err != nil {
		return nil, err
	}
	if want := DTypeOf[T](); want != a.dt {
		var z T
		return nil, errorf(op, ErrDType, "a %v array is not a buffer of %T: use AsBuffer[%s] or AsType", a.dt, z, goName(a.dt))
	}
	if !s.lay.IsContiguous() {
		return nil, errorf(op, ErrValue, "the view of shape %s and strides %s is not contiguous: a kernel indexes its memory densely; pass x.Contiguous(), a copy when needed", shapeString(s.lay.Shape), shapeString(s.lay.Strides))
	}
	return wrapSpan[T](op, a, s, s.lay.Offset, s.lay.Size(), keep)
}

// wrapSpan makes a buffer of elements [off, off+n) of the storage of a
// (snapshot s); keep takes a reference on it for the buffer's lifetime.
func wrapSpan[T Elem](op string, a *Array, s snap, off, n int, keep bool) (*gocu.Buffer[T], error) {
	dev := a.dev.dev
	if dev == nil {
		return nil, errorf(op, ErrDevice, "the array is on no gocu device")
	}
	release := func() {}
	if keep {
		s.st.retain()
		var once sync.Once
		st := s.st
		release = func() { once.Do(st.release) }
	}
	var buf *gocu.Buffer[T]
	var err error
	if g := a.dev.gpu; g != nil {
		gb, err := g.Buffer(s.st.buf)
		if err != nil {
			release()
			return nil, deviceErr(op, err)
		}
		if n == 0 || gb.Memory() == nil {
			release()
			return gocu.Alloc[T](dev, 0)
		}
		es := a.dt.Size()
		m, err := gb.Memory().View(off*es, n*es)
		if err == nil {
			buf, err = gocu.Wrap[T](dev, m, n, release)
		}
		if err != nil {
			release()
			return nil, deviceErr(op, err)
		}
	} else {
		cb, ok := s.st.buf.(*cpu.Buffer)
		if !ok {
			release()
			return nil, errorf(op, ErrDevice, "the array's memory is not host memory")
		}
		host := hostSlice[T](cb.Slice(), off, n)
		buf, err = gocu.WrapSlice(dev, host, release)
		if err != nil {
			release()
			return nil, deviceErr(op, err)
		}
	}
	if keep {
		runtime.AddCleanup(buf, func(f func()) { f() }, release)
	}
	return buf, nil
}

// hostSlice reinterprets elements [off, off+n) of a typed CPU slice as []T
// (T may be a named type of the same element type).
func hostSlice[T Elem](base any, off, n int) []T {
	var p unsafe.Pointer
	switch v := base.(type) {
	case []float32:
		p = unsafe.Pointer(unsafe.SliceData(v[off : off+n]))
	case []float64:
		p = unsafe.Pointer(unsafe.SliceData(v[off : off+n]))
	case []int32:
		p = unsafe.Pointer(unsafe.SliceData(v[off : off+n]))
	case []int64:
		p = unsafe.Pointer(unsafe.SliceData(v[off : off+n]))
	case []uint8:
		p = unsafe.Pointer(unsafe.SliceData(v[off : off+n]))
	case []bool:
		p = unsafe.Pointer(unsafe.SliceData(v[off : off+n]))
	case []int8:
		p = unsafe.Pointer(unsafe.SliceData(v[off : off+n]))
	case []int16:
		p = unsafe.Pointer(unsafe.SliceData(v[off : off+n]))
	case []uint16:
		p = unsafe.Pointer(unsafe.SliceData(v[off : off+n]))
	case []uint32:
		p = unsafe.Pointer(unsafe.SliceData(v[off : off+n]))
	case []uint64:
		p = unsafe.Pointer(unsafe.SliceData(v[off : off+n]))
	case []lowp.Float16:
		p = unsafe.Pointer(unsafe.SliceData(v[off : off+n]))
	case []lowp.BFloat16:
		p = unsafe.Pointer(unsafe.SliceData(v[off : off+n]))
	case []lowp.Float8E4M3:
		p = unsafe.Pointer(unsafe.SliceData(v[off : off+n]))
	case []lowp.Float8E5M2:
		p = unsafe.Pointer(unsafe.SliceData(v[off : off+n]))
	}
	return unsafe.Slice((*T)(p), n)
}

// goName is the Go element type of a dtype, for messages.
func goName(dt DType) string {
	switch dt {
	case Bool:
		return "bool"
	case Uint8:
		return "uint8"
	case Int32:
		return "int32"
	case Int64:
		return "int64"
	case Float32:
		return "float32"
	case Float64:
		return "float64"
	case Int8:
		return "int8"
	case Int16:
		return "int16"
	case Uint16:
		return "uint16"
	case Uint32:
		return "uint32"
	case Uint64:
		return "uint64"
	case Float16:
		return "lowp.Float16"
	case BFloat16:
		return "lowp.BFloat16"
	case Float8E4M3:
		return "lowp.Float8E4M3"
	case Float8E5M2:
		return "lowp.Float8E5M2"
	}
	return dt.String()
}

// KernelArg implements gocu.Arg, so that gocu.Kernel.Launch takes an array
// directly: the kernel receives a pointer to its first element. The array
// must be on d and contiguous (see AsBuffer). The array's memory is not
// kept alive beyond the call: keep the array until the kernel has run, as
// any operand of a queued operation (an array freed earlier returns its
// memory on the same stream, after the kernel, so this only matters for a
// launch on another stream).
func (a *Array) KernelArg(d *gocu.Device) (any, error) {
	if a == nil {
		return nil, errorf("KernelArg", ErrValue, "nil array")
	}
	if err := a.Err(); err != nil {
		return nil, err
	}
	if a.dev.dev != d {
		return nil, errorf("KernelArg", ErrDevice, "the array is on %v, the launch on %v: move it with To", a.dev, d)
	}
	switch a.dt {
	case Bool:
		return asBuffer[bool](a, false)
	case Uint8:
		return asBuffer[uint8](a, false)
	case Int32:
		return asBuffer[int32](a, false)
	case Int64:
		return asBuffer[int64](a, false)
	case Float32:
		return asBuffer[float32](a, false)
	case Float64:
		return asBuffer[float64](a, false)
	case Int8:
		return asBuffer[int8](a, false)
	case Int16:
		return asBuffer[int16](a, false)
	case Uint16:
		return asBuffer[uint16](a, false)
	case Uint32:
		return asBuffer[uint32](a, false)
	case Uint64:
		return asBuffer[uint64](a, false)
	case Float16:
		return asBuffer[lowp.Float16](a, false)
	case BFloat16:
		return asBuffer[lowp.BFloat16](a, false)
	case Float8E4M3:
		return asBuffer[lowp.Float8E4M3](a, false)
	case Float8E5M2:
		return asBuffer[lowp.Float8E5M2](a, false)
	}
	return nil, errorf("KernelArg", ErrDType, "no kernel argument for dtype %v", a.dt)
}

// FromBuffer views a gocu.Buffer as an array of the given shape (1-D of
// the buffer's length without one), without a copy: a kernel writes the
// buffer, array operations read the result. The shape's size must equal
// b.Len(). The array shares b's memory: b must not be freed while the
// array (or a view of it, or a pending expression that reads it) is in
// use; the array keeps b reachable so that the garbage collector does not
// free it.
func FromBuffer[T Elem](b *gocu.Buffer[T], shape ...int) *Array {
	const op = "FromBuffer"
	switch {
	case b == nil:
		return failed(errorf(op, ErrValue, "nil *gocu.Buffer"))
	case b.Err() != nil:
		return failed(b.Err())
	case b.Device() == nil:
		return failed(errorf(op, ErrValue, "%v is bound to a device only during a launch (In, Out, InOut)", b))
	}
	if len(shape) == 0 {
		shape = []int{b.Len()}
	}
	if err := checkShape(op, DTypeOf[T](), shape); err != nil {
		return failed(err)
	}
	if n := backend.Size(shape); n != b.Len() {
		return failed(errorf(op, ErrShape, "shape %s has %d elements, the buffer %d", shapeString(shape), n, b.Len()))
	}
	d := On(b.Device())
	if err := d.check(op); err != nil {
		return failed(err)
	}
	dt := DTypeOf[T]()
	if !dt.Valid() {
		var z T
		return failed(errorf(op, ErrDType, "%T is not an array element type", z))
	}
	var buf backend.Buffer
	if d.gpu != nil {
		if b.Len() == 0 {
			return d.Empty(dt, shape...)
		}
		m := b.Memory()
		if m == nil || m.Freed() {
			return failed(errorf(op, ErrClosed, "%v was freed", b))
		}
		g, err := d.gpu.Wrap(m, dt.be(), b.Len())
		if err != nil {
			return failed(deviceErr(op, err))
		}
		buf = g
	} else {
		host := b.Host()
		if host == nil && b.Len() > 0 {
			return failed(errorf(op, ErrClosed, "%v was freed", b))
		}
		c, err := cpu.Wrap(baseSlice(dt, host))
		if err != nil {
			return failed(deviceErr(op, err))
		}
		buf = c
	}
	return d.wrap(d.newStorage(buf, b), backend.Contiguous(shape), dt)
}

// check that an array is a gocu.Arg.
var _ gocu.Arg = (*Array)(nil)
