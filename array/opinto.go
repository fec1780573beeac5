package array

import (
	"runtime"
	"strconv"
	"sync"

	"github.com/gocu-dev/gocu/array/internal/backend"
)

// Elementwise operations into existing arrays, NumPy's
// np.add(x, y, out=dst). BinaryInto(dst, OpAdd, x, y) is
// x.Add(y).Into(dst) without the pending array: in a loop over
// evaluated arrays of dst's dtype it allocates nothing.
//
// They are functions of an operation value, as ReduceInto takes a
// ReduceOp, not a method per operation: one entry point each, which
// table-driven code (optimisers, layers) can call. BinaryInto is generic
// in its operands so that a Go scalar is passed by value; an operand of
// type any would box a scalar held in a variable, an allocation per call.

// BinaryOp names an elementwise operation of two operands for BinaryInto.
// Each is the Array method of the same name without its "Op" prefix.
type BinaryOp uint8

// The binary operations.
const (
	OpAdd BinaryOp = iota
	OpSub
	OpMul
	OpDiv
	OpFloorDiv
	OpMod
	OpPow
	OpMaximum
	OpMinimum
	OpEq
	OpNe
	OpLt
	OpLe
	OpGt
	OpGe
	OpLogicalAnd
	OpLogicalOr
	OpLogicalXor
	OpArctan2
	OpHypot
	OpCopysign
	OpBitwiseAnd
	OpBitwiseOr
	OpBitwiseXor
	OpLeftShift
	OpRightShift
)

var binaryOps = [...]backend.Op{
	OpAdd: backend.OpAdd, OpSub: backend.OpSub, OpMul: backend.OpMul, OpDiv: backend.OpDiv,
	OpFloorDiv: backend.OpFloorDiv, OpMod: backend.OpMod, OpPow: backend.OpPow,
	OpMaximum: backend.OpMaximum, OpMinimum: backend.OpMinimum,
	OpEq: backend.OpEq, OpNe: backend.OpNe, OpLt: backend.OpLt, OpLe: backend.OpLe, OpGt: backend.OpGt, OpGe: backend.OpGe,
	OpLogicalAnd: backend.OpAnd, OpLogicalOr: backend.OpOr, OpLogicalXor: backend.OpXor,
	OpArctan2: backend.OpArctan2, OpHypot: backend.OpHypot, OpCopysign: backend.OpCopysign,
	OpBitwiseAnd: backend.OpBitAnd, OpBitwiseOr: backend.OpBitOr, OpBitwiseXor: backend.OpBitXor,
	OpLeftShift: backend.OpLeftShift, OpRightShift: backend.OpRightShift,
}

func (o BinaryOp) String() string {
	if int(o) < len(binaryOps) {
		return backend.Ops[binaryOps[o]].Method
	}
	return "BinaryOp(" + strconv.Itoa(int(o)) + ")"
}

// UnaryOp names an elementwise operation of one operand for UnaryInto.
// Each is the Array method of the same name without its "Op" prefix.
type UnaryOp uint8

// The unary operations.
const (
	OpNeg UnaryOp = iota
	OpAbs
	OpSign
	OpSquare
	OpReciprocal
	OpSqrt
	OpExp
	OpExp2
	OpExpm1
	OpLog
	OpLog2
	OpLog10
	OpLog1p
	OpSin
	OpCos
	OpTan
	OpTanh
	OpSigmoid
	OpReLU
	OpFloor
	OpCeil
	OpRound
	OpTrunc
	OpIsNaN
	OpIsInf
	OpIsFinite
	OpArcsin
	OpArccos
	OpArctan
	OpSinh
	OpCosh
	OpArcsinh
	OpArccosh
	OpArctanh
	OpErf
	OpErfc
	OpDeg2Rad
	OpRad2Deg
	OpBitwiseNot
	OpLogicalNot
)

