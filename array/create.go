package array

import (
	"github.com/gocu-dev/gocu"
	"github.com/gocu-dev/gocu/array/internal/cpu"
	"math"
	"runtime"
	"unsafe"

	"github.com/gocu-dev/gocu/array/internal/backend"
	"github.com/gocu-dev/gocu/lowp"
)

// Constructors exist as methods of Device and, for the default device, as
// package functions. Constant arrays (Zeros, Ones, Full) and index-based
// ones (Arange, Linspace, Eye) are lazy expressions like elementwise
// results: they take memory only once evaluated, and fuse into what uses
// them.

func checkDType(op string, dt DType) error {
	if !dt.Valid() {
		return errorf(op, ErrDType, "invalid dtype %v", dt)
	}
	return nil
}

// Full returns an array of the shape filled with value (a Go bool or
// number, converted to dt; an integer that does not fit dt is an error).
func (m *Maker) Full(dt DType, value any, shape ...int) *Array {
	const op = "Full"
	if err := m.check(op); err != nil {
		return failed(err)
	}
	if err := checkDType(op, dt); err != nil {
		return failed(err)
	}
	if err := checkShape(op, dt, shape); err != nil {
		return failed(err)
	}
	if dt.IsComplex() {
		return m.fullComplex(dt, value, shape)
	}
	s, ok, err := scalarOf(value)
	switch {
	case err != nil:
		return failed(errorf(op, ErrValue, "%v", err))
	case !ok:
		return failed(errorf(op, ErrDType, "unsupported value type %T", value))
	case !s.fits(dt):
		return failed(errorf(op, ErrValue, "Go integer %d is out of range for %v", s.i, dt))
	}
	return m.lazy(fullExpr(s.as(dt), append([]int(nil), shape...)))
}

// Zeros returns an array of zeros.
func (m *Maker) Zeros(dt DType, shape ...int) *Array { return m.Full(dt, 0, shape...) }

// Ones returns an array of ones.
func (m *Maker) Ones(dt DType, shape ...int) *Array { return m.Full(dt, 1, shape...) }

// Empty returns an array whose contents are unspecified (allocated at once,
// not initialised).
func (m *Maker) Empty(dt DType, shape ...int) *Array {
	const op = "Empty"
	if err := m.check(op); err != nil {
		return failed(err)
	}
	if err := checkDType(op, dt); err != nil {
		return failed(err)
	}
	if err := checkShape(op, dt, shape); err != nil {
		return failed(err)
	}
	st, err := m.alloc(op, dt, shape)
	if err != nil {
		return failed(err)
	}
	if m.poison {
		// The simulator's memory starts as 0xFF bytes, as its buffers do,
		// so that a kernel that leaves elements unwritten shows it (NaN).
		if cb, ok := st.buf.(*cpu.Buffer); ok {
			cb.Poison()
		}
	}
	return m.wrap(st, backend.Contiguous(shape), dt)
}

// Scalar returns a 0-d array holding v in its natural dtype (bool, int64
// for Go integers, float64 for Go floats).
func (m *Maker) Scalar(v any) *Array {
	switch v.(type) {
	case complex64:
		return m.Full(Complex64, v)
	case complex128:
		return m.Full(Complex128, v)
	}
	s, ok, err := scalarOf(v)
	switch {
	case err != nil:
		return failed(errorf("Scalar", ErrValue, "%v", err))
	case !ok:
		return failed(errorf("Scalar", ErrDType, "unsupported value type %T", v))
	}
	return m.Full(s.natural(), v)
}

// iotaExpr is the flat index as int64, over shape.
func iotaExpr(shape []int) *expr {
	return &expr{op: backend.OpIota, dt: Int64, shape: shape, nodes: 1, iota: true}
}

