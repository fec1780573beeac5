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

// The 16-bit and wide unsigned integer types, after the complex ones in
// the backends' order.
const (
	// Int16 is a signed 16-bit integer (Go's int16).
	Int16 = DType(backend.Int16)
	// Uint16 is an unsigned 16-bit integer (Go's uint16).
	Uint16 = DType(backend.Uint16)
	// Uint32 is an unsigned 32-bit integer (Go's uint32).
	Uint32 = DType(backend.Uint32)
	// Uint64 is an unsigned 64-bit integer (Go's uint64).
	Uint64 = DType(backend.Uint64)
)

// Elem is the set of Go types that arrays hold: bool, uint8, int8, int16,
// uint16, int32, uint32, int64, uint64, float32, float64, the formats of
// package lowp (lowp.Float16, lowp.BFloat16, lowp.Float8E4M3,
// lowp.Float8E5M2) and types defined on them. A uint16 type is Uint16
// unless it is lowp.Float16 or lowp.BFloat16.
type Elem interface {
	~bool | ~uint8 | ~int8 | ~int16 | ~uint16 | ~int32 | ~uint32 | ~int64 | ~uint64 | ~float32 | ~float64
}

var (
	float16Type  = reflect.TypeFor[lowp.Float16]()
	bfloat16Type = reflect.TypeFor[lowp.BFloat16]()
	e4m3Type     = reflect.TypeFor[lowp.Float8E4M3]()
	e5m2Type     = reflect.TypeFor[lowp.Float8E5M2]()
)

// DTypeOf returns the dtype of the Go element type T.
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
	case reflect.Int16:
		return Int16
	case reflect.Uint16:
		return Uint16
	case reflect.Int32:
		return Int32
	case reflect.Uint32:
		return Uint32
	case reflect.Int64:
		return Int64
	case reflect.Uint64:
		return Uint64
	case reflect.Float32:
		return Float32
	case reflect.Float64:
		return Float64
	}
	return Invalid
}

// Promote returns the dtype two arrays of dtypes a and b combine to, as
// NumPy's promote_types where NumPy has both types. Two integers of one
// signedness give the wider; a signed and an unsigned integer give the
// signed one if it is wider, else the signed integer of twice the
// unsigned width (int8 with uint8 gives int16, int64 with uint32 int64)
// and float64 for uint64 with any signed integer. An integer with a float
// gives the narrowest float at least as wide as the float that holds the
// integer exactly: float16 for 8 bits, float32 for 16, float64 for more
// (int32 with float32 gives float64). BFloat16 and the 8-bit floats follow
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
	if a.IsFloat8() || b.IsFloat8() {
		return Invalid // PyTorch: no promotion for float8 types
	}
	if a == Bool {
		return b
	}
	if b == Bool {
		return a
	}
	if a.IsInt() && b.IsInt() {
		return promoteInts(a, b)
	}
	if a.IsInt() {
		a, b = b, a // a is the float
	}
	if a == BFloat16 || b == BFloat16 {
		switch {
		case b.IsInt():
			return BFloat16
		case a == Float16 || b == Float16:
			return Float32
		}
		if a == BFloat16 {
			a = b
		}
		return widerFloat(a, Float32) // bfloat16 with float32 or float64
	}
	need := holdsInt(b)
	if b.IsFloating() {
		need = b
	}
	return widerFloat(a, need)
}

// floatRank orders Float16 < Float32 < Float64.
var floatRank = map[DType]int{Float16: 0, Float32: 1, Float64: 2}

// widerFloat is the wider of two of float16, float32 and float64.
func widerFloat(a, b DType) DType {
	if floatRank[a] >= floatRank[b] {
		return a
	}
	return b
}

// holdsInt is NumPy's narrowest float that holds every value of integer d.
func holdsInt(d DType) DType {
	switch d.be().Bits() {
	case 8:
		return Float16
	case 16:
		return Float32
	}
	return Float64
}

// intOf is the integer dtype of a signedness and width in bits.
func intOf(signed bool, bits int) DType {
	if signed {
		return map[int]DType{8: Int8, 16: Int16, 32: Int32, 64: Int64}[bits]
	}
	return map[int]DType{8: Uint8, 16: Uint16, 32: Uint32, 64: Uint64}[bits]
}

// promoteInts is Promote of two different integer dtypes.
func promoteInts(a, b DType) DType {
	sa, sb := a.IsSigned(), b.IsSigned()
	na, nb := a.be().Bits(), b.be().Bits()
	if sa == sb {
		return intOf(sa, max(na, nb))
	}
	if sb {
		na, nb = nb, na // na is the signed width, nb the unsigned
	}
	switch {
	case na > nb:
		return intOf(true, na)
	case nb < 64:
		return intOf(true, 2*nb)
	}
	return Float64
}

// noPromotion is the error of combining two dtypes that have no rule.
func noPromotion(op string, a, b DType) error {
	return errorf(op, ErrDType, "%v and %v have no promotion rule (as in PyTorch, an 8-bit float combines only with itself): convert one with AsType", a, b)
}

// floatFor is the float type an integer argument of a float-only function
// (sqrt, exp, true division's operands stay separate) is computed in:
// float32 for bool and integers of 8 and 16 bits (NumPy picks float16 for
// 8 bits), float64 for wider integers, the type itself for floats of every
// width.
func floatFor(d DType) DType {
	switch {
	case d.IsFloating():
		return d
	case d == Bool || d.be().Bits() <= 16:
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
	case Int16:
		return s.i >= math.MinInt16 && s.i <= math.MaxInt16
	case Uint16:
		return s.i >= 0 && s.i <= math.MaxUint16
	case Int32:
		return s.i >= math.MinInt32 && s.i <= math.MaxInt32
	case Uint32:
		return s.i >= 0 && s.i <= math.MaxUint32
	case Uint64:
		return s.i >= 0
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
	case d == Int16:
		out.I = int64(int16(i))
	case d == Uint16:
		out.I = int64(uint16(i))
	case d == Uint32:
		out.I = int64(uint32(i))
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

// IsStorage reports whether d is a storage type: an integer storage type
// (see IsStorageInt) or a low-precision float, whose arithmetic is
// computed in its Compute type.
func (d DType) IsStorage() bool { return d.be().IsStorage() }

// IsStorageInt reports whether d is int8, int16, uint16, uint32 or uint64:
// integers computed in int32 or int64.
func (d DType) IsStorageInt() bool { return d.be().IsStorageInt() }

// IsUnsigned reports whether d is an unsigned integer type.
func (d DType) IsUnsigned() bool { return d.be().IsUnsigned() }

// Compute is the dtype d computes in: int32 for int8, int16 and uint16,
// int64 for uint32 and uint64, float32 for the low-precision floats, d
// itself otherwise.
func (d DType) Compute() DType { return DType(d.be().Compute()) }
