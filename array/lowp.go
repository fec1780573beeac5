package array

import "github.com/gocu-dev/gocu/array/internal/backend"

// Storage dtypes. Int8 and the low-precision floats (Float16, BFloat16,
// Float8E4M3, Float8E5M2) are held in memory in their own format but
// computed in a wider one, as PyTorch does: int8 in int32 (results wrap
// back to int8, so arithmetic wraps as on int8), the floats in float32
// (each operation's result rounds back to the format, to nearest even).
// The backends only convert them; the expression built here casts
// operands to the compute type, applies the operation and casts back, and
// the fusion of lazy expressions makes that one pass.

// castVia returns the dtype a conversion from one dtype to another goes
// through when a backend has no direct conversion between them
// (backend.CastDefined), or Invalid when it has one. Every route is exact
// on its first step except from int32 or int64 to a low-precision float
// (through float64: exact for int32, one rounding for int64 up to 2^53) and
// from int64 to int8 (through int32: both wrap, so the result is the low
// byte, as a direct conversion gives) and from uint64 to a low-precision
// float (through float64, as int64).
func castVia(from, to DType) DType {
	if backend.CastDefined(from.be(), to.be()) {
		return Invalid
	}
	switch {
	case to.IsLowp():
		if from.be().Bits() >= 32 {
			return Float64
		}
		return Float32 // bool, 8- and 16-bit integers, another low-precision float: exact
	case from.IsLowp():
		return Float32 // exact widening
	case from.IsStorageInt():
		return from.Compute() // exact widening, then C's conversion from there
	}
	return to.Compute() // to an integer storage type from bool or another integer: wraps as C
}

// computeNode builds the node op of result dtype res over args, whose
// operands (all but a Where condition) have dtype dt. A storage dt computes
// in dt.Compute(): the operands are widened, and a result of dtype dt
// (arithmetic, as opposed to a comparison's bool) is narrowed back.
func computeNode(op backend.Op, dt, res DType, shape []int, args ...*expr) *expr {
	if !dt.IsStorage() {
		return node(op, res, shape, args...)
	}
	c := dt.Compute()
	wide := make([]*expr, len(args))
	for i, a := range args {
		wide[i] = a
		if a.dt == dt {
			wide[i] = castExpr(a, c)
		}
	}
	if dt == Uint64 {
		if e := u64Node(op, shape, wide); e != nil {
			return e
		}
	}
	if res == dt {
		return castExpr(node(op, c, shape, wide...), dt)
	}
	return node(op, res, shape, wide...)
}

// narrowResult converts a result computed in a compute type to its storage
// dtype: a lazy cast, which takes a's reference to its memory.
func narrowResult(a *Array, dt DType) *Array {
	defer a.Close()
	return a.AsType(dt)
}
