package backend

import "fmt"

// DType is an element type.
type DType uint8

// The element types. Invalid is the zero value and marks a failed array.
const (
	Invalid DType = iota
	Bool
	Uint8
	Int32
	Int64
	Float32
	Float64
)

// DTypes lists every valid element type in promotion order.
var DTypes = []DType{Bool, Uint8, Int32, Int64, Float32, Float64}

var dtypeNames = [...]string{"invalid", "bool", "uint8", "int32", "int64", "float32", "float64"}

func (d DType) String() string {
	if int(d) < len(dtypeNames) {
		return dtypeNames[d]
	}
	return fmt.Sprintf("dtype(%d)", uint8(d))
}

// Size is the size of one element in bytes (bool takes one byte).
func (d DType) Size() int {
	switch d {
	case Bool, Uint8:
		return 1
	case Int32, Float32:
		return 4
	case Int64, Float64:
		return 8
	}
	return 0
}

// Valid reports whether d is one of the defined element types.
func (d DType) Valid() bool { return d >= Bool && d <= Float64 }

// IsFloat reports whether d is float32 or float64.
func (d DType) IsFloat() bool { return d == Float32 || d == Float64 }

// IsInt reports whether d is an integer type (uint8, int32, int64); bool is not.
func (d DType) IsInt() bool { return d == Uint8 || d == Int32 || d == Int64 }

// IsSigned reports whether d is a signed integer or a float.
func (d DType) IsSigned() bool { return d == Int32 || d == Int64 || d.IsFloat() }

// Scalar is a scalar parameter of a program, stored exactly: integer and
// bool values in I (bool as 0 or 1), float values in F.
type Scalar struct {
	DType DType
	I     int64
	F     float64
}

// Float returns the value as a float64.
func (s Scalar) Float() float64 {
	if s.DType.IsFloat() {
		return s.F
	}
	return float64(s.I)
}

// Int returns the value as an int64 (floats truncated toward zero).
func (s Scalar) Int() int64 {
	if s.DType.IsFloat() {
		return int64(s.F)
	}
	return s.I
}