var unaryOps = [...]backend.Op{
	OpNeg: backend.OpNeg, OpAbs: backend.OpAbs, OpSign: backend.OpSign, OpSquare: backend.OpSquare,
	OpReciprocal: backend.OpReciprocal, OpSqrt: backend.OpSqrt, OpExp: backend.OpExp, OpExp2: backend.OpExp2,
	OpExpm1: backend.OpExpm1, OpLog: backend.OpLog, OpLog2: backend.OpLog2, OpLog10: backend.OpLog10,
	OpLog1p: backend.OpLog1p, OpSin: backend.OpSin, OpCos: backend.OpCos, OpTan: backend.OpTan,
	OpTanh: backend.OpTanh, OpSigmoid: backend.OpSigmoid, OpReLU: backend.OpReLU, OpFloor: backend.OpFloor,
	OpCeil: backend.OpCeil, OpRound: backend.OpRound, OpTrunc: backend.OpTrunc, OpIsNaN: backend.OpIsNaN,
	OpIsInf: backend.OpIsInf, OpIsFinite: backend.OpIsFinite, OpArcsin: backend.OpArcsin,
	OpArccos: backend.OpArccos, OpArctan: backend.OpArctan, OpSinh: backend.OpSinh, OpCosh: backend.OpCosh,
	OpArcsinh: backend.OpArcsinh, OpArccosh: backend.OpArccosh, OpArctanh: backend.OpArctanh,
	OpErf: backend.OpErf, OpErfc: backend.OpErfc, OpDeg2Rad: backend.OpDeg2Rad, OpRad2Deg: backend.OpRad2Deg,
	OpBitwiseNot: backend.OpBitNot, OpLogicalNot: backend.OpNot,
}

func (o UnaryOp) String() string {
	if int(o) < len(unaryOps) {
		return backend.Ops[unaryOps[o]].Method
	}
	return "UnaryOp(" + strconv.Itoa(int(o)) + ")"
}

// Operand is an operand of BinaryInto: an array or a Go scalar, which is
// weak as in the Array methods.
type Operand interface {
	*Array | bool | int | int8 | int16 | int32 | int64 | uint | uint8 | uint16 | uint32 | uint64 |
		float32 | float64 | complex64 | complex128
}

// BinaryInto writes x op y into dst: x.Add(y).Into(dst) for OpAdd, with
// the same results and errors (see Into: the result is broadcast to dst's
// shape and converted to its dtype). It allocates nothing when the array
// operands are evaluated, of one device and of the dtype of dst, scalar
// operands take that dtype, and op keeps it (not a comparison, a logical
// operation or a division of integers). Other cases, and complex ones,
// make the pending array.
func BinaryInto[X, Y Operand](dst *Array, op BinaryOp, x X, y Y) error {
	if int(op) >= len(binaryOps) {
		return errorf("BinaryInto", ErrValue, "unknown operation %v", op)
	}
	bop := binaryOps[op]
	ox, okx := operandOf(x)
	oy, oky := operandOf(y)
	if okx && oky {
		if done, err := binaryInto(bop, dst, ox, oy); done {
			return err
		}
	}
	return binaryIntoAny(bop, dst, x, y)
}

// binaryIntoAny is BinaryInto through the pending array.
func binaryIntoAny[X, Y Operand](op backend.Op, dst *Array, x X, y Y) error {
	name := backend.Ops[op].Method
	xv, yv := any(x), any(y)
	_, xa := xv.(*Array)
	_, ya := yv.(*Array)
	if !xa && !ya && dst != nil && dst.dev != nil {
		// Two scalars: on dst's device, not the default one.
		s := dst.dev.Scalar(xv)
		defer s.Close()
		xv = s
	}
	z := binaryOp(name, op, xv, yv)
	err := z.Into(dst)
	z.Close()
	return err
}

