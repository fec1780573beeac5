package cpu

import (
	"math"

	"github.com/gocu-dev/gocu/array/internal/backend"
)

// Typed loops over one block. Arguments never alias the destination.

type number interface {
	integer | ~float32 | ~float64
}

type integer interface {
	~uint8 | ~int8 | ~int16 | ~uint16 | ~int32 | ~uint32 | ~int64 | ~uint64
}

type float interface {
	~float32 | ~float64
}

func unaryNum[T number](op backend.Op, d, a []T) {
	a = a[:len(d)]
	switch op {
	case backend.OpNeg:
		for i, v := range a {
			d[i] = -v
		}
	case backend.OpAbs:
		for i, v := range a {
			if v < 0 {
				v = -v
			}
			d[i] = v
		}
	case backend.OpSquare:
		for i, v := range a {
			d[i] = v * v
		}
	case backend.OpReLU:
		// Branch-free (the builtin max keeps NaN): a data-dependent
		// branch costs a misprediction per random sign.
		for i, v := range a {
			d[i] = max(v, 0)
		}
	case backend.OpFloor, backend.OpCeil, backend.OpRound, backend.OpTrunc:
		copy(d, a)
	case backend.OpSign:
		one := T(1)
		for i, v := range a {
			switch {
			case v > 0:
				d[i] = 1
			case v < 0:
				d[i] = -one // only reached for signed types
			default:
				d[i] = 0
			}
		}
	default:
		panic("cpu: unary " + op.String())
	}
}

func unaryInt[T integer](op backend.Op, d, a []T) {
	if op != backend.OpBitNot {
		unaryNum(op, d, a)
		return
	}
	a = a[:len(d)]
	for i, v := range a {
		d[i] = ^v
	}
}

func unaryFloat[T float](op backend.Op, d, a []T) {
	a = a[:len(d)]
	f := func(fn func(float64) float64) {
		for i, v := range a {
			d[i] = T(fn(float64(v)))
		}
	}
	switch op {
	case backend.OpAbs:
		f(math.Abs)
	case backend.OpNeg, backend.OpSquare, backend.OpReLU:
		unaryNum(op, d, a)
	case backend.OpSign:
		for i, v := range a {
			switch {
			case v > 0:
				d[i] = 1
			case v < 0:
				d[i] = -1
			case v == 0:
				d[i] = 0
			default:
				d[i] = v // NaN
			}
		}
	case backend.OpReciprocal:
		for i, v := range a {
			d[i] = 1 / v
		}
	case backend.OpSqrt:
		f(math.Sqrt)
	case backend.OpExp:
		f(math.Exp)
	case backend.OpExp2:
		f(math.Exp2)
	case backend.OpExpm1:
		f(math.Expm1)
	case backend.OpLog:
		f(math.Log)
	case backend.OpLog2:
		f(math.Log2)
	case backend.OpLog10:
		f(math.Log10)
	case backend.OpLog1p:
		f(math.Log1p)
	case backend.OpSin:
		f(math.Sin)
	case backend.OpCos:
		f(math.Cos)
	case backend.OpTan:
		f(math.Tan)
	case backend.OpTanh:
		f(math.Tanh)
	case backend.OpSigmoid:
		f(backend.Sigmoid)
	case backend.OpFloor:
		f(math.Floor)
	case backend.OpCeil:
		f(math.Ceil)
	case backend.OpRound:
		f(math.RoundToEven)
	case backend.OpTrunc:
		f(math.Trunc)
	default:
		// The table's function, for operations without a loop of their own.
		fn := backend.Ops[op].F
		if fn == nil {
			panic("cpu: unary " + op.String())
		}
		f(fn)
	}
}

func predicate[T float](op backend.Op, d []bool, a []T) {
	a = a[:len(d)]
	switch op {
	case backend.OpIsNaN:
		for i, v := range a {
			d[i] = v != v
		}
	case backend.OpIsInf:
		for i, v := range a {
			d[i] = math.IsInf(float64(v), 0)
		}
	case backend.OpIsFinite:
		for i, v := range a {
			f := float64(v)
			d[i] = !math.IsInf(f, 0) && f == f
		}
	}
}

func binaryNum[T number](op backend.Op, d, a, b []T) {
	a, b = a[:len(d)], b[:len(d)]
	switch op {
	case backend.OpAdd:
		for i := range d {
			d[i] = a[i] + b[i]
		}
	case backend.OpSub:
		for i := range d {
			d[i] = a[i] - b[i]
		}
	case backend.OpMul:
		for i := range d {
			d[i] = a[i] * b[i]
		}
	case backend.OpDiv:
		for i := range d {
			d[i] = a[i] / b[i]
		}
	case backend.OpMaximum:
		// The builtins propagate NaN, as NumPy's maximum and minimum.
		for i := range d {
			d[i] = max(a[i], b[i])
		}
	case backend.OpMinimum:
		for i := range d {
			d[i] = min(a[i], b[i])
		}
	default:
		panic("cpu: binary " + op.String())
	}
}

