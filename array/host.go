package array

import (
	"runtime"

	"github.com/gocu-dev/gocu/array/internal/backend"
	"github.com/gocu-dev/gocu/internal/syncdebug"
	"github.com/gocu-dev/gocu/lowp"
)

// hostData evaluates the array and copies it, in row-major order, into a
// new host slice of its dtype. It waits for the device.
func (a *Array) hostData(op string) (any, error) {
	defer runtime.KeepAlive(a)
	s, err := a.force(op)
	if err != nil {
		return nil, err
	}
	if a.dt.IsComplex() {
		return nil, errorf(op, ErrDType, "%v values have no Go slice type here: read them with ToComplex", a.dt)
	}
	if a.dev.gpu != nil && syncdebug.On() {
		if err := syncdebug.Report(syncdebug.Read, op); err != nil {
			return nil, &Error{Op: op, Kind: ErrHiddenSync, Msg: "refused to wait for the device", Cause: err}
		}
	}
	n := backend.Size(a.shape)
	if a.dev.gpu != nil {
		// A GPU array may be larger than what the host can hold.
		if err := checkHostAlloc(op, a.dt, a.shape); err != nil {
			return nil, err
		}
	}
	host := makeHost(a.dt, n)
	buf, off := s.st.buf, s.lay.Offset
	if !s.lay.IsContiguous() {
		tmp, err := a.dev.alloc(op, a.dt, a.shape)
		if err != nil {
			return nil, err
		}
		defer tmp.release()
		lay := backend.Contiguous(a.shape)
		if err := a.dev.evalInto(leafExpr(s, a.dt), a.shape, backend.Operand{Buf: tmp.buf, Layout: lay}); err != nil {
			return nil, deviceErr(op, err)
		}
		buf, off = tmp.buf, 0
	}
	if n > 0 {
		if err := a.dev.be.Read(host, buf, off); err != nil {
			return nil, a.stickIndexErr(deviceErr(op, err))
		}
	} else if err := a.dev.be.Sync(); err != nil {
		return nil, a.stickIndexErr(deviceErr(op, err))
	}
	return host, nil
}

func makeHost(dt DType, n int) any {
	switch dt {
	case Bool:
		return make([]bool, n)
	case Uint8:
		return make([]uint8, n)
	case Int32:
		return make([]int32, n)
	case Int64:
		return make([]int64, n)
	case Float32:
		return make([]float32, n)
	case Int8:
		return make([]int8, n)
	case Int16:
		return make([]int16, n)
	case Uint16:
		return make([]uint16, n)
	case Uint32:
		return make([]uint32, n)
	case Uint64:
		return make([]uint64, n)
	case Float16:
		return make([]lowp.Float16, n)
	case BFloat16:
		return make([]lowp.BFloat16, n)
	case Float8E4M3:
		return make([]lowp.Float8E4M3, n)
	case Float8E5M2:
		return make([]lowp.Float8E5M2, n)
	}
	return make([]float64, n)
}

// ToSlice returns the array's values in row-major order as a new []T,
// converted to T's dtype as AsType would. It waits for the device and
// reports the array's error.
func ToSlice[T Elem](a *Array) ([]T, error) { return toSlice[T](a, "ToSlice") }

// toSlice is ToSlice for operation op.
func toSlice[T Elem](a *Array, op string) ([]T, error) {
	dt := DTypeOf[T]()
	src := a
	if a != nil && a.err == nil && a.dt != dt && a.dt.Valid() {
		src = a.AsType(dt)
		defer src.Close()
	}
	h, err := src.hostData(op)
	if err != nil {
		return nil, err
	}
	if out, ok := h.([]T); ok {
		return out, nil // a new slice already: spare a second copy
	}
	base := h
	out := make([]T, backend.Size(src.shape))
	copyBase(dt, out, base)
	return out, nil
}

// copyBase copies a basic slice into a slice of a type with the same
// underlying element type.
func copyBase[T Elem](dt DType, dst []T, src any) {
	switch dt {
	case Bool:
		copy(baseSlice(dt, dst).([]bool), src.([]bool))
	case Uint8:
		copy(baseSlice(dt, dst).([]uint8), src.([]uint8))
	case Int32:
		copy(baseSlice(dt, dst).([]int32), src.([]int32))
	case Int64:
		copy(baseSlice(dt, dst).([]int64), src.([]int64))
	case Float32:
		copy(baseSlice(dt, dst).([]float32), src.([]float32))
	case Int8:
		copy(baseSlice(dt, dst).([]int8), src.([]int8))
	case Int16:
		copy(baseSlice(dt, dst).([]int16), src.([]int16))
	case Uint16:
		copy(baseSlice(dt, dst).([]uint16), src.([]uint16))
	case Uint32:
		copy(baseSlice(dt, dst).([]uint32), src.([]uint32))
	case Uint64:
		copy(baseSlice(dt, dst).([]uint64), src.([]uint64))
	case Float16:
		copy(baseSlice(dt, dst).([]lowp.Float16), src.([]lowp.Float16))
	case BFloat16:
		copy(baseSlice(dt, dst).([]lowp.BFloat16), src.([]lowp.BFloat16))
	case Float8E4M3:
		copy(baseSlice(dt, dst).([]lowp.Float8E4M3), src.([]lowp.Float8E4M3))
	case Float8E5M2:
		copy(baseSlice(dt, dst).([]lowp.Float8E5M2), src.([]lowp.Float8E5M2))
	default:
		copy(baseSlice(dt, dst).([]float64), src.([]float64))
	}
}

// Float32s returns the values as []float32 (see ToSlice).
func (a *Array) Float32s() ([]float32, error) { return ToSlice[float32](a) }

// Float64s returns the values as []float64 (see ToSlice).
func (a *Array) Float64s() ([]float64, error) { return ToSlice[float64](a) }

// Int32s returns the values as []int32 (see ToSlice).
func (a *Array) Int32s() ([]int32, error) { return ToSlice[int32](a) }

// Int64s returns the values as []int64 (see ToSlice).
func (a *Array) Int64s() ([]int64, error) { return ToSlice[int64](a) }

// Uint8s returns the values as []uint8 (see ToSlice).
func (a *Array) Uint8s() ([]uint8, error) { return ToSlice[uint8](a) }

// Bools returns the values as []bool (see ToSlice).
func (a *Array) Bools() ([]bool, error) { return ToSlice[bool](a) }

// Int8s returns the values as []int8 (see ToSlice; floats saturate).
func (a *Array) Int8s() ([]int8, error) { return ToSlice[int8](a) }

// ItemOf returns the single element of a one-element array as T.
func ItemOf[T Elem](a *Array) (T, error) {
	var zero T
	if _, err := a.use("Item"); err != nil {
		return zero, err
	}
	if backend.Size(a.shape) != 1 {
		return zero, errorf("Item", ErrShape, "can only convert an array of size 1 to a scalar, not shape %s", shapeString(a.shape))
	}
	v, err := toSlice[T](a, "Item")
	if err != nil {
		return zero, err
	}
	return v[0], nil
}

// Item returns the single element of a one-element array as a float64.
func (a *Array) Item() (float64, error) { return ItemOf[float64](a) }
