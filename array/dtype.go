package array

import (
	"fmt"
	"math"
	"reflect"

	"github.com/gocu-dev/gocu/array/internal/backend"
	"github.com/gocu-dev/gocu/array/internal/cpu"
	"github.com/gocu-dev/gocu/lowp"
)

// DType is an element type.
type DType uint8

// The element types, in the backends' order (TestTypesMatchBackend).
// Invalid is the zero value and marks a failed array.
const (
	Invalid DType = iota
	Bool
	Uint8
	Int32
	Int64
	Float32
	Float64

	// Int8 is a signed 8-bit integer (Go's int8).
	Int8
	// Float16 is IEEE binary16 (lowp.Float16, CUDA's __half).
	Float16
	// BFloat16 is bfloat16 (lowp.BFloat16, CUDA's __nv_bfloat16).
	BFloat16
	// Float8E4M3 is the OCP 8-bit float E4M3 ("e4m3fn": finite up to 448,
	// no infinities; lowp.Float8E4M3, CUDA's __nv_fp8_e4m3).
	Float8E4M3
	// Float8E5M2 is the OCP 8-bit float E5M2 (lowp.Float8E5M2, CUDA's
	// __nv_fp8_e5m2).
	Float8E5M2
)

// Elem is the set of Go types that arrays hold: bool, uint8, int8, int32,
// int64, float32, float64, the formats of package lowp (lowp.Float16,
// lowp.BFloat16, lowp.Float8E4M3, lowp.Float8E5M2) and types defined on
// them. A uint16 that is not a lowp format has no dtype (DTypeOf gives
// Invalid).
type Elem interface {
	~bool | ~uint8 | ~int8 | ~uint16 | ~int32 | ~int64 | ~float32 | ~float64
}

var (
	float16Type  = reflect.TypeFor[lowp.Float16]()
	bfloat16Type = reflect.TypeFor[lowp.BFloat16]()
	e4m3Type     = reflect.TypeFor[lowp.Float8E4M3]()
	e5m2Type     = reflect.TypeFor[lowp.Float8E5M2]()
)

// DTypeOf returns the dtype of the Go element type T (Invalid for a uint16
// type other than lowp.Float16 and lowp.BFloat16).
func DTypeOf[T Elem]() DType {
	t := reflect.TypeFor[T]()
	switch t {
	case float16Type:
		return Float16
	case bfloat16Type:
		return BFloat16
	case e4m3Type:
		return Float8E4M3
	case e5m2Type:
		return Float8E5M2
	}
	switch t.Kind() {
	case reflect.Bool:
		return Bool
	case reflect.Uint8:
		return Uint8
	case reflect.Int8:
		return Int8
	case reflect.Int32:
		return Int32
	case reflect.Int64:
		return Int64
	case reflect.Float32:
		return Float32
	case reflect.Float64:
		return Float64
	}
	return Invalid
}