// operandOf converts v without boxing it; ok is false for values the
// zero-allocation path does not take (complex scalars, uints above
// MaxInt64).
func operandOf[T Operand](v T) (o operand, ok bool) {
	// A pointer to the copy v: the type switch reads it, nothing keeps it.
	switch p := any(&v).(type) {
	case **Array:
		return operand{arr: *p}, *p != nil
	case *bool:
		return operand{sc: scalar{kind: weakBool, b: *p}}, true
	case *int:
		return operand{sc: scalar{kind: weakInt, i: int64(*p)}}, true
	case *int8:
		return operand{sc: scalar{kind: weakInt, i: int64(*p)}}, true
	case *int16:
		return operand{sc: scalar{kind: weakInt, i: int64(*p)}}, true
	case *int32:
		return operand{sc: scalar{kind: weakInt, i: int64(*p)}}, true
	case *int64:
		return operand{sc: scalar{kind: weakInt, i: *p}}, true
	case *uint:
		return operand{sc: scalar{kind: weakInt, i: int64(*p)}}, uint64(*p) <= 1<<63-1
	case *uint8:
		return operand{sc: scalar{kind: weakInt, i: int64(*p)}}, true
	case *uint16:
		return operand{sc: scalar{kind: weakInt, i: int64(*p)}}, true
	case *uint32:
		return operand{sc: scalar{kind: weakInt, i: int64(*p)}}, true
	case *uint64:
		return operand{sc: scalar{kind: weakInt, i: int64(*p)}}, *p <= 1<<63-1
	case *float32:
		return operand{sc: scalar{kind: weakFloat, f: float64(*p)}}, true
	case *float64:
		return operand{sc: scalar{kind: weakFloat, f: *p}}, true
	}
	return operand{}, false
}

// binaryInto is BinaryInto without allocation, as binaryArrays and
// binaryScalar build the node; done is false for the cases it leaves to
// the general path, which also reports every error.
func binaryInto(op backend.Op, dst *Array, x, y operand) (done bool, err error) {
	var a *Array // an array operand
	switch {
	case x.arr != nil:
		a = x.arr
	case y.arr != nil:
		a = y.arr
	default:
		return false, nil
	}
	dt := a.dt
	if !shortOp(op, dt) {
		return false, nil
	}
	var sc intoScalars
	ex, ok := sc.expr(0, x, dt)
	if !ok {
		return false, nil
	}
	ey, ok := sc.expr(1, y, dt)
	if !ok {
		return false, nil
	}
	done, err = intoNode(dst, op, dt, &sc, ex, ey)
	runtime.KeepAlive(x.arr)
	runtime.KeepAlive(y.arr)
	return done, err
}

// shortOp reports whether op on operands of dtype dt gives dt and takes
// the short paths (binaryArrays, binaryScalar, binaryInto).
func shortOp(op backend.Op, dt DType) bool {
	return !dt.IsStorage() && !op.IsCompare() && !op.IsLogical() &&
		(op != backend.OpDiv || dt.IsFloating()) && backend.Supports(op, dt.be())
}

// intoScalars holds the scalar operands of a binaryInto while it is
// built (on the stack; intoNode makes their nodes).
type intoScalars struct {
	v  [2]backend.Scalar
	is [2]bool
}

// expr returns o's expression for an operation of dtype dt: an evaluated
// array's leaf, or the scalar's node in slot i. ok is false where the
// short path does not apply.
func (s *intoScalars) expr(i int, o operand, dt DType) (*expr, bool) {
	if a := o.arr; a != nil {
		e := a.evaluatedLeaf()
		return e, e != nil && a.dt == dt
	}
	if withWeak(dt, o.sc) != dt || !o.sc.fits(dt) {
		return nil, false
	}
	s.v[i], s.is[i] = o.sc.as(dt), true
	return nil, true // intoNode links the slot
}

// UnaryInto writes op x into dst: x.Exp().Into(dst) for OpExp, with the
// same results and errors (see Into). It allocates nothing when x is
// evaluated, on dst's device and of dst's dtype, and op keeps that dtype
// (a float function of a float array, an arithmetic one of a number).
func UnaryInto(dst *Array, op UnaryOp, x *Array) error {
	if int(op) >= len(unaryOps) {
		return errorf("UnaryInto", ErrValue, "unknown operation %v", op)
	}
	uop := unaryOps[op]
	if x != nil {
		if done, err := unaryInto(uop, dst, x); done {
			return err
		}
	}
	z := x.unary(backend.Ops[uop].Method, uop)
	err := z.Into(dst)
	z.Close()
	return err
}

