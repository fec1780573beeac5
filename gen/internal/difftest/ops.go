package difftest

import "math"

// The interpreter: every operation is Go's operator on run-time values of
// the operand's type.

type integer interface {
	~int8 | ~int16 | ~int32 | ~int64 | ~int | ~uint8 | ~uint16 | ~uint32 | ~uint64 | ~uint
}

type number interface {
	integer | ~float32 | ~float64
}

func ibin[T integer](op string, a, b T) (T, bool) {
	switch op {
	case "+":
		return a + b, true
	case "-":
		return a - b, true
	case "*":
		return a * b, true
	case "/":
		if b == 0 {
			return 0, false
		}
		return a / b, true
	case "%":
		if b == 0 {
			return 0, false
		}
		return a % b, true
	case "&":
		return a & b, true
	case "|":
		return a | b, true
	case "^":
		return a ^ b, true
	case "&^":
		return a &^ b, true
	}
	panic("difftest: integer operator " + op)
}

func fbin[T ~float32 | ~float64](op string, a, b T) T {
	// Each result is stored in a variable of type T: no fusion.
	var r T
	switch op {
	case "+":
		r = a + b
	case "-":
		r = a - b
	case "*":
		r = a * b
	case "/":
		r = a / b
	default:
		panic("difftest: float operator " + op)
	}
	return r
}

func ishift[T integer](op string, a T, s uint64) T {
	if op == "<<" {
		return a << s
	}
	return a >> s
}

func sv(k Kind, v int64) Value  { return Value{k, uint64(v)} }
func uv(k Kind, v uint64) Value { return Value{k, v} }

func f32(v Value) float32 { return math.Float32frombits(uint32(v.Bits)) }
func f64(v Value) float64 { return math.Float64frombits(v.Bits) }

func binary(op string, a, b Value) (Value, bool) {
	var ok bool
	switch a.Kind {
	case I8:
		var r int8
		r, ok = ibin(op, int8(a.Bits), int8(b.Bits))
		return sv(I8, int64(r)), ok
	case I16:
		var r int16
		r, ok = ibin(op, int16(a.Bits), int16(b.Bits))
		return sv(I16, int64(r)), ok
	case I32:
		var r int32
		r, ok = ibin(op, int32(a.Bits), int32(b.Bits))
		return sv(I32, int64(r)), ok
	case I64:
		var r int64
		r, ok = ibin(op, int64(a.Bits), int64(b.Bits))
		return sv(I64, r), ok
	case Int:
		var r int
		r, ok = ibin(op, int(a.Bits), int(b.Bits))
		return sv(Int, int64(r)), ok
	case U8:
		var r uint8
		r, ok = ibin(op, uint8(a.Bits), uint8(b.Bits))
		return uv(U8, uint64(r)), ok
	case U16:
		var r uint16
		r, ok = ibin(op, uint16(a.Bits), uint16(b.Bits))
		return uv(U16, uint64(r)), ok
	case U32:
		var r uint32
		r, ok = ibin(op, uint32(a.Bits), uint32(b.Bits))
		return uv(U32, uint64(r)), ok
	case U64:
		var r uint64
		r, ok = ibin(op, a.Bits, b.Bits)
		return uv(U64, r), ok
	case Uint:
		var r uint
		r, ok = ibin(op, uint(a.Bits), uint(b.Bits))
		return uv(Uint, uint64(r)), ok
	case F32:
		return Value{F32, uint64(math.Float32bits(fbin(op, f32(a), f32(b))))}, true
	}
	return Value{F64, math.Float64bits(fbin(op, f64(a), f64(b)))}, true
}

func shift(op string, a Value, s uint64) Value {
	switch a.Kind {
	case I8:
		return sv(I8, int64(ishift(op, int8(a.Bits), s)))
	case I16:
		return sv(I16, int64(ishift(op, int16(a.Bits), s)))
	case I32:
		return sv(I32, int64(ishift(op, int32(a.Bits), s)))
	case I64:
		return sv(I64, ishift(op, int64(a.Bits), s))
	case Int:
		return sv(Int, int64(ishift(op, int(a.Bits), s)))
	case U8:
		return uv(U8, uint64(ishift(op, uint8(a.Bits), s)))
	case U16:
		return uv(U16, uint64(ishift(op, uint16(a.Bits), s)))
	case U32:
		return uv(U32, uint64(ishift(op, uint32(a.Bits), s)))
	case U64:
		return uv(U64, ishift(op, a.Bits, s))
	}
	return uv(Uint, uint64(ishift(op, uint(a.Bits), s)))
}