// Arange returns evenly spaced values in [start, stop): Arange(dt, stop),
// Arange(dt, start, stop) or Arange(dt, start, stop, step), as np.arange.
// Values are start + i*step computed in float64, then converted to dt; for
// an integer dtype with a whole start and step, in int64 and converted
// (wrapping as NumPy does: Arange(Int8, 125, 130) ends 127, -128, -127).
func (m *Maker) Arange(dt DType, args ...float64) *Array {
	const op = "Arange"
	if err := m.check(op); err != nil {
		return failed(err)
	}
	if err := checkDType(op, dt); err != nil {
		return failed(err)
	}
	if dt.IsComplex() {
		return m.Arange(dt.component(), args...).AsType(dt) // real values, as NumPy
	}
	start, stop, step := 0.0, 0.0, 1.0
	switch len(args) {
	case 1:
		stop = args[0]
	case 2:
		start, stop = args[0], args[1]
	case 3:
		start, stop, step = args[0], args[1], args[2]
	default:
		return failed(errorf(op, ErrValue, "want 1 to 3 arguments (stop | start, stop | start, stop, step), got %d", len(args)))
	}
	if step == 0 || math.IsNaN(step) || math.IsInf(step, 0) || math.IsNaN(start) || math.IsNaN(stop) || math.IsInf(start, 0) || math.IsInf(stop, 0) {
		return failed(errorf(op, ErrValue, "bad range start=%v stop=%v step=%v", start, stop, step))
	}
	f := math.Max(0, math.Ceil((stop-start)/step))
	if !(f < math.MaxInt/8) { // also NaN, from an overflowing quotient
		return failed(errorf(op, ErrValue, "array is too big: start=%v stop=%v step=%v gives %v values of %v, %v bytes",
			start, stop, step, f, dt, f*float64(dt.Size())))
	}
	shape := []int{int(f)}
	if err := checkShape(op, dt, shape); err != nil {
		return failed(err)
	}
	if dt.IsInt() && integral(start) && integral(step) {
		// In int64, as NumPy adds the step in the dtype: exact past 2^53,
		// and wrapping where the values leave a narrow dtype.
		e := node(backend.OpMul, Int64, shape, iotaExpr(shape), scalarExpr(backend.Scalar{DType: Int64.be(), I: int64(step)}))
		e = node(backend.OpAdd, Int64, shape, e, scalarExpr(backend.Scalar{DType: Int64.be(), I: int64(start)}))
		return m.lazy(castExpr(e, dt))
	}
	e := node(backend.OpCast, Float64, shape, iotaExpr(shape))
	e = node(backend.OpMul, Float64, shape, e, scalarExpr(backend.Scalar{DType: Float64.be(), F: step}))
	e = node(backend.OpAdd, Float64, shape, e, scalarExpr(backend.Scalar{DType: Float64.be(), F: start}))
	return m.lazy(castExpr(e, dt))
}

// integral reports whether v is a whole number that int64 holds.
func integral(v float64) bool {
	return v == math.Trunc(v) && v >= math.MinInt64 && v < math.MaxInt64
}

// Linspace returns num evenly spaced values from start to stop inclusive,
// as np.linspace (the last value is exactly stop).
func (m *Maker) Linspace(dt DType, start, stop float64, num int) *Array {
	const op = "Linspace"
	if err := m.check(op); err != nil {
		return failed(err)
	}
	if err := checkDType(op, dt); err != nil {
		return failed(err)
	}
	if dt.IsComplex() {
		return m.Linspace(dt.component(), start, stop, num).AsType(dt) // real values, as NumPy
	}
	if num < 0 {
		return failed(errorf(op, ErrValue, "number of samples %d is negative", num))
	}
	shape := []int{num}
	if err := checkShape(op, dt, shape); err != nil {
		return failed(err)
	}
	step := 0.0
	if num > 1 {
		step = (stop - start) / float64(num-1)
	}
	f := func(v float64) *expr { return scalarExpr(backend.Scalar{DType: Float64.be(), F: v}) }
	i := iotaExpr(shape)
	e := node(backend.OpCast, Float64, shape, i)
	e = node(backend.OpAdd, Float64, shape, node(backend.OpMul, Float64, shape, e, f(step)), f(start))
	if num > 1 {
		last := node(backend.OpEq, Bool, shape, i, scalarExpr(backend.Scalar{DType: Int64.be(), I: int64(num - 1)}))
		e = node(backend.OpWhere, Float64, shape, last, f(stop), e)
	}
	return m.lazy(castExpr(e, dt))
}

// Eye returns the n×n identity matrix.
func (m *Maker) Eye(dt DType, n int) *Array {
	const op = "Eye"
	if err := m.check(op); err != nil {
		return failed(err)
	}
	if err := checkDType(op, dt); err != nil {
		return failed(err)
	}
	if dt.IsComplex() {
		return m.Eye(dt.component(), n).AsType(dt) // real values, as NumPy
	}
	if n < 0 {
		return failed(errorf(op, ErrValue, "negative size %d", n))
	}
	shape := []int{n, n}
	if err := checkShape(op, dt, shape); err != nil {
		return failed(err)
	}
	mo := node(backend.OpMod, Int64, shape, iotaExpr(shape), scalarExpr(backend.Scalar{DType: Int64.be(), I: int64(n + 1)}))
	e := node(backend.OpEq, Bool, shape, mo, scalarExpr(backend.Scalar{DType: Int64.be()}))
	return m.lazy(castExpr(e, dt))
}