// unaryInto is UnaryInto without allocation, as unary builds the node;
// done is false for the cases it leaves to the general path.
func unaryInto(op backend.Op, dst *Array, x *Array) (done bool, err error) {
	e := x.evaluatedLeaf()
	dt := x.dt
	if e == nil || dt.IsStorage() || dt.IsComplex() || dt == Bool {
		return false, nil
	}
	switch {
	case op.IsTranscendental():
		if floatFor(dt) != dt {
			return false, nil
		}
	case op.IsPredicate(), op == backend.OpNot, !backend.Supports(op, dt.Compute().be()):
		return false, nil
	}
	switch op {
	case backend.OpFloor, backend.OpCeil, backend.OpRound, backend.OpTrunc:
		if !dt.IsFloating() {
			op = backend.OpCast // unary's identity
		}
	case backend.OpAbs, backend.OpReLU:
		if dt.IsUnsigned() {
			op = backend.OpCast
		}
	}
	var sc intoScalars
	done, err = intoNode(dst, op, dt, &sc, e, nil)
	runtime.KeepAlive(x)
	return done, err
}

// intoScratch is the node intoNode evaluates and its scalars: expressions
// outlive no call, so they are recycled.
type intoScratch struct {
	node expr
	sc   [2]expr
}

var intoScratches = sync.Pool{New: func() any { return new(intoScratch) }}

// intoNode evaluates the node op(args) of dtype dt into dst, as Into
// would, where that needs no allocation: dst evaluated, of dtype dt, on
// the operands' device, not a broadcast view, and read by no operand at
// other positions. A nil argument is the scalar of sc in its slot; the
// second is absent for a unary op. done is false where the general path
// must do the work.
func intoNode(dst *Array, op backend.Op, dt DType, sc *intoScalars, x, y *expr) (done bool, err error) {
	if dst == nil {
		return false, nil
	}
	d := dst.evaluatedLeaf()
	if d == nil || dst.dt != dt {
		return false, nil
	}
	for _, e := range [2]*expr{x, y} {
		if e != nil && (e.st.dev != dst.dev || !broadcastsTo(e.shape, dst.shape) ||
			e.st == d.st && !sameLayout(&e.lay, &d.lay)) {
			return false, nil
		}
	}
	for i, n := range d.lay.Shape {
		if n > 1 && d.lay.Strides[i] == 0 {
			return false, nil // Into reports it
		}
	}
	s := intoScratches.Get().(*intoScratch)
	args := [2]*expr{x, y}
	nargs := 2
	if y == nil && !sc.is[1] {
		nargs = 1
	}
	for i := range nargs {
		if sc.is[i] {
			// Field by field: the scalar nodes hold no pointers, and
			// copying a whole expr would be a bulk write barrier.
			n := &s.sc[i]
			n.op, n.dt, n.sc, n.nodes = backend.OpScalar, dt, sc.v[i], 1
			args[i] = n
		}
	}
	s.node.init(op, dt, dst.shape, args[:nargs])
	d.st.flushDeps()
	err = dst.dev.evalInto(&s.node, dst.shape, backend.Operand{Buf: d.st.buf, Layout: d.lay})
	// Drop what the node points to before it is reused.
	for i := range nargs {
		s.node.argv[i] = nil
	}
	s.node.shape, s.node.iota = nil, false
	intoScratches.Put(s)
	runtime.KeepAlive(dst)
	return true, deviceErr("Into", err)
}

// evaluatedLeaf returns a's leaf expression, made if need be, or nil
// unless a is evaluated, open and not failed.
func (a *Array) evaluatedLeaf() *expr {
	if e := a.leaf.Load(); e != nil {
		return e
	}
	if a.dev == nil {
		return nil
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.ex != nil || a.closed || a.err != nil || a.st == nil {
		return nil
	}
	return a.leafLocked()
}
