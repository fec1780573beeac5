package array

import (
	"math"
	"runtime"

	"github.com/gocu-dev/gocu/array/internal/backend"
)

// Operands of elementwise operations are arrays (*Array) or Go scalars
// (bool, any integer or float type). Go scalars are "weak" as Python
// scalars under NumPy's NEP 50: they take the array's dtype when their kind
// (bool < integer < float) allows, so x.Mul(2.5) stays float32 for a
// float32 x, while a float scalar with an integer array gives float64.

type operand struct {
	arr *Array
	sc  scalar
}

func (o operand) isScalar() bool { return o.arr == nil }

func toOperand(op string, v any) (operand, error) {
	switch x := v.(type) {
	case *Array:
		if x == nil || x.dev == nil && x.err == nil {
			return operand{}, nilArray(op, x)
		}
		if x.leaf.Load() == nil { // else materialised, open and not failed
			if _, err := x.use(op); err != nil {
				return operand{}, err
			}
		}
		return operand{arr: x}, nil
	case nil:
		return operand{}, errorf(op, ErrDType, "nil operand")
	}
	s, ok, err := scalarOf(v)
	if err != nil {
		return operand{}, errorf(op, ErrValue, "%v", err)
	}
	if !ok {
		return operand{}, errorf(op, ErrDType, "unsupported operand type %T", v)
	}
	return operand{sc: s}, nil
}

func (o operand) shape() []int {
	if o.arr != nil {
		return o.arr.shape
	}
	return nil
}

// commonDType combines operands: arrays by Promote, array and scalar by
// the weak rule, scalars by their natural types. fit reports whether every
// integer scalar fits the result. Arrays whose dtypes have no promotion
// rule are an ErrDType error of op.
func commonDType(op string, ops []operand) (dt DType, fit bool, err error) {
	var arr DType
	var weakArr [3]scalar
	weak := weakArr[:0]
	for _, o := range ops {
		if o.arr != nil {
			if arr == 0 {
				arr = o.arr.dt
			} else if p := Promote(arr, o.arr.dt); p.Valid() {
				arr = p
			} else {
				return 0, false, noPromotion(op, arr, o.arr.dt)
			}
		} else {
			weak = append(weak, o.sc)
		}
	}
	if arr == 0 {
		dt = weak[0].natural()
		for _, s := range weak[1:] {
			dt = Promote(dt, s.natural())
		}
		return dt, true, nil
	}
	dt = arr
	for _, s := range weak {
		dt = withWeak(dt, s)
	}
	fit = true
	for _, s := range weak {
		fit = fit && s.fits(dt)
	}
	return dt, fit, nil
}

// device returns the device shared by the array operands.
func device(op string, ops []operand) (*Maker, error) {
	var d *Maker
	for _, o := range ops {
		if o.arr == nil {
			continue
		}
		if d == nil {
			d = o.arr.dev
		} else if o.arr.dev != d {
			return nil, errorf(op, ErrDevice, "arrays on different devices (%v and %v)", d, o.arr.dev)
		}
	}
	if d == nil {
		d = Default()
	}
	return d, nil
}

// exprs returns each operand's expression cast to dt, for a node of shape,
// in out (len(ops), at most 3).
func exprs(out []*expr, pn *pins, op string, shape []int, dt DType, ops []operand) error {
	var arrs [3]*Array
	na := 0
	for _, o := range ops {
		if o.arr != nil {
			arrs[na] = o.arr
			na++
		}
	}
	var aes [3]*expr
	if err := operandExprs(aes[:na], pn, op, shape, arrs[:na]); err != nil {
		return err
	}
	k := 0
	for i, o := range ops {
		if o.arr != nil {
			out[i] = castExpr(aes[k], dt)
			k++
		} else {
			out[i] = scalarExpr(o.sc.as(dt))
		}
	}
	return nil
}