// FromSliceOn copies data into a new array on dev. With no shape the array
// is 1-D; otherwise the shape's size must equal len(data).
func FromSliceOn[T Elem](dev *gocu.Device, data []T, shape ...int) *Array {
	return fromSliceOn(On(dev), data, shape...)
}

func fromSliceOn[T Elem](d *Maker, data []T, shape ...int) *Array {
	const op = "FromSlice"
	if err := d.check(op); err != nil {
		return failed(err)
	}
	if len(shape) == 0 && data != nil {
		shape = []int{len(data)}
	} else if len(shape) == 0 {
		shape = []int{0}
	}
	dt := DTypeOf[T]()
	if !dt.Valid() {
		var z T
		return failed(errorf(op, ErrDType, "%T is not an array element type", z))
	}
	if err := checkShape(op, dt, shape); err != nil {
		return failed(err)
	}
	if n := backend.Size(shape); n != len(data) {
		return failed(errorf(op, ErrShape, "%d values cannot fill shape %s", len(data), shapeString(shape)))
	}
	st, err := d.alloc(op, dt, shape)
	if err != nil {
		return failed(err)
	}
	if len(data) > 0 {
		if err := d.be.Write(st.buf, 0, baseSlice(dt, data)); err != nil {
			st.release()
			return failed(deviceErr(op, err))
		}
	}
	runtime.KeepAlive(data)
	return d.wrap(st, backend.Contiguous(shape), dt)
}

// baseSlice reinterprets a slice of a type whose underlying type is a
// basic element type (e.g. type Celsius float32) as the basic slice.
func baseSlice[T Elem](dt DType, data []T) any {
	p := unsafe.Pointer(unsafe.SliceData(data))
	n := len(data)
	switch dt {
	case Bool:
		return unsafe.Slice((*bool)(p), n)
	case Uint8:
		return unsafe.Slice((*uint8)(p), n)
	case Int32:
		return unsafe.Slice((*int32)(p), n)
	case Int64:
		return unsafe.Slice((*int64)(p), n)
	case Float32:
		return unsafe.Slice((*float32)(p), n)
	case Int8:
		return unsafe.Slice((*int8)(p), n)
	case Int16:
		return unsafe.Slice((*int16)(p), n)
	case Uint16:
		return unsafe.Slice((*uint16)(p), n)
	case Uint32:
		return unsafe.Slice((*uint32)(p), n)
	case Uint64:
		return unsafe.Slice((*uint64)(p), n)
	case Float16:
		return unsafe.Slice((*lowp.Float16)(p), n)
	case BFloat16:
		return unsafe.Slice((*lowp.BFloat16)(p), n)
	case Float8E4M3:
		return unsafe.Slice((*lowp.Float8E4M3)(p), n)
	case Float8E5M2:
		return unsafe.Slice((*lowp.Float8E5M2)(p), n)
	}
	return unsafe.Slice((*float64)(p), n)
}

// FromSlice copies data into a new array on the default device.
func FromSlice[T Elem](data []T, shape ...int) *Array { return fromSliceOn(Default(), data, shape...) }

// Full is Default().Full.
func Full(dt DType, value any, shape ...int) *Array { return Default().Full(dt, value, shape...) }

// Zeros is Default().Zeros.
func Zeros(dt DType, shape ...int) *Array { return Default().Zeros(dt, shape...) }

// Ones is Default().Ones.
func Ones(dt DType, shape ...int) *Array { return Default().Ones(dt, shape...) }

// Empty is Default().Empty.
func Empty(dt DType, shape ...int) *Array { return Default().Empty(dt, shape...) }

// Scalar is Default().Scalar.
func Scalar(v any) *Array { return Default().Scalar(v) }

// Arange is Default().Arange.
func Arange(dt DType, args ...float64) *Array { return Default().Arange(dt, args...) }

// Linspace is Default().Linspace.
func Linspace(dt DType, start, stop float64, num int) *Array {
	return Default().Linspace(dt, start, stop, num)
}

// Eye is Default().Eye.
func Eye(dt DType, n int) *Array { return Default().Eye(dt, n) }
