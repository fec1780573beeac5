package array

import (
	"fmt"
	"math"
	"reflect"

	"github.com/gocu-dev/gocu/array/internal/backend"
)

// DType is an element type.
type DType = backend.DType

// The element types.
const (
	Bool    = backend.Bool
	Uint8   = backend.Uint8
	Int32   = backend.Int32
	Int64   = backend.Int64
	Float32 = backend.Float32
	Float64 = backend.Float64
)

// Elem is the set of Go types that arrays hold.
type Elem interface {
	~bool | ~uint8 | ~int32 | ~int64 | ~float32 | ~float64
}

// DTypeOf returns the dtype of the Go element type T.
func DTypeOf[T Elem]() DType {
	var z T
	switch reflect.TypeOf(z).Kind() {
	case reflect.Bool:
		return Bool
	case reflect.Uint8:
		return Uint8
	case reflect.Int32:
		return Int32
	case reflect.Int64:
		return Int64
	case reflect.Float32:
		return Float32
	}
	return Float64
}

// Promote returns the dtype two arrays of dtypes a and b combine to, as
// NumPy's promote_types: bool < uint8 < int32 < int64 within integers,
// uint8 with float32 gives float32, int32 or int64 with float32 gives
// float64 (float32 cannot hold every int32), float32 with float64 gives
// float64.
func Promote(a, b DType) DType {
	if a == b {
		return a
	}
	if a > b {
		a, b = b, a
	}
	switch {
	case a == Bool:
		return b
	case b.IsInt():
		return b
	case b == Float64:
		return Float64
	}
	// b == Float32, a is an integer.
	if a == Uint8 {
		return Float32
	}
	return Float64
}

// floatFor is the float type an integer argument of a float-only function
// (sqrt, exp, true division's operands stay separate) is computed in:
// float32 for bool and uint8 (NumPy picks float16, which gocu lacks),
// float64 for int32 and int64, the type itself for floats.
func floatFor(d DType) DType {
	switch d {
	case Float32, Float64:
		return d
	case Bool, Uint8:
		return Float32
	}
	return Float64
}

// kind of a weak (Go) scalar, after NEP 50.
type weakKind uint8

const (
	weakBool weakKind = iota + 1
	weakInt
	weakFloat
)

// scalar is a Go value used as an operand: weak in the sense of NumPy's NEP
// 50, so it adopts the array's dtype where its kind allows.
type scalar struct {
	kind weakKind
	b    bool
	i    int64
	f    float64
}

func (s scalar) String() string {
	switch s.kind {
	case weakBool:
		return fmt.Sprint(s.b)
	case weakInt:
		return fmt.Sprint(s.i)
	}
	return fmt.Sprint(s.f)
}

// scalarOf converts a Go number or bool; ok is false for other types.
func scalarOf(v any) (scalar, bool, error) {
	switch x := v.(type) {
	case bool:
		return scalar{kind: weakBool, b: x}, true, nil
	case int:
		return scalar{kind: weakInt, i: int64(x)}, true, nil
	case int8:
		return scalar{kind: weakInt, i: int64(x)}, true, nil
	case int16:
		return scalar{kind: weakInt, i: int64(x)}, true, nil
	case int32:
		return scalar{kind: weakInt, i: int64(x)}, true, nil
	case int64:
		return scalar{kind: weakInt, i: x}, true, nil
	case uint:
		if uint64(x) > math.MaxInt64 {
			return scalar{}, true, fmt.Errorf("Go uint %d is out of range for int64", x)
		}
		return scalar{kind: weakInt, i: int64(x)}, true, nil
	case uint8:
		return scalar{kind: weakInt, i: int64(x)}, true, nil
	case uint16:
		return scalar{kind: weakInt, i: int64(x)}, true, nil
	case uint32:
		return scalar{kind: weakInt, i: int64(x)}, true, nil
	case uint64:
		if x > math.MaxInt64 {
			return scalar{}, true, fmt.Errorf("Go uint64 %d is out of range for int64", x)
		}
		return scalar{kind: weakInt, i: int64(x)}, true, nil
	case float32:
		return scalar{kind: weakFloat, f: float64(x)}, true, nil
	case float64:
		return scalar{kind: weakFloat, f: x}, true, nil
	}
	return scalar{}, false, nil
}

// natural is the dtype a weak scalar has on its own (NumPy's defaults).
func (s scalar) natural() DType {
	switch s.kind {
	case weakBool:
		return Bool
	case weakInt:
		return Int64
	}
	return Float64
}

// withWeak is the dtype of an array of dtype d combined with weak scalar s
// (NEP 50): a scalar of a lower or equal kind takes the array's dtype; a
// float scalar with an integer or bool array gives float64; an int scalar
// with a bool array gives int64.
func withWeak(d DType, s scalar) DType {
	switch s.kind {
	case weakBool:
		return d
	case weakInt:
		if d == Bool {
			return Int64
		}
		return d
	}
	if d.IsFloat() {
		return d
	}
	return Float64
}

// fits reports whether the scalar's value is representable in d (only
// integer scalars can fail: NumPy 2 raises OverflowError for uint8(1)+300).
func (s scalar) fits(d DType) bool {
	if s.kind != weakInt {
		return true
	}
	switch d {
	case Uint8:
		return s.i >= 0 && s.i <= math.MaxUint8
	case Int32:
		return s.i >= math.MinInt32 && s.i <= math.MaxInt32
	}
	return true
}

// as returns the scalar as a program parameter of dtype d.
func (s scalar) as(d DType) backend.Scalar {
	out := backend.Scalar{DType: d}
	var f float64
	var i int64
	switch s.kind {
	case weakBool:
		if s.b {
			f, i = 1, 1
		}
	case weakInt:
		f, i = float64(s.i), s.i
	default:
		f = s.f
		if d.IsInt() {
			i = saturate(f, d)
		} else if d == Bool && f != 0 {
			i = 1
		}
	}
	switch {
	case d == Float32:
		out.F = float64(float32(f))
	case d == Float64:
		out.F = f
	case d == Bool:
		if i != 0 {
			out.I = 1
		}
	case d == Uint8:
		out.I = int64(uint8(i))
	case d == Int32:
		out.I = int64(int32(i))
	default:
		out.I = i
	}
	return out
}

// saturate converts a float to integer dtype d the way every backend casts:
// truncation toward zero, saturation at the type's range, NaN to 0.
func saturate(f float64, d DType) int64 {
	var lo, hi float64
	var mn, mx int64
	switch d {
	case Uint8:
		lo, hi, mn, mx = 0, 255, 0, 255
	case Int32:
		lo, hi, mn, mx = math.MinInt32, math.MaxInt32, math.MinInt32, math.MaxInt32
	default:
		lo, hi, mn, mx = -9223372036854775808.0, 9223372036854775808.0, math.MinInt64, math.MaxInt64
	}
	switch {
	case f != f:
		return 0
	case f <= lo:
		return mn
	case f >= hi:
		return mx
	}
	return int64(f)
}
