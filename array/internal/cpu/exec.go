package cpu

import (
	"math"

	"github.com/gocu-dev/gocu/array/internal/backend"
	"github.com/gocu-dev/gocu/lowp"
)

// execNode computes one non-leaf node over a block: d has the node's dtype,
// args the dtype of the node's arguments (argDT; for OpWhere, the dtype of
// the values, with args[0] the bool condition).
func execNode(op backend.Op, dt, argDT backend.DType, d vec, a [3]vec) {
	switch {
	case op == backend.OpCast:
		cast(argDT, dt, d, a[0])
		return
	case op == backend.OpWhere:
		switch dt {
		case backend.Float32:
			where(d.f32, a[0].b, a[1].f32, a[2].f32)
		case backend.Float64:
			where(d.f64, a[0].b, a[1].f64, a[2].f64)
		case backend.Int32:
			where(d.i32, a[0].b, a[1].i32, a[2].i32)
		case backend.Int64:
			where(d.i64, a[0].b, a[1].i64, a[2].i64)
		case backend.Uint8:
			where(d.u8, a[0].b, a[1].u8, a[2].u8)
		case backend.Bool:
			where(d.b, a[0].b, a[1].b, a[2].b)
		}
		return
	case argDT == backend.Bool:
		boolOp(op, d.b, a[0].b, a[1].b)
		return
	case op.IsCompare():
		switch argDT {
		case backend.Float32:
			compare(op, d.b, a[0].f32, a[1].f32)
		case backend.Float64:
			compare(op, d.b, a[0].f64, a[1].f64)
		case backend.Int32:
			compare(op, d.b, a[0].i32, a[1].i32)
		case backend.Int64:
			compare(op, d.b, a[0].i64, a[1].i64)
		case backend.Uint8:
			compare(op, d.b, a[0].u8, a[1].u8)
		}
		return
	case op.IsPredicate():
		if argDT == backend.Float32 {
			predicate(op, d.b, a[0].f32)
		} else {
			predicate(op, d.b, a[0].f64)
		}
		return
	}
	if op.Arity() == 1 {
		switch dt {
		case backend.Float32:
			unaryFloat(op, d.f32, a[0].f32)
		case backend.Float64:
			unaryFloat(op, d.f64, a[0].f64)
		case backend.Int32:
			unaryInt(op, d.i32, a[0].i32)
		case backend.Int64:
			unaryInt(op, d.i64, a[0].i64)
		case backend.Uint8:
			unaryInt(op, d.u8, a[0].u8)
		}
		return
	}
	switch dt {
	case backend.Float32:
		binaryFloat(op, d.f32, a[0].f32, a[1].f32)
	case backend.Float64:
		binaryFloat(op, d.f64, a[0].f64, a[1].f64)
	case backend.Int32:
		binaryInt(op, d.i32, a[0].i32, a[1].i32)
	case backend.Int64:
		binaryInt(op, d.i64, a[0].i64, a[1].i64)
	case backend.Uint8:
		binaryInt(op, d.u8, a[0].u8, a[1].u8)
	}
}

func cast(from, to backend.DType, d, s vec) {
	if from == to {
		copyVec(to, d, s)
		return
	}
	if from.IsStorage() || to.IsStorage() {
		castStorage(from, to, d, s)
		return
	}
	switch to {
	case backend.Bool:
		switch from {
		case backend.Float32:
			castToBool(d.b, s.f32)
		case backend.Float64:
			castToBool(d.b, s.f64)
		case backend.Int32:
			castToBool(d.b, s.i32)
		case backend.Int64:
			castToBool(d.b, s.i64)
		case backend.Uint8:
			castToBool(d.b, s.u8)
		}
	case backend.Float32:
		castTo(from, d.f32, s)
	case backend.Float64:
		castTo(from, d.f64, s)
	case backend.Int32:
		if from.IsFloat() {
			castFloatTo(from, d.i32, s, math.MinInt32, math.MaxInt32, math.MinInt32, math.MaxInt32)
		} else {
			castTo(from, d.i32, s)
		}
	case backend.Int64:
		if from.IsFloat() {
			castFloatTo(from, d.i64, s, -9223372036854775808.0, 9223372036854775808.0, math.MinInt64, math.MaxInt64)
		} else {
			castTo(from, d.i64, s)
		}
	case backend.Uint8:
		if from.IsFloat() {
			castFloatTo(from, d.u8, s, 0, 255, 0, 255)
		} else {
			castTo(from, d.u8, s)
		}
	}
}

func castTo[D number](from backend.DType, d []D, s vec) {
	switch from {
	case backend.Float32:
		castNum(d, s.f32)
	case backend.Float64:
		castNum(d, s.f64)
	case backend.Int32:
		castNum(d, s.i32)
	case backend.Int64:
		castNum(d, s.i64)
	case backend.Uint8:
		castNum(d, s.u8)
	case backend.Bool:
		castFromBool(d, s.b)
	}
}