// Promote returns the dtype two arrays of dtypes a and b combine to, as
// NumPy's promote_types where NumPy has both types: bool < uint8 < int32 <
// int64 within integers, uint8 with float32 gives float32, int32 or int64
// with float32 gives float64 (float32 cannot hold every int32), float32
// with float64 gives float64; int8 with uint8 gives int32 (NumPy's int16,
// which gocu lacks), float16 with bool, uint8 or int8 gives float16 and
// with int32 or int64 float64. BFloat16 and the 8-bit floats follow
// PyTorch: bfloat16 with any integer or bool gives bfloat16, with float16
// float32; an 8-bit float combines only with itself. Promote returns
// Invalid where there is no rule (an 8-bit float with any other dtype, or
// an invalid dtype); operations then fail with ErrDType. The whole table
// is in the package documentation.
func Promote(a, b DType) DType {
	if !a.Valid() || !b.Valid() {
		return Invalid
	}
	if a == b {
		return a
	}
	if a.IsComplex() || b.IsComplex() {
		return promoteComplex(a, b)
	}
	if a.IsStorage() || b.IsStorage() {
		return promoteStorage(a, b)
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

// promoteStorage is Promote where a or b (not both the same) is int8 or a
// low-precision float.
func promoteStorage(a, b DType) DType {
	if a.IsFloat8() || b.IsFloat8() {
		return Invalid // PyTorch: no promotion for float8 types
	}
	if b.IsStorage() && !a.IsStorage() || (a == Int8 && b.IsLowp()) {
		a, b = b, a // a is the storage type (the float one of two)
	}
	switch a {
	case Int8:
		switch b {
		case Bool:
			return Int8
		case Uint8, Int32:
			return Int32 // int8 with uint8: NumPy's int16
		}
		return b // int64, float32, float64
	case Float16:
		switch b {
		case Bool, Uint8, Int8:
			return Float16
		case Int32, Int64, Float64:
			return Float64
		}
		return Float32 // float32, bfloat16 (PyTorch)
	case BFloat16:
		switch b {
		case Float64:
			return Float64
		case Float32, Float16:
			return Float32
		}
		return BFloat16 // bool and every integer
	}
	return Invalid
}

// noPromotion is the error of combining two dtypes that have no rule.
func noPromotion(op string, a, b DType) error {
	return errorf(op, ErrDType, "%v and %v have no promotion rule (as in PyTorch, an 8-bit float combines only with itself): convert one with AsType", a, b)
}

// floatFor is the float type an integer argument of a float-only function
// (sqrt, exp, true division's operands stay separate) is computed in:
// float32 for bool, uint8 and int8 (NumPy picks float16), float64 for int32
// and int64, the type itself for floats of every width.
func floatFor(d DType) DType {
	switch {
	case d.IsFloating():
		return d
	case d == Bool || d == Uint8 || d == Int8:
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
			return scalar{}, true, fmt.Errorf("the Go uint %d is out of range for int64", x)
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
			return scalar{}, true, fmt.Errorf("the Go uint64 %d is out of range for int64", x)
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
	if d.IsFloating() {
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
	case Int8:
		return s.i >= math.MinInt8 && s.i <= math.MaxInt8
	case Int32:
		return s.i >= math.MinInt32 && s.i <= math.MaxInt32
	}
	return true
}

// as returns the scalar as a program parameter of dtype d.
func (s scalar) as(d DType) backend.Scalar {
	out := backend.Scalar{DType: d.be()}
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
			i = cpu.SaturateFloat(f, d.be()) // as every backend casts
		} else if d == Bool && f != 0 {
			i = 1
		}
	}
	switch {
	case d == Float32:
		out.F = float64(float32(f))
	case d == Float64:
		out.F = f
	case d.IsLowp():
		out.F = roundLowp(f, d)
	case d == Bool:
		if i != 0 {
			out.I = 1
		}
	case d == Uint8:
		out.I = int64(uint8(i))
	case d == Int8:
		out.I = int64(int8(i))
	case d == Int32:
		out.I = int64(int32(i))
	default:
		out.I = i
	}
	return out
}

// roundLowp rounds f to the low-precision float d (one rounding, package
// lowp's rules) and returns its value.
func roundLowp(f float64, d DType) float64 {
	switch d {
	case Float16:
		return lowp.Float16FromFloat64(f).Float64()
	case BFloat16:
		return lowp.BFloat16FromFloat64(f).Float64()
	case Float8E4M3:
		return lowp.Float8E4M3FromFloat64(f).Float64()
	case Float8E5M2:
		return lowp.Float8E5M2FromFloat64(f).Float64()
	}
	return f
}

// be is d as the backends spell it.
func (d DType) be() backend.DType { return backend.DType(d) }

// String returns the NumPy name of d ("float32").
func (d DType) String() string { return d.be().String() }

// Size is the size of one element in bytes (bool takes one byte).
func (d DType) Size() int { return d.be().Size() }

// Valid reports whether d is one of the defined element types.
func (d DType) Valid() bool { return d.be().Valid() }

// IsFloat reports whether d is float32 or float64. The low-precision
// floats are not: see IsLowp and IsFloating.
func (d DType) IsFloat() bool { return d.be().IsFloat() }

// IsLowp reports whether d is one of the low-precision floats (float16,
// bfloat16, float8 e4m3 and e5m2).
func (d DType) IsLowp() bool { return d.be().IsLowp() }

// IsFloating reports whether d holds floating-point numbers: IsFloat or
// IsLowp.
func (d DType) IsFloating() bool { return d.be().IsFloating() }

// IsFloat8 reports whether d is one of the 8-bit float types.
func (d DType) IsFloat8() bool { return d.be().IsFloat8() }

// IsInt reports whether d is an integer type; bool is not.
func (d DType) IsInt() bool { return d.be().IsInt() }

// IsSigned reports whether d is a signed integer or a float.
func (d DType) IsSigned() bool { return d.be().IsSigned() }

// IsStorage reports whether d is a storage type: int8 or a low-precision
// float, whose arithmetic is computed in its Compute type.
func (d DType) IsStorage() bool { return d.be().IsStorage() }

// Compute is the dtype d computes in: int32 for int8, float32 for the
// low-precision floats, d itself otherwise.
func (d DType) Compute() DType { return DType(d.be().Compute()) }