func binaryInt[T integer](op backend.Op, d, a, b []T) {
	a, b = a[:len(d)], b[:len(d)]
	switch op {
	case backend.OpFloorDiv:
		for i := range d {
			d[i] = floorDivInt(a[i], b[i])
		}
	case backend.OpMod:
		for i := range d {
			d[i] = modInt(a[i], b[i])
		}
	case backend.OpPow:
		for i := range d {
			d[i] = powInt(a[i], b[i])
		}
	case backend.OpBitAnd:
		for i := range d {
			d[i] = a[i] & b[i]
		}
	case backend.OpBitOr:
		for i := range d {
			d[i] = a[i] | b[i]
		}
	case backend.OpBitXor:
		for i := range d {
			d[i] = a[i] ^ b[i]
		}
	case backend.OpLeftShift:
		// Go's shifts are NumPy's: a count of the width or more (and a
		// negative one, made huge by the conversion) gives 0 or the sign.
		for i := range d {
			d[i] = a[i] << uint64(b[i])
		}
	case backend.OpRightShift:
		for i := range d {
			d[i] = a[i] >> uint64(b[i])
		}
	default:
		binaryNum(op, d, a, b)
	}
}

func binaryFloat[T float](op backend.Op, d, a, b []T) {
	a, b = a[:len(d)], b[:len(d)]
	switch op {
	case backend.OpFloorDiv:
		for i := range d {
			q, _ := divmod(float64(a[i]), float64(b[i]))
			d[i] = T(q)
		}
	case backend.OpMod:
		for i := range d {
			_, m := divmod(float64(a[i]), float64(b[i]))
			d[i] = T(m)
		}
	case backend.OpPow:
		for i := range d {
			d[i] = T(math.Pow(float64(a[i]), float64(b[i])))
		}
	case backend.OpAdd, backend.OpSub, backend.OpMul, backend.OpDiv, backend.OpMaximum, backend.OpMinimum:
		binaryNum(op, d, a, b)
	default:
		// The table's function, for operations without a loop of their own.
		fn := backend.Ops[op].F2
		if fn == nil {
			panic("cpu: binary " + op.String())
		}
		for i := range d {
			d[i] = T(fn(float64(a[i]), float64(b[i])))
		}
	}
}

// floorDivInt is Python's a // b; division by zero gives 0 (as NumPy,
// which also warns).
func floorDivInt[T integer](a, b T) T {
	if b == 0 {
		return 0
	}
	q := a / b
	if (a%b != 0) && ((a < 0) != (b < 0)) {
		q--
	}
	return q
}

// modInt is Python's a % b (the sign of b); modulo zero gives 0.
func modInt[T integer](a, b T) T {
	if b == 0 {
		return 0
	}
	r := a % b
	if r != 0 && ((r < 0) != (b < 0)) {
		r += b
	}
	return r
}

// powInt raises with wrap-around. A negative exponent gives 1/a^-b
// truncated toward zero: 1 for a == 1, ±1 for a == -1, else 0 (NumPy
// raises an error instead, which an elementwise kernel cannot do).
func powInt[T integer](a, b T) T {
	if b < 0 {
		switch {
		case a == 1:
			return 1
		case a == -T(1) && a != 1:
			if b%2 == 0 {
				return 1
			}
			return a
		}
		return 0
	}
	r := T(1)
	for b > 0 {
		if b&1 != 0 {
			r *= a
		}
		a *= a
		b >>= 1
	}
	return r
}

// divmod is NumPy's npy_divmod: floor division and a remainder with the
// sign of the divisor, computed from fmod so that q*b + m == a holds as
// closely as floating point allows.
func divmod(a, b float64) (q, m float64) {
	if b == 0 {
		return a / b, math.NaN()
	}
	m = math.Mod(a, b)
	div := (a - m) / b
	if m != 0 {
		if (b < 0) != (m < 0) {
			m += b
			div -= 1
		}
	} else {
		m = math.Copysign(0, b)
	}
	if div != 0 {
		q = math.Floor(div)
		if div-q > 0.5 {
			q += 1
		}
	} else {
		q = math.Copysign(0, a/b)
	}
	return q, m
}