func (a *Array) unary(name string, op backend.Op) *Array {
	defer runtime.KeepAlive(a)
	if a != nil && a.dt.IsComplex() {
		return a.complexUnary(name, op)
	}
	var pn pins
	defer pn.release()
	e, err := a.exprOf(name, &pn)
	if err != nil {
		return failed(err)
	}
	dt := a.dt
	if dt == Bool && backend.Ops[op].OnBool != 0 {
		op = backend.Ops[op].OnBool
	}
	switch {
	case op.IsTranscendental():
		dt = floatFor(dt)
		return a.dev.lazyCompute(op, dt, dt, a.shape, castExpr(e, dt))
	case op.IsPredicate():
		if !dt.IsFloating() {
			// Integers are never NaN or infinite.
			return a.dev.lazy(fullExpr(scalar{kind: weakBool, b: op == backend.OpIsFinite}.as(Bool), a.shape))
		}
		return a.dev.lazyCompute(op, dt, Bool, a.shape, e)
	case op == backend.OpNot:
		return a.dev.lazy(node(op, Bool, a.shape, castExpr(e, Bool)))
	case !backend.Supports(op, dt.Compute().be()):
		return failed(errorf(name, ErrDType, "not supported for %v", dt))
	}
	identity := false
	switch op {
	case backend.OpFloor, backend.OpCeil, backend.OpRound, backend.OpTrunc:
		identity = !dt.IsFloating()
	case backend.OpAbs, backend.OpReLU:
		identity = dt.IsUnsigned() || dt == Bool
	case backend.OpSquare:
		identity = dt == Bool
	}
	if identity {
		return a.dev.lazy(node(backend.OpCast, dt, a.shape, e))
	}
	return a.dev.lazyCompute(op, dt, dt, a.shape, e)
}

// fullExpr is a constant of the given shape.
func fullExpr(v backend.Scalar, shape []int) *expr {
	e := scalarExpr(v)
	e.shape = shape
	return e
}

// binaryOp builds an elementwise node of two operands.
func binaryOp(name string, op backend.Op, x, y any) *Array {
	// The test first: complexBinary's deferred calls are not free even
	// when it returns early.
	if isComplexOperand(x) || isComplexOperand(y) {
		if z, ok := complexBinary(name, op, x, y); ok {
			return z
		}
	}
	if xa, ok := x.(*Array); ok {
		var z *Array
		switch yv := y.(type) {
		case *Array:
			z = binaryArrays(op, xa, yv)
		case float64:
			z = binaryScalar(op, xa, scalar{kind: weakFloat, f: yv})
		case int:
			z = binaryScalar(op, xa, scalar{kind: weakInt, i: int64(yv)})
		case float32:
			z = binaryScalar(op, xa, scalar{kind: weakFloat, f: float64(yv)})
		}
		if z != nil {
			return z
		}
	}
	ox, err := toOperand(name, x)
	if err != nil {
		return failed(err)
	}
	oy, err := toOperand(name, y)
	if err != nil {
		return failed(err)
	}
	z := binaryOperands(name, op, ox, oy)
	runtime.KeepAlive(ox.arr)
	runtime.KeepAlive(oy.arr)
	return z
}

// binaryArrays is binaryOp's usual case made short: two evaluated (open,
// not failed) arrays of one device, dtype and shape, and an operation
// whose result has their dtype (not a comparison, a logical operation or
// an integer division, not a storage dtype). It returns nil for anything
// else. What it builds is what the general path would: the node of op
// over the two leaves (the same leaf twice for x op x).
func binaryArrays(op backend.Op, x, y *Array) *Array {
	if x == nil || y == nil {
		return nil
	}
	ex, ey := x.leaf.Load(), y.leaf.Load() // nil unless evaluated, open and not failed
	if ex == nil || ey == nil || x.dev != y.dev || x.dt != y.dt || !sameShape(x.shape, y.shape) {
		return nil
	}
	dt := x.dt
	if dt.IsStorage() || op.IsCompare() || op.IsLogical() || op == backend.OpDiv && !dt.IsFloating() || !backend.Supports(op, dt.be()) {
		return nil
	}
	r := len(x.shape)
	z := x.dev.pendNode(op, dt, x.shape[:r:r], ex, ey) // x's dtype and shape: the size fits
	runtime.KeepAlive(x)                               // until z holds references to their storages
	runtime.KeepAlive(y)
	return z
}

