package backend

import "fmt"

// DType is an element type.
type DType uint8

// The element types. Invalid is the zero value and marks a failed array.
//
// Int8 and the low-precision floats (Float16, BFloat16, Float8E4M3,
// Float8E5M2) are storage types: a backend holds them, reads and writes
// them, and converts them to and from their compute type (Compute), and
// nothing else; package array computes their arithmetic in the compute
// type and converts the result back (see CastDefined).
const (
	Invalid DType = iota
	Bool
	Uint8
	Int32
	Int64
	Float32
	Float64
	Int8
	Float16
	BFloat16
	Float8E4M3
	Float8E5M2
	// Complex64 and Complex128 hold (real, imaginary) pairs of float32 and
	// float64. Backends only hold them: package array computes on the
	// pairs through real views (see Component).
	Complex64
	Complex128
	// Int16, Uint16, Uint32 and Uint64 are integer storage types computed
	// in int32 (int16, uint16) and int64 (uint32, uint64). Package array
	// keeps the unsigned meaning of uint64 where int64 arithmetic would
	// lose it (comparisons, division, right shifts, conversions).
	Int16
	Uint16
	Uint32
	Uint64
)

// DTypes lists every valid element type: the compute types in promotion
// order, then the storage types.
var DTypes = []DType{Bool, Uint8, Int32, Int64, Float32, Float64, Int8, Float16, BFloat16, Float8E4M3, Float8E5M2,
	Int16, Uint16, Uint32, Uint64}

var dtypeNames = [...]string{"invalid", "bool", "uint8", "int32", "int64", "float32", "float64",
	"int8", "float16", "bfloat16", "float8_e4m3fn", "float8_e5m2", "complex64", "complex128",
	"int16", "uint16", "uint32", "uint64"}

func (d DType) String() string {
	if int(d) < len(dtypeNames) {
		return dtypeNames[d]
	}
	return fmt.Sprintf("dtype(%d)", uint8(d))
}

// Size is the size of one element in bytes (bool takes one byte).
func (d DType) Size() int {
	switch d {
	case Bool, Uint8, Int8, Float8E4M3, Float8E5M2:
		return 1
	case Float16, BFloat16, Int16, Uint16:
		return 2
	case Int32, Float32, Uint32:
		return 4
	case Int64, Float64, Complex64, Uint64:
		return 8
	case Complex128:
		return 16
	}
	return 0
}

// Valid reports whether d is one of the defined element types.
func (d DType) Valid() bool { return d >= Bool && d <= Uint64 }

// IsComplex reports whether d is complex64 or complex128.
func (d DType) IsComplex() bool { return d == Complex64 || d == Complex128 }

// Component is the float type of a complex dtype's parts (float32 for
// complex64, float64 for complex128), Invalid for other dtypes.
func (d DType) Component() DType {
	switch d {
	case Complex64:
		return Float32
	case Complex128:
		return Float64
	}
	return Invalid
}

// IsFloat reports whether d is float32 or float64, the float types a
// backend computes in. The low-precision floats are not: see IsLowp and
// IsFloating.
func (d DType) IsFloat() bool { return d == Float32 || d == Float64 }

// IsLowp reports whether d is one of the low-precision float storage types
// (float16, bfloat16, float8 e4m3 and e5m2).
func (d DType) IsLowp() bool { return d >= Float16 && d <= Float8E5M2 }

// IsFloating reports whether d holds floating-point numbers: IsFloat or
// IsLowp.
func (d DType) IsFloating() bool { return d.IsFloat() || d.IsLowp() }

// IsFloat8 reports whether d is one of the 8-bit float types.
func (d DType) IsFloat8() bool { return d == Float8E4M3 || d == Float8E5M2 }

// IsInt reports whether d is an integer type (uint8, int8, int16, uint16,
// int32, uint32, int64, uint64); bool is not.
func (d DType) IsInt() bool { return d == Uint8 || d == Int32 || d == Int64 || d.IsStorageInt() }

// IsSigned reports whether d is a signed integer or a float.
func (d DType) IsSigned() bool {
	return d == Int8 || d == Int16 || d == Int32 || d == Int64 || d.IsFloating()
}

// IsUnsigned reports whether d is an unsigned integer type.
func (d DType) IsUnsigned() bool { return d == Uint8 || d == Uint16 || d == Uint32 || d == Uint64 }

// IsStorageInt reports whether d is an integer storage type: int8, int16,
// uint16, uint32 or uint64.
func (d DType) IsStorageInt() bool { return d == Int8 || d >= Int16 && d <= Uint64 }

// IsStorage reports whether d is a storage type: an integer storage type
// or a low-precision float, which backends only hold and convert (see
// CastDefined).
func (d DType) IsStorage() bool { return d.IsStorageInt() || d.IsLowp() }

// Bits is the width of an integer dtype in bits (0 for other dtypes).
func (d DType) Bits() int {
	if !d.IsInt() {
		return 0
	}
	return 8 * d.Size()
}

// Compute is the dtype d computes in: int32 for int8, int16 and uint16,
// int64 for uint32 and uint64, float32 for the low-precision floats, d
// itself otherwise.
func (d DType) Compute() DType {
	switch {
	case d == Int8 || d == Int16 || d == Uint16:
		return Int32
	case d == Uint32 || d == Uint64:
		return Int64
	case d.IsLowp():
		return Float32
	}
	return d
}

// CastDefined reports whether a backend converts from one dtype to another
// directly (OpCast). Between compute types every conversion is defined.
// A storage type converts only to and from: an integer storage type with
// its compute type (wrapping; uint64 with int64 keeps the bits), float32
// and float64 (float to integer truncates toward zero, saturates at the
// type's limits and maps NaN to 0; uint64 to float is the unsigned
// conversion, rounding once); a low-precision float with float32 and
// float64 (exact widening; narrowing rounds once to nearest even, with the
// overflow, saturation and NaN rules of package lowp). Package array
// routes every other conversion through these.
func CastDefined(from, to DType) bool {
	if from.IsComplex() || to.IsComplex() {
		return from == to // package array converts complex values through their parts
	}
	if from == to || (!from.IsStorage() && !to.IsStorage()) {
		return from.Valid() && to.Valid()
	}
	s, o := from, to
	if !s.IsStorage() {
		s, o = to, from
	}
	if o.IsStorage() {
		return false
	}
	if s.IsStorageInt() {
		return o == s.Compute() || o == Float32 || o == Float64
	}
	return o == Float32 || o == Float64
}

// Scalar is a scalar parameter of a program, stored exactly: integer and
// bool values in I (bool as 0 or 1), float values in F (for a
// low-precision float, a value of that format).
type Scalar struct {
	DType DType
	I     int64
	F     float64
}

// Float returns the value as a float64.
func (s Scalar) Float() float64 {
	if s.DType.IsFloating() {
		return s.F
	}
	return float64(s.I)
}

// Int returns the value as an int64 (floats truncated toward zero).
func (s Scalar) Int() int64 {
	if s.DType.IsFloating() {
		return int64(s.F)
	}
	return s.I
}