func unary(op string, a Value) Value {
	if op == "+" {
		return a
	}
	neg := func(x Value) Value {
		switch x.Kind {
		case F32:
			return Value{F32, uint64(math.Float32bits(-f32(x)))}
		case F64:
			return Value{F64, math.Float64bits(-f64(x))}
		}
		r, _ := binary("-", Value{x.Kind, 0}, x)
		return r
	}
	if op == "-" {
		return neg(a)
	}
	// ^x is x ^ -1 (all ones) for every integer type.
	ones := normalize(a.Kind, math.MaxUint64)
	r, _ := binary("^", a, Value{a.Kind, ones})
	return r
}

func minmax(op string, a, b Value) Value {
	switch a.Kind {
	case I8:
		return sv(I8, int64(mm(op, int8(a.Bits), int8(b.Bits))))
	case I16:
		return sv(I16, int64(mm(op, int16(a.Bits), int16(b.Bits))))
	case I32:
		return sv(I32, int64(mm(op, int32(a.Bits), int32(b.Bits))))
	case I64:
		return sv(I64, mm(op, int64(a.Bits), int64(b.Bits)))
	case Int:
		return sv(Int, int64(mm(op, int(a.Bits), int(b.Bits))))
	case U8:
		return uv(U8, uint64(mm(op, uint8(a.Bits), uint8(b.Bits))))
	case U16:
		return uv(U16, uint64(mm(op, uint16(a.Bits), uint16(b.Bits))))
	case U32:
		return uv(U32, uint64(mm(op, uint32(a.Bits), uint32(b.Bits))))
	case U64:
		return uv(U64, mm(op, a.Bits, b.Bits))
	case Uint:
		return uv(Uint, uint64(mm(op, uint(a.Bits), uint(b.Bits))))
	case F32:
		x, y := f32(a), f32(b)
		if op == "min" {
			return Value{F32, uint64(math.Float32bits(min(x, y)))}
		}
		return Value{F32, uint64(math.Float32bits(max(x, y)))}
	}
	x, y := f64(a), f64(b)
	if op == "min" {
		return Value{F64, math.Float64bits(min(x, y))}
	}
	return Value{F64, math.Float64bits(max(x, y))}
}

func mm[T integer](op string, a, b T) T {
	if op == "min" {
		return min(a, b)
	}
	return max(a, b)
}

// convert applies Go's conversion to kind to.
func convert(v Value, to Kind) Value {
	switch v.Kind {
	case I8:
		return convFrom(int8(v.Bits), to)
	case I16:
		return convFrom(int16(v.Bits), to)
	case I32:
		return convFrom(int32(v.Bits), to)
	case I64:
		return convFrom(int64(v.Bits), to)
	case Int:
		return convFrom(int(v.Bits), to)
	case U8:
		return convFrom(uint8(v.Bits), to)
	case U16:
		return convFrom(uint16(v.Bits), to)
	case U32:
		return convFrom(uint32(v.Bits), to)
	case U64:
		return convFrom(v.Bits, to)
	case Uint:
		return convFrom(uint(v.Bits), to)
	case F32:
		return convFrom(f32(v), to)
	}
	return convFrom(f64(v), to)
}

func convFrom[F number](x F, to Kind) Value {
	switch to {
	case I8:
		return sv(I8, int64(int8(x)))
	case I16:
		return sv(I16, int64(int16(x)))
	case I32:
		return sv(I32, int64(int32(x)))
	case I64:
		return sv(I64, int64(x))
	case Int:
		return sv(Int, int64(int(x)))
	case U8:
		return uv(U8, uint64(uint8(x)))
	case U16:
		return uv(U16, uint64(uint16(x)))
	case U32:
		return uv(U32, uint64(uint32(x)))
	case U64:
		return uv(U64, uint64(x))
	case Uint:
		return uv(Uint, uint64(uint(x)))
	case F32:
		return Value{F32, uint64(math.Float32bits(float32(x)))}
	}
	return Value{F64, math.Float64bits(float64(x))}
}