// binaryScalar is binaryOp's short path for an evaluated array and a Go
// scalar that takes the array's dtype (NEP 50) and fits it, and an
// operation whose result has that dtype, as binaryArrays; nil for anything
// else. The scalar's node is shared with earlier operations that used the
// same value (expressions are immutable).
func binaryScalar(op backend.Op, x *Array, s scalar) *Array {
	if x == nil {
		return nil
	}
	ex := x.leaf.Load() // nil unless evaluated, open and not failed
	if ex == nil {
		return nil
	}
	dt := x.dt
	if dt.IsStorage() || withWeak(dt, s) != dt || !s.fits(dt) || op.IsCompare() || op.IsLogical() ||
		op == backend.OpDiv && !dt.IsFloating() || !backend.Supports(op, dt.be()) {
		return nil
	}
	r := len(x.shape)
	z := x.dev.pendNode(op, dt, x.shape[:r:r], ex, x.dev.scalarExpr(s.as(dt)))
	runtime.KeepAlive(x) // until z holds a reference to its storage
	return z
}

// scalarExpr is scalarExpr(v), from a small cache of the Maker's recent
// scalar nodes (by dtype and bits).
func (m *Maker) scalarExpr(v backend.Scalar) *expr {
	fb := math.Float64bits(v.F)
	h := (fb ^ uint64(v.I)*0x9e3779b97f4a7c15 ^ uint64(v.DType)) * 0xff51afd7ed558ccd
	slot := &m.scalars[h>>(64-scalarCacheBits)]
	if e := slot.Load(); e != nil && e.sc.DType == v.DType && e.sc.I == v.I && math.Float64bits(e.sc.F) == fb {
		return e
	}
	e := scalarExpr(v)
	slot.Store(e)
	return e
}

// binaryOperands is binaryOp of resolved operands.
func binaryOperands(name string, op backend.Op, ox, oy operand) *Array {
	ops := []operand{ox, oy}
	dev, err := device(name, ops)
	if err != nil {
		return failed(err)
	}
	shape, err := broadcastShapes(name, ox.shape(), oy.shape())
	if err != nil {
		return failed(err)
	}
	dt, fit, err := commonDType(name, ops)
	if err != nil {
		return failed(err)
	}
	if dt == Bool && backend.Ops[op].OnBool != 0 {
		op = backend.Ops[op].OnBool
	}
	res := dt
	switch {
	case op.IsCompare():
		if !fit {
			// NumPy 2 compares out-of-range Python ints exactly: in int64,
			// or for uint64 (whose out-of-range ints are negative) in
			// float64, which keeps the order of uint64 and negative values.
			if dt == Uint64 {
				dt = Float64
			} else {
				dt = Int64
			}
		}
		res = Bool
	case op.IsLogical():
		dt, res = Bool, Bool
	case !fit:
		for _, o := range ops {
			if o.isScalar() && !o.sc.fits(dt) {
				return failed(errorf(name, ErrValue, "Go integer %d is out of range for %v", o.sc.i, dt))
			}
		}
	case op == backend.OpDiv:
		dt = floatDiv(dt)
		res = dt
	case op.IsTranscendental():
		dt = floatFor(dt)
		res = dt
	case !backend.Supports(op, dt.Compute().be()):
		return failed(errorf(name, ErrDType, "not supported for %v", dt))
	}
	if err := checkShape(name, res, shape); err != nil {
		return failed(err)
	}
	var es [2]*expr
	var pn pins
	if err := exprs(es[:], &pn, name, shape, dt, ops); err != nil {
		pn.release()
		return failed(err)
	}
	z := dev.lazyCompute(op, dt, res, shape, es[:]...)
	pn.release()
	return z
}

// floatDiv is the dtype of true division: integers and bool divide in float64.
func floatDiv(d DType) DType {
	if d.IsFloating() {
		return d
	}
	return Float64
}

