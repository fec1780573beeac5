package array

import (
	"math"

	"github.com/gocu-dev/gocu/array/internal/backend"
)

// Uint64 computes in int64, whose addition, subtraction, multiplication,
// negation, bitwise operations and left shifts give the same bits. The
// operations that read the bits as a number are rewritten here into int64
// ones: an order comparison flips both sign bits first (x ^ MinInt64
// orders as x does unsigned), division and remainder follow Hacker's
// Delight (9-3), a right shift clears the bits an arithmetic shift copies
// in, and a power splits an exponent of 2^63 or more. Every rewrite is an
// expression of existing operations, so it fuses and runs on every
// backend.

// u64Node is computeNode's node for uint64 operands widened to int64
// (args), or nil where int64 arithmetic already gives uint64's bits.
func u64Node(op backend.Op, shape []int, args []*expr) *expr {
	i64 := func(v int64) *expr { return scalarExpr(backend.Scalar{DType: backend.Int64, I: v}) }
	bin := func(op backend.Op, a, b *expr) *expr { return node(op, Int64, shape, a, b) }
	flip := func(a *expr) *expr { return bin(backend.OpBitXor, a, i64(math.MinInt64)) }
	cmp := func(op backend.Op, a, b *expr) *expr { return node(op, Bool, shape, a, b) }
	where := func(c, a, b *expr) *expr { return node(backend.OpWhere, Int64, shape, c, a, b) }
	narrow := func(e *expr) *expr { return castExpr(e, Uint64) }
	switch op {
	case backend.OpLt, backend.OpLe, backend.OpGt, backend.OpGe:
		return cmp(op, flip(args[0]), flip(args[1]))
	case backend.OpMaximum, backend.OpMinimum:
		return narrow(flip(bin(op, flip(args[0]), flip(args[1]))))
	case backend.OpSign:
		return narrow(castExpr(cmp(backend.OpNe, args[0], i64(0)), Int64))
	case backend.OpAbs, backend.OpReLU:
		return narrow(args[0])
	case backend.OpPow:
		// An exponent of 2^63 or more reads as negative: a^b is
		// a^(b-2^63) * (a^(2^62))^2, all wrapping.
		a, b := args[0], args[1]
		low := bin(backend.OpPow, a, bin(backend.OpBitAnd, b, i64(math.MaxInt64)))
		top := bin(backend.OpPow, bin(backend.OpPow, a, i64(1<<62)), i64(2))
		return narrow(where(cmp(backend.OpLt, b, i64(0)), bin(backend.OpMul, low, top), bin(backend.OpPow, a, b)))
	case backend.OpRightShift:
		a, s := args[0], args[1]
		// For 1 <= s <= 63, MaxInt64 >> (s-1) keeps the low 64-s bits.
		mask := bin(backend.OpRightShift, i64(math.MaxInt64), bin(backend.OpSub, s, i64(1)))
		shifted := bin(backend.OpBitAnd, bin(backend.OpRightShift, a, s), mask)
		inRange := node(backend.OpAnd, Bool, shape, cmp(backend.OpGe, s, i64(1)), cmp(backend.OpLe, s, i64(63)))
		return narrow(where(cmp(backend.OpEq, s, i64(0)), a, where(inRange, shifted, i64(0))))
	case backend.OpFloorDiv, backend.OpMod:
		a, b := args[0], args[1]
		geU := func(x, y *expr) *expr { return castExpr(cmp(backend.OpGe, flip(x), flip(y)), Int64) }
		// b < 2^63: q = ((a >>> 1) / b) << 1, then one correction step.
		half := bin(backend.OpBitAnd, bin(backend.OpRightShift, a, i64(1)), i64(math.MaxInt64))
		q0 := bin(backend.OpLeftShift, bin(backend.OpFloorDiv, half, b), i64(1))
		r0 := bin(backend.OpSub, a, bin(backend.OpMul, q0, b))
		small := bin(backend.OpAdd, q0, geU(r0, b))
		// b >= 2^63 (negative as int64): the quotient is 0 or 1.
		q := where(cmp(backend.OpLt, b, i64(0)), geU(a, b), small)
		zero := cmp(backend.OpEq, b, i64(0)) // NumPy: 0 for either, with a warning
		if op == backend.OpFloorDiv {
			return narrow(where(zero, i64(0), q))
		}
		return narrow(where(zero, i64(0), bin(backend.OpSub, a, bin(backend.OpMul, q, b))))
	}
	return nil
}

// flipU64 converts between uint64 values and int64 keys of the same order
// (the sign bit flipped): to Int64 from uint64 a, to Uint64 from int64
// keys a. Sorts, searches and extremes of uint64 run on the keys.
func flipU64(a *Array, to DType) *Array {
	x := a.AsType(Int64)
	y := x.BitwiseXor(int64(math.MinInt64))
	x.Close()
	if to == Int64 {
		return y
	}
	defer y.Close()
	return y.AsType(Uint64)
}