func castFloatTo[D integer](from backend.DType, d []D, s vec, lo, hi float64, mn, mx D) {
	if from == backend.Float32 {
		castFloatInt(d, s.f32, lo, hi, mn, mx)
	} else {
		castFloatInt(d, s.f64, lo, hi, mn, mx)
	}
}

// castStorage converts to or from a storage type, for the pairs
// backend.CastDefined allows: an integer storage type with its compute
// type (wrapping), float32 and float64 (saturating, as the casts to other
// integers); a low-precision float with float32 and float64, through
// package lowp.
func castStorage(from, to backend.DType, d, s vec) {
	switch {
	case from.IsStorageInt():
		switch from {
		case backend.Int8:
			widenInt(to, d, s.i8)
		case backend.Int16:
			widenInt(to, d, s.i16)
		case backend.Uint16:
			widenInt(to, d, s.u16)
		case backend.Uint32:
			widenInt(to, d, s.u32)
		case backend.Uint64:
			widenInt(to, d, s.u64)
		}
	case to.IsStorageInt():
		lo, hi, mn, mx := intRange(to)
		switch to {
		case backend.Int8:
			narrowInt(from, d.i8, s, lo, hi, int8(mn), int8(mx))
		case backend.Int16:
			narrowInt(from, d.i16, s, lo, hi, int16(mn), int16(mx))
		case backend.Uint16:
			narrowInt(from, d.u16, s, lo, hi, uint16(mn), uint16(mx))
		case backend.Uint32:
			narrowInt(from, d.u32, s, lo, hi, uint32(mn), uint32(mx))
		case backend.Uint64:
			narrowInt(from, d.u64, s, lo, hi, uint64(mn), uint64(mx))
		}
	case from.IsLowp() && to == backend.Float32:
		switch from {
		case backend.Float16:
			lowp.ToFloat32s(d.f32, s.f16)
		case backend.BFloat16:
			lowp.ToFloat32s(d.f32, s.bf16)
		case backend.Float8E4M3:
			lowp.ToFloat32s(d.f32, s.e4m3)
		case backend.Float8E5M2:
			lowp.ToFloat32s(d.f32, s.e5m2)
		}
	case from.IsLowp() && to == backend.Float64:
		switch from {
		case backend.Float16:
			lowp.ToFloat64s(d.f64, s.f16)
		case backend.BFloat16:
			lowp.ToFloat64s(d.f64, s.bf16)
		case backend.Float8E4M3:
			lowp.ToFloat64s(d.f64, s.e4m3)
		case backend.Float8E5M2:
			lowp.ToFloat64s(d.f64, s.e5m2)
		}
	case to.IsLowp() && from == backend.Float32:
		switch to {
		case backend.Float16:
			lowp.FromFloat32s(d.f16, s.f32)
		case backend.BFloat16:
			lowp.FromFloat32s(d.bf16, s.f32)
		case backend.Float8E4M3:
			lowp.FromFloat32s(d.e4m3, s.f32)
		case backend.Float8E5M2:
			lowp.FromFloat32s(d.e5m2, s.f32)
		}
	case to.IsLowp() && from == backend.Float64:
		switch to {
		case backend.Float16:
			lowp.FromFloat64s(d.f16, s.f64)
		case backend.BFloat16:
			lowp.FromFloat64s(d.bf16, s.f64)
		case backend.Float8E4M3:
			lowp.FromFloat64s(d.e4m3, s.f64)
		case backend.Float8E5M2:
			lowp.FromFloat64s(d.e5m2, s.f64)
		}
	default:
		panic("cpu: cast from " + from.String() + " to " + to.String())
	}
}

// widenInt converts integer storage values to their compute type or a
// float (uint64 to float is Go's, and C's, unsigned conversion).
func widenInt[S integer](to backend.DType, d vec, s []S) {
	switch to {
	case backend.Int32:
		castNum(d.i32, s)
	case backend.Int64:
		castNum(d.i64, s)
	case backend.Float32:
		castNum(d.f32, s)
	case backend.Float64:
		castNum(d.f64, s)
	}
}

// narrowInt converts a compute type (wrapping) or a float (saturating at
// lo and hi, NaN to 0) to an integer storage type.
func narrowInt[D integer](from backend.DType, d []D, s vec, lo, hi float64, mn, mx D) {
	switch from {
	case backend.Int32:
		castNum(d, s.i32)
	case backend.Int64:
		castNum(d, s.i64)
	case backend.Float32:
		castFloatInt(d, s.f32, lo, hi, mn, mx)
	case backend.Float64:
		castFloatInt(d, s.f64, lo, hi, mn, mx)
	}
}