// Where returns x where cond is true and y elsewhere, broadcasting all
// three (cond is converted to bool; x and y promote together).
func Where(cond, x, y any) *Array {
	const name = "Where"
	if isComplexOperand(x) || isComplexOperand(y) || isComplexOperand(cond) {
		return complexWhere(cond, x, y)
	}
	var ops [3]operand
	for i, v := range []any{cond, x, y} {
		o, err := toOperand(name, v)
		if err != nil {
			return failed(err)
		}
		ops[i] = o
		defer runtime.KeepAlive(o.arr)
	}
	dev, err := device(name, ops[:])
	if err != nil {
		return failed(err)
	}
	shape, err := broadcastShapes(name, ops[0].shape(), ops[1].shape(), ops[2].shape())
	if err != nil {
		return failed(err)
	}
	dt, fit, err := commonDType(name, ops[1:])
	if err != nil {
		return failed(err)
	}
	if !fit {
		return failed(errorf(name, ErrValue, "a Go integer is out of range for %v", dt))
	}
	if err := checkShape(name, dt, shape); err != nil {
		return failed(err)
	}
	var pn pins
	defer pn.release()
	var ce [1]*expr
	if err := exprs(ce[:], &pn, name, shape, Bool, ops[:1]); err != nil {
		return failed(err)
	}
	var ve [2]*expr
	if err := exprs(ve[:], &pn, name, shape, dt, ops[1:]); err != nil {
		return failed(err)
	}
	return dev.lazyCompute(backend.OpWhere, dt, dt, shape, ce[0], ve[0], ve[1])
}

// Unary operations. Functions defined only on floats (Sqrt, Exp, Log, Sin,
// ..., Sigmoid, Reciprocal) compute integer arguments in float64 (int32,
// int64) or float32 (uint8, bool). Floor, Ceil, Round, Trunc keep integer
// dtypes unchanged.

// Neg returns -a (integers wrap; not defined for bool).
func (a *Array) Neg() *Array { return a.unary("Neg", backend.OpNeg) }

// Abs returns |a|.
func (a *Array) Abs() *Array { return a.unary("Abs", backend.OpAbs) }

// Sign returns -1, 0 or 1 (NaN for NaN).
func (a *Array) Sign() *Array { return a.unary("Sign", backend.OpSign) }

// Square returns a*a.
func (a *Array) Square() *Array { return a.unary("Square", backend.OpSquare) }

// Reciprocal returns 1/a.
func (a *Array) Reciprocal() *Array { return a.unary("Reciprocal", backend.OpReciprocal) }

// Sqrt returns the square root.
func (a *Array) Sqrt() *Array { return a.unary("Sqrt", backend.OpSqrt) }

// Exp returns e^a.
func (a *Array) Exp() *Array { return a.unary("Exp", backend.OpExp) }

// Exp2 returns 2^a.
func (a *Array) Exp2() *Array { return a.unary("Exp2", backend.OpExp2) }

// Expm1 returns e^a - 1, accurate near 0.
func (a *Array) Expm1() *Array { return a.unary("Expm1", backend.OpExpm1) }

// Log returns the natural logarithm.
func (a *Array) Log() *Array { return a.unary("Log", backend.OpLog) }

// Log2 returns the base-2 logarithm.
func (a *Array) Log2() *Array { return a.unary("Log2", backend.OpLog2) }

// Log10 returns the base-10 logarithm.
func (a *Array) Log10() *Array { return a.unary("Log10", backend.OpLog10) }

// Log1p returns log(1+a), accurate near 0.
func (a *Array) Log1p() *Array { return a.unary("Log1p", backend.OpLog1p) }

// Sin returns the sine.
func (a *Array) Sin() *Array { return a.unary("Sin", backend.OpSin) }

// Cos returns the cosine.
func (a *Array) Cos() *Array { return a.unary("Cos", backend.OpCos) }

// Tan returns the tangent.
func (a *Array) Tan() *Array { return a.unary("Tan", backend.OpTan) }

// Tanh returns the hyperbolic tangent.
func (a *Array) Tanh() *Array { return a.unary("Tanh", backend.OpTanh) }

// Sigmoid returns 1/(1+e^-a).
func (a *Array) Sigmoid() *Array { return a.unary("Sigmoid", backend.OpSigmoid) }

// ReLU returns max(a, 0) (NaN stays NaN; not defined for bool).
func (a *Array) ReLU() *Array { return a.unary("ReLU", backend.OpReLU) }

// Floor rounds toward -Inf.
func (a *Array) Floor() *Array { return a.unary("Floor", backend.OpFloor) }

// Ceil rounds toward +Inf.
func (a *Array) Ceil() *Array { return a.unary("Ceil", backend.OpCeil) }

// Round rounds to the nearest integer, halves to even (as np.round).
func (a *Array) Round() *Array { return a.unary("Round", backend.OpRound) }

// Trunc rounds toward zero.
func (a *Array) Trunc() *Array { return a.unary("Trunc", backend.OpTrunc) }

