package backend

// Op is an operation of a fused elementwise program.
type Op uint8

// Leaves, unary, binary and ternary operations. Every node computes in its
// own DType from arguments of that DType, except where noted: package array
// inserts OpCast nodes so that the backends never promote.
const (
	OpInvalid Op = iota

	// Leaves.
	OpInput  // Arg[0]: index into Program.Inputs
	OpScalar // Arg[0]: index into Program.Scalars
	OpIota   // the row-major flat index of the output element, as int64

	// Unary. OpCast converts from the argument's dtype to the node's; OpNot,
	// OpIsNaN, OpIsInf and OpIsFinite produce bool.
	OpCast
	OpNeg
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
	OpNot
	OpIsNaN
	OpIsInf
	OpIsFinite

	// Binary. Comparisons and logical operations produce bool; comparisons
	// take arguments of one (the promoted) dtype, logical ones take bool.
	OpAdd
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
	OpAnd
	OpOr
	OpXor

	// Ternary: Arg[0] is a bool condition, Arg[1] and Arg[2] the values.
	OpWhere

	numOps
)

var opNames = [...]string{
	OpInvalid: "invalid", OpInput: "input", OpScalar: "scalar", OpIota: "iota",
	OpCast: "cast", OpNeg: "neg", OpAbs: "abs", OpSign: "sign", OpSquare: "square",
	OpReciprocal: "reciprocal", OpSqrt: "sqrt", OpExp: "exp", OpExp2: "exp2", OpExpm1: "expm1",
	OpLog: "log", OpLog2: "log2", OpLog10: "log10", OpLog1p: "log1p", OpSin: "sin", OpCos: "cos",
	OpTan: "tan", OpTanh: "tanh", OpSigmoid: "sigmoid", OpReLU: "relu", OpFloor: "floor",
	OpCeil: "ceil", OpRound: "round", OpTrunc: "trunc", OpNot: "not", OpIsNaN: "isnan",
	OpIsInf: "isinf", OpIsFinite: "isfinite",
	OpAdd: "add", OpSub: "sub", OpMul: "mul", OpDiv: "div", OpFloorDiv: "floordiv", OpMod: "mod",
	OpPow: "pow", OpMaximum: "maximum", OpMinimum: "minimum", OpEq: "eq", OpNe: "ne", OpLt: "lt",
	OpLe: "le", OpGt: "gt", OpGe: "ge", OpAnd: "and", OpOr: "or", OpXor: "xor",
	OpWhere: "where",
}

func (o Op) String() string {
	if int(o) < len(opNames) && opNames[o] != "" {
		return opNames[o]
	}
	return "op?"
}

// Arity is the number of node arguments (0 for leaves).
func (o Op) Arity() int {
	switch {
	case o <= OpIota:
		return 0
	case o <= OpIsFinite:
		return 1
	case o <= OpXor:
		return 2
	case o == OpWhere:
		return 3
	}
	return 0
}

// IsLeaf reports whether o reads an input, a scalar or the index.
func (o Op) IsLeaf() bool { return o >= OpInput && o <= OpIota }

// IsCompare reports whether o is a comparison (bool result).
func (o Op) IsCompare() bool { return o >= OpEq && o <= OpGe }

// IsLogical reports whether o is a logical and/or/xor/not (bool operands).
func (o Op) IsLogical() bool { return o == OpAnd || o == OpOr || o == OpXor || o == OpNot }

// IsPredicate reports whether o is a unary float test (bool result).
func (o Op) IsPredicate() bool { return o == OpIsNaN || o == OpIsInf || o == OpIsFinite }

// IsTranscendental reports whether o is a unary operation defined only on
// floats (package array casts integer arguments to a float type first).
func (o Op) IsTranscendental() bool {
	switch o {
	case OpReciprocal, OpSqrt, OpExp, OpExp2, OpExpm1, OpLog, OpLog2, OpLog10, OpLog1p,
		OpSin, OpCos, OpTan, OpTanh, OpSigmoid:
		return true
	}
	return false
}

// UnaryOps and BinaryOps list the computational operations (for tests and
// generators that want to cover them all).
var (
	UnaryOps = []Op{OpCast, OpNeg, OpAbs, OpSign, OpSquare, OpReciprocal, OpSqrt, OpExp, OpExp2,
		OpExpm1, OpLog, OpLog2, OpLog10, OpLog1p, OpSin, OpCos, OpTan, OpTanh, OpSigmoid, OpReLU,
		OpFloor, OpCeil, OpRound, OpTrunc, OpNot, OpIsNaN, OpIsInf, OpIsFinite}
	BinaryOps = []Op{OpAdd, OpSub, OpMul, OpDiv, OpFloorDiv, OpMod, OpPow, OpMaximum, OpMinimum,
		OpEq, OpNe, OpLt, OpLe, OpGt, OpGe, OpAnd, OpOr, OpXor}
)

// Supports reports whether the node operation o is defined for arguments of
// dtype arg (the dtype package array has already cast them to). Package
// array only builds supported nodes; backends may rely on it. Storage
// types (int8, the low-precision floats) support only OpCast, to the
// dtypes CastDefined allows.
func Supports(o Op, arg DType) bool {
	if arg.IsStorage() {
		return o == OpCast
	}
	switch o {
	case OpCast, OpAbs, OpMaximum, OpMinimum, OpEq, OpNe, OpLt, OpLe, OpGt, OpGe, OpWhere,
		OpAdd, OpMul, OpFloor, OpCeil, OpRound, OpTrunc, OpSquare:
		return arg.Valid()
	case OpNeg, OpSub, OpSign, OpFloorDiv, OpMod, OpPow:
		return arg.Valid() && arg != Bool
	case OpReLU:
		return arg.Valid() && arg != Bool
	case OpDiv:
		return arg.IsFloat()
	case OpNot, OpAnd, OpOr, OpXor:
		return arg == Bool
	case OpIsNaN, OpIsInf, OpIsFinite:
		return arg.IsFloat()
	}
	if o.IsTranscendental() {
		return arg.IsFloat()
	}
	return false
}