func compare[T number](op backend.Op, d []bool, a, b []T) {
	a, b = a[:len(d)], b[:len(d)]
	switch op {
	case backend.OpEq:
		for i := range d {
			d[i] = a[i] == b[i]
		}
	case backend.OpNe:
		for i := range d {
			d[i] = a[i] != b[i]
		}
	case backend.OpLt:
		for i := range d {
			d[i] = a[i] < b[i]
		}
	case backend.OpLe:
		for i := range d {
			d[i] = a[i] <= b[i]
		}
	case backend.OpGt:
		for i := range d {
			d[i] = a[i] > b[i]
		}
	case backend.OpGe:
		for i := range d {
			d[i] = a[i] >= b[i]
		}
	}
}

// boolOp covers every node operation on bool arguments.
func boolOp(op backend.Op, d, a, b []bool) {
	switch op {
	case backend.OpNot:
		for i := range d {
			d[i] = !a[i]
		}
	case backend.OpAbs, backend.OpSquare, backend.OpFloor, backend.OpCeil, backend.OpRound, backend.OpTrunc:
		copy(d, a[:len(d)])
	case backend.OpAnd, backend.OpMul, backend.OpMinimum:
		for i := range d {
			d[i] = a[i] && b[i]
		}
	case backend.OpOr, backend.OpAdd, backend.OpMaximum:
		for i := range d {
			d[i] = a[i] || b[i]
		}
	case backend.OpXor, backend.OpNe:
		for i := range d {
			d[i] = a[i] != b[i]
		}
	case backend.OpEq:
		for i := range d {
			d[i] = a[i] == b[i]
		}
	case backend.OpLt:
		for i := range d {
			d[i] = !a[i] && b[i]
		}
	case backend.OpLe:
		for i := range d {
			d[i] = !a[i] || b[i]
		}
	case backend.OpGt:
		for i := range d {
			d[i] = a[i] && !b[i]
		}
	case backend.OpGe:
		for i := range d {
			d[i] = a[i] || !b[i]
		}
	default:
		panic("cpu: bool " + op.String())
	}
}

func where[T any](d []T, c []bool, a, b []T) {
	c, a, b = c[:len(d)], a[:len(d)], b[:len(d)]
	for i := range d {
		if c[i] {
			d[i] = a[i]
		} else {
			d[i] = b[i]
		}
	}
}

// Casts. Float to integer conversions truncate toward zero, saturate at the
// type's range and map NaN to 0 (what CUDA's cvt.rzi.sat does, so both
// backends agree; NumPy leaves out-of-range conversions undefined).

func castNum[S, D number](d []D, s []S) {
	s = s[:len(d)]
	for i, v := range s {
		d[i] = D(v)
	}
}

func castFloatInt[S float, D integer](d []D, s []S, lo, hi float64, minV, maxV D) {
	s = s[:len(d)]
	for i, v := range s {
		f := float64(v)
		switch {
		case f != f:
			d[i] = 0
		case f <= lo:
			d[i] = minV
		case f >= hi:
			d[i] = maxV
		case f >= 1<<63:
			d[i] = D(uint64(f)) // only uint64 has room above int64
		default:
			d[i] = D(int64(f))
		}
	}
}

func castToBool[S number](d []bool, s []S) {
	s = s[:len(d)]
	for i, v := range s {
		d[i] = v != 0
	}
}

func castFromBool[D number](d []D, s []bool) {
	s = s[:len(d)]
	for i, v := range s {
		if v {
			d[i] = 1
		} else {
			d[i] = 0
		}
	}
}

// SaturateFloat converts a float to an integer dtype as the cast above
// does, for callers outside the block loops.
func SaturateFloat(f float64, dt backend.DType) int64 {
	lo, hi, mn, mx := intRange(dt)
	switch {
	case f != f:
		return 0
	case f <= lo:
		return mn
	case f >= hi:
		return mx
	case f >= 1<<63:
		return int64(uint64(f)) // uint64's bits
	}
	return int64(f)
}

func intRange(dt backend.DType) (lo, hi float64, mn, mx int64) {
	switch dt {
	case backend.Int16:
		return math.MinInt16, math.MaxInt16, math.MinInt16, math.MaxInt16
	case backend.Uint16:
		return 0, math.MaxUint16, 0, math.MaxUint16
	case backend.Uint32:
		return 0, math.MaxUint32, 0, math.MaxUint32
	case backend.Uint64:
		return 0, 18446744073709551616.0, 0, -1 // -1: the bits of MaxUint64
	case backend.Uint8:
		return 0, 255, 0, 255
	case backend.Int8:
		return -128, 127, -128, 127
	case backend.Int32:
		return math.MinInt32, math.MaxInt32, math.MinInt32, math.MaxInt32
	}
	return -9223372036854775808.0, 9223372036854775808.0, math.MinInt64, math.MaxInt64
}