// IsNaN reports NaN elements (false for integers).
func (a *Array) IsNaN() *Array { return a.unary("IsNaN", backend.OpIsNaN) }

// IsInf reports infinite elements.
func (a *Array) IsInf() *Array { return a.unary("IsInf", backend.OpIsInf) }

// IsFinite reports finite elements.
func (a *Array) IsFinite() *Array { return a.unary("IsFinite", backend.OpIsFinite) }

// Arcsin returns the inverse sine (NaN outside [-1, 1]).
func (a *Array) Arcsin() *Array { return a.unary("Arcsin", backend.OpArcsin) }

// Arccos returns the inverse cosine (NaN outside [-1, 1]).
func (a *Array) Arccos() *Array { return a.unary("Arccos", backend.OpArccos) }

// Arctan returns the inverse tangent.
func (a *Array) Arctan() *Array { return a.unary("Arctan", backend.OpArctan) }

// Sinh returns the hyperbolic sine.
func (a *Array) Sinh() *Array { return a.unary("Sinh", backend.OpSinh) }

// Cosh returns the hyperbolic cosine.
func (a *Array) Cosh() *Array { return a.unary("Cosh", backend.OpCosh) }

// Arcsinh returns the inverse hyperbolic sine.
func (a *Array) Arcsinh() *Array { return a.unary("Arcsinh", backend.OpArcsinh) }

// Arccosh returns the inverse hyperbolic cosine (NaN below 1).
func (a *Array) Arccosh() *Array { return a.unary("Arccosh", backend.OpArccosh) }

// Arctanh returns the inverse hyperbolic tangent (±Inf at ±1, NaN beyond).
func (a *Array) Arctanh() *Array { return a.unary("Arctanh", backend.OpArctanh) }

// Erf returns the error function.
func (a *Array) Erf() *Array { return a.unary("Erf", backend.OpErf) }

// Erfc returns the complementary error function 1 - Erf(a), accurate for
// large a.
func (a *Array) Erfc() *Array { return a.unary("Erfc", backend.OpErfc) }

// Deg2Rad converts degrees to radians.
func (a *Array) Deg2Rad() *Array { return a.unary("Deg2Rad", backend.OpDeg2Rad) }

// Rad2Deg converts radians to degrees.
func (a *Array) Rad2Deg() *Array { return a.unary("Rad2Deg", backend.OpRad2Deg) }

// BitwiseNot returns ^a, NumPy's bitwise_not (invert): on bool it is
// LogicalNot; floats are an ErrDType error.
func (a *Array) BitwiseNot() *Array { return a.unary("BitwiseNot", backend.OpBitNot) }

// LogicalNot returns !bool(a).
func (a *Array) LogicalNot() *Array { return a.unary("LogicalNot", backend.OpNot) }

// Binary operations broadcast their operands (arrays or Go scalars) and
// promote them (see Promote and the weak scalar rule).

// Add returns a + b (bool: logical or).
func (a *Array) Add(b any) *Array { return binaryOp("Add", backend.OpAdd, a, b) }

// Sub returns a - b (not defined for bool).
func (a *Array) Sub(b any) *Array { return binaryOp("Sub", backend.OpSub, a, b) }

// Mul returns a * b (bool: logical and).
func (a *Array) Mul(b any) *Array { return binaryOp("Mul", backend.OpMul, a, b) }

// Div returns a / b, true division: integers divide in float64.
func (a *Array) Div(b any) *Array { return binaryOp("Div", backend.OpDiv, a, b) }

// FloorDiv returns floor(a / b) (Python's //; integer division by zero gives 0).
func (a *Array) FloorDiv(b any) *Array { return binaryOp("FloorDiv", backend.OpFloorDiv, a, b) }

// Mod returns a - FloorDiv(a, b)*b, with the sign of b (Python's %).
func (a *Array) Mod(b any) *Array { return binaryOp("Mod", backend.OpMod, a, b) }

// Pow returns a^b. Integers wrap; an integer raised to a negative integer
// is 1/a^-b truncated (NumPy raises an error instead).
func (a *Array) Pow(b any) *Array { return binaryOp("Pow", backend.OpPow, a, b) }

// Maximum returns the elementwise maximum, propagating NaN.
func (a *Array) Maximum(b any) *Array { return binaryOp("Maximum", backend.OpMaximum, a, b) }

// Minimum returns the elementwise minimum, propagating NaN.
func (a *Array) Minimum(b any) *Array { return binaryOp("Minimum", backend.OpMinimum, a, b) }

// Eq returns a == b.
func (a *Array) Eq(b any) *Array { return binaryOp("Eq", backend.OpEq, a, b) }

// Ne returns a != b.
func (a *Array) Ne(b any) *Array { return binaryOp("Ne", backend.OpNe, a, b) }

// Lt returns a < b.
func (a *Array) Lt(b any) *Array { return binaryOp("Lt", backend.OpLt, a, b) }

// Le returns a <= b.
func (a *Array) Le(b any) *Array { return binaryOp("Le", backend.OpLe, a, b) }

// Gt returns a > b.
func (a *Array) Gt(b any) *Array { return binaryOp("Gt", backend.OpGt, a, b) }

// Ge returns a >= b.
func (a *Array) Ge(b any) *Array { return binaryOp("Ge", backend.OpGe, a, b) }

// LogicalAnd returns bool(a) && bool(b).
func (a *Array) LogicalAnd(b any) *Array { return binaryOp("LogicalAnd", backend.OpAnd, a, b) }

// LogicalOr returns bool(a) || bool(b).
func (a *Array) LogicalOr(b any) *Array { return binaryOp("LogicalOr", backend.OpOr, a, b) }

// LogicalXor returns bool(a) != bool(b).
func (a *Array) LogicalXor(b any) *Array { return binaryOp("LogicalXor", backend.OpXor, a, b) }

// Arctan2 returns the angle of the point (b, a), atan2(a, b), in [-Pi, Pi].
// Integer operands compute in float, as the unary float functions do.
func (a *Array) Arctan2(b any) *Array { return binaryOp("Arctan2", backend.OpArctan2, a, b) }

// Hypot returns sqrt(a*a + b*b) without undue overflow.
func (a *Array) Hypot(b any) *Array { return binaryOp("Hypot", backend.OpHypot, a, b) }

// Copysign returns |a| with the sign of b.
func (a *Array) Copysign(b any) *Array { return binaryOp("Copysign", backend.OpCopysign, a, b) }

// Bitwise operations take integers and bool, as NumPy's: on bool they are
// the logical operations, and floats are an ErrDType error.

// BitwiseAnd returns a & b.
func (a *Array) BitwiseAnd(b any) *Array { return binaryOp("BitwiseAnd", backend.OpBitAnd, a, b) }

// BitwiseOr returns a | b.
func (a *Array) BitwiseOr(b any) *Array { return binaryOp("BitwiseOr", backend.OpBitOr, a, b) }

// BitwiseXor returns a ^ b.
func (a *Array) BitwiseXor(b any) *Array { return binaryOp("BitwiseXor", backend.OpBitXor, a, b) }

// LeftShift returns a << b on integers. A count of the bit width or more,
// or a negative one, gives 0 (as NumPy's left_shift).
func (a *Array) LeftShift(b any) *Array { return binaryOp("LeftShift", backend.OpLeftShift, a, b) }

// RightShift returns a >> b on integers, arithmetic for signed ones. A
// count of the bit width or more, or a negative one, gives 0, or -1 for a
// negative a (as NumPy's right_shift).
func (a *Array) RightShift(b any) *Array { return binaryOp("RightShift", backend.OpRightShift, a, b) }

// Clip limits values to [lo, hi]: Minimum(Maximum(a, lo), hi), as np.clip.
func (a *Array) Clip(lo, hi any) *Array {
	return a.Maximum(lo).Minimum(hi)
}

// AsType converts to dtype dt (a new array; floats to integers truncate,
// saturate and map NaN to 0; nonzero to bool is true).
func (a *Array) AsType(dt DType) *Array {
	defer runtime.KeepAlive(a)
	if !dt.Valid() {
		return failed(errorf("AsType", ErrDType, "invalid dtype %v", dt))
	}
	if a != nil && (dt.IsComplex() || a.dt.IsComplex()) {
		return a.complexAsType(dt)
	}
	var pn pins
	defer pn.release()
	e, err := a.exprOf("AsType", &pn)
	if err != nil {
		return failed(err)
	}
	return a.dev.lazy(node(backend.OpCast, dt, a.shape, castExpr(e, dt)))
}
