package backend

import "math"

// Op is an operation of a fused elementwise program. What each operation
// is, and what the code that runs it derives from, is its row in Ops.
type Op uint8

// Leaves, unary, binary and ternary operations. Every node computes in its
// own DType from arguments of that DType, except where its Kind says
// otherwise: package array inserts OpCast nodes so that the backends never
// promote. The order of the constants means nothing: a new operation goes
// anywhere before numOps, with its row in Ops.
const (
	OpInvalid Op = iota

	OpInput  // Arg[0]: index into Program.Inputs
	OpScalar // Arg[0]: index into Program.Scalars
	OpIota   // the row-major flat index of the output element, as int64

	OpCast // converts from the argument's dtype to the node's
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
	OpArctan2
	OpHypot
	OpCopysign
	OpBitAnd
	OpBitOr
	OpBitXor
	OpBitNot
	OpLeftShift
	OpRightShift

	OpWhere // Arg[0] is a bool condition, Arg[1] and Arg[2] the values

	numOps
)

// Kind says how package array types an operation's arguments and result.
type Kind uint8

const (
	KindNone      Kind = iota
	KindLeaf           // an input, a scalar or the index
	KindCast           // OpCast: any dtype to any other CastDefined allows
	KindArith          // arguments and result in one dtype
	KindFloat          // defined on floats: array casts integer arguments to floatFor's type
	KindPredicate      // a float test with a bool result (integers are never NaN or infinite)
	KindCompare        // arguments of the promoted dtype, a bool result
	KindLogical        // arguments converted to bool, a bool result
	KindSelect         // OpWhere
)

// Grad is the gradient decision of an operation, which package grad
// follows. A test fails for an operation that has none.
type Grad uint8

const (
	GradUndecided Grad = iota
	GradRule           // grad.Var has a method of the same name with a backward rule
	GradZero           // piecewise constant: grad.Var's method records no history
	GradNone           // grad has no method: a bool result, or not offered (FloorDiv, Mod)
)

// DTypeSet is a set of dtypes.
type DTypeSet uint32

// Of returns the set of the given dtypes.
func Of(ds ...DType) DTypeSet {
	var s DTypeSet
	for _, d := range ds {
		s |= 1 << d
	}
	return s
}

// Has reports whether d is in s.
func (s DTypeSet) Has(d DType) bool { return d < 32 && s&(1<<d) != 0 }

// Argument dtype sets of the table. Storage types never appear: a backend
// only converts them (see Supports).
var (
	Floats   = Of(Float32, Float64)
	Ints     = Of(Uint8, Int32, Int64)
	Numbers  = Floats | Ints
	AllTypes = Numbers | Of(Bool)
	Bools    = Of(Bool)
)

// OpInfo is one operation: everything package array, the backends and
// package grad need to know about it.
type OpInfo struct {
	// Name is the lower-case name in programs, kernel cache keys and errors.
	Name string
	// Method is the array method (and grad.Var method) that builds it.
	Method string
	Arity  int
	Kind   Kind
	// DTypes are the argument dtypes (after array's casts) it is defined on.
	DTypes DTypeSet
	// CUDA is the C spelling cudagen writes: a math function of the float
	// arguments ("exp", becoming expf for float32), or an operator. Empty
	// means cudagen's opExpr writes the operation by hand.
	CUDA string
	// F and F2 compute a float operation on the CPU, in float64 (float32
	// rounds the result). They are also the tests' reference. The CPU
	// backend keeps direct loops for the operations whose speed matters.
	F  func(x float64) float64
	F2 func(x, y float64) float64
	// Grad is the gradient decision.
	Grad Grad
	// OnBool is the operation package array builds instead for bool
	// arguments: NumPy's bitwise operations are logical on bool.
	OnBool Op
}

// Ops is the table of operations, indexed by Op.
var Ops = [numOps]OpInfo{
	OpInput:  {Name: "input", Kind: KindLeaf},
	OpScalar: {Name: "scalar", Kind: KindLeaf},
	OpIota:   {Name: "iota", Kind: KindLeaf},

	OpCast:       {Name: "cast", Method: "AsType", Arity: 1, Kind: KindCast, DTypes: AllTypes, Grad: GradRule},
	OpNeg:        {Name: "neg", Method: "Neg", Arity: 1, Kind: KindArith, DTypes: Numbers, CUDA: "-", F: func(x float64) float64 { return -x }, Grad: GradRule},
	OpAbs:        {Name: "abs", Method: "Abs", Arity: 1, Kind: KindArith, DTypes: AllTypes, CUDA: "fabs", F: math.Abs, Grad: GradRule},
	OpSign:       {Name: "sign", Method: "Sign", Arity: 1, Kind: KindArith, DTypes: Numbers, F: sign, Grad: GradZero},
	OpSquare:     {Name: "square", Method: "Square", Arity: 1, Kind: KindArith, DTypes: AllTypes, F: func(x float64) float64 { return x * x }, Grad: GradRule},
	OpReciprocal: {Name: "reciprocal", Method: "Reciprocal", Arity: 1, Kind: KindFloat, DTypes: Floats, F: func(x float64) float64 { return 1 / x }, Grad: GradRule},
	OpSqrt:       {Name: "sqrt", Method: "Sqrt", Arity: 1, Kind: KindFloat, DTypes: Floats, CUDA: "sqrt", F: math.Sqrt, Grad: GradRule},
	OpExp:        {Name: "exp", Method: "Exp", Arity: 1, Kind: KindFloat, DTypes: Floats, CUDA: "exp", F: math.Exp, Grad: GradRule},
	OpExp2:       {Name: "exp2", Method: "Exp2", Arity: 1, Kind: KindFloat, DTypes: Floats, CUDA: "exp2", F: math.Exp2, Grad: GradRule},
	OpExpm1:      {Name: "expm1", Method: "Expm1", Arity: 1, Kind: KindFloat, DTypes: Floats, CUDA: "expm1", F: math.Expm1, Grad: GradRule},
	OpLog:        {Name: "log", Method: "Log", Arity: 1, Kind: KindFloat, DTypes: Floats, CUDA: "log", F: math.Log, Grad: GradRule},
	OpLog2:       {Name: "log2", Method: "Log2", Arity: 1, Kind: KindFloat, DTypes: Floats, CUDA: "log2", F: math.Log2, Grad: GradRule},
	OpLog10:      {Name: "log10", Method: "Log10", Arity: 1, Kind: KindFloat, DTypes: Floats, CUDA: "log10", F: math.Log10, Grad: GradRule},
	OpLog1p:      {Name: "log1p", Method: "Log1p", Arity: 1, Kind: KindFloat, DTypes: Floats, CUDA: "log1p", F: math.Log1p, Grad: GradRule},
	OpSin:        {Name: "sin", Method: "Sin", Arity: 1, Kind: KindFloat, DTypes: Floats, CUDA: "sin", F: math.Sin, Grad: GradRule},
	OpCos:        {Name: "cos", Method: "Cos", Arity: 1, Kind: KindFloat, DTypes: Floats, CUDA: "cos", F: math.Cos, Grad: GradRule},
	OpTan:        {Name: "tan", Method: "Tan", Arity: 1, Kind: KindFloat, DTypes: Floats, CUDA: "tan", F: math.Tan, Grad: GradRule},
	OpTanh:       {Name: "tanh", Method: "Tanh", Arity: 1, Kind: KindFloat, DTypes: Floats, CUDA: "tanh", F: math.Tanh, Grad: GradRule},
	OpSigmoid:    {Name: "sigmoid", Method: "Sigmoid", Arity: 1, Kind: KindFloat, DTypes: Floats, F: Sigmoid, Grad: GradRule},
	OpReLU:       {Name: "relu", Method: "ReLU", Arity: 1, Kind: KindArith, DTypes: Numbers, F: relu, Grad: GradRule},
	OpFloor:      {Name: "floor", Method: "Floor", Arity: 1, Kind: KindArith, DTypes: AllTypes, CUDA: "floor", F: math.Floor, Grad: GradZero},
	OpCeil:       {Name: "ceil", Method: "Ceil", Arity: 1, Kind: KindArith, DTypes: AllTypes, CUDA: "ceil", F: math.Ceil, Grad: GradZero},
	OpRound:      {Name: "round", Method: "Round", Arity: 1, Kind: KindArith, DTypes: AllTypes, CUDA: "rint", F: math.RoundToEven, Grad: GradZero},
	OpTrunc:      {Name: "trunc", Method: "Trunc", Arity: 1, Kind: KindArith, DTypes: AllTypes, CUDA: "trunc", F: math.Trunc, Grad: GradZero},
	OpNot:        {Name: "not", Method: "LogicalNot", Arity: 1, Kind: KindLogical, DTypes: Bools, CUDA: "!", Grad: GradNone},
	OpIsNaN:      {Name: "isnan", Method: "IsNaN", Arity: 1, Kind: KindPredicate, DTypes: Floats, Grad: GradNone},
	OpIsInf:      {Name: "isinf", Method: "IsInf", Arity: 1, Kind: KindPredicate, DTypes: Floats, Grad: GradNone},
	OpIsFinite:   {Name: "isfinite", Method: "IsFinite", Arity: 1, Kind: KindPredicate, DTypes: Floats, Grad: GradNone},

	OpAdd:      {Name: "add", Method: "Add", Arity: 2, Kind: KindArith, DTypes: AllTypes, CUDA: "+", F2: func(x, y float64) float64 { return x + y }, Grad: GradRule},
	OpSub:      {Name: "sub", Method: "Sub", Arity: 2, Kind: KindArith, DTypes: Numbers, CUDA: "-", F2: func(x, y float64) float64 { return x - y }, Grad: GradRule},
	OpMul:      {Name: "mul", Method: "Mul", Arity: 2, Kind: KindArith, DTypes: AllTypes, CUDA: "*", F2: func(x, y float64) float64 { return x * y }, Grad: GradRule},
	OpDiv:      {Name: "div", Method: "Div", Arity: 2, Kind: KindArith, DTypes: Floats, CUDA: "/", F2: func(x, y float64) float64 { return x / y }, Grad: GradRule},
	OpFloorDiv: {Name: "floordiv", Method: "FloorDiv", Arity: 2, Kind: KindArith, DTypes: Numbers, Grad: GradNone},
	OpMod:      {Name: "mod", Method: "Mod", Arity: 2, Kind: KindArith, DTypes: Numbers, Grad: GradNone},
	OpPow:      {Name: "pow", Method: "Pow", Arity: 2, Kind: KindArith, DTypes: Numbers, CUDA: "pow", F2: math.Pow, Grad: GradRule},
	OpMaximum:  {Name: "maximum", Method: "Maximum", Arity: 2, Kind: KindArith, DTypes: AllTypes, Grad: GradRule},
	OpMinimum:  {Name: "minimum", Method: "Minimum", Arity: 2, Kind: KindArith, DTypes: AllTypes, Grad: GradRule},
	OpEq:       {Name: "eq", Method: "Eq", Arity: 2, Kind: KindCompare, DTypes: AllTypes, CUDA: "==", Grad: GradNone},
	OpNe:       {Name: "ne", Method: "Ne", Arity: 2, Kind: KindCompare, DTypes: AllTypes, CUDA: "!=", Grad: GradNone},
	OpLt:       {Name: "lt", Method: "Lt", Arity: 2, Kind: KindCompare, DTypes: AllTypes, CUDA: "<", Grad: GradNone},
	OpLe:       {Name: "le", Method: "Le", Arity: 2, Kind: KindCompare, DTypes: AllTypes, CUDA: "<=", Grad: GradNone},
	OpGt:       {Name: "gt", Method: "Gt", Arity: 2, Kind: KindCompare, DTypes: AllTypes, CUDA: ">", Grad: GradNone},
	OpGe:       {Name: "ge", Method: "Ge", Arity: 2, Kind: KindCompare, DTypes: AllTypes, CUDA: ">=", Grad: GradNone},
	OpAnd:      {Name: "and", Method: "LogicalAnd", Arity: 2, Kind: KindLogical, DTypes: Bools, CUDA: "&&", Grad: GradNone},
	OpOr:       {Name: "or", Method: "LogicalOr", Arity: 2, Kind: KindLogical, DTypes: Bools, CUDA: "||", Grad: GradNone},
	OpXor:      {Name: "xor", Method: "LogicalXor", Arity: 2, Kind: KindLogical, DTypes: Bools, CUDA: "!=", Grad: GradNone},

	OpArcsin:   {Name: "arcsin", Method: "Arcsin", Arity: 1, Kind: KindFloat, DTypes: Floats, CUDA: "asin", F: math.Asin, Grad: GradRule},
	OpArccos:   {Name: "arccos", Method: "Arccos", Arity: 1, Kind: KindFloat, DTypes: Floats, CUDA: "acos", F: math.Acos, Grad: GradRule},
	OpArctan:   {Name: "arctan", Method: "Arctan", Arity: 1, Kind: KindFloat, DTypes: Floats, CUDA: "atan", F: math.Atan, Grad: GradRule},
	OpSinh:     {Name: "sinh", Method: "Sinh", Arity: 1, Kind: KindFloat, DTypes: Floats, CUDA: "sinh", F: math.Sinh, Grad: GradRule},
	OpCosh:     {Name: "cosh", Method: "Cosh", Arity: 1, Kind: KindFloat, DTypes: Floats, CUDA: "cosh", F: math.Cosh, Grad: GradRule},
	OpArcsinh:  {Name: "arcsinh", Method: "Arcsinh", Arity: 1, Kind: KindFloat, DTypes: Floats, CUDA: "asinh", F: math.Asinh, Grad: GradRule},
	OpArccosh:  {Name: "arccosh", Method: "Arccosh", Arity: 1, Kind: KindFloat, DTypes: Floats, CUDA: "acosh", F: math.Acosh, Grad: GradRule},
	OpArctanh:  {Name: "arctanh", Method: "Arctanh", Arity: 1, Kind: KindFloat, DTypes: Floats, CUDA: "atanh", F: math.Atanh, Grad: GradRule},
	OpErf:      {Name: "erf", Method: "Erf", Arity: 1, Kind: KindFloat, DTypes: Floats, CUDA: "erf", F: math.Erf, Grad: GradRule},
	OpErfc:     {Name: "erfc", Method: "Erfc", Arity: 1, Kind: KindFloat, DTypes: Floats, CUDA: "erfc", F: math.Erfc, Grad: GradRule},
	OpDeg2Rad:  {Name: "deg2rad", Method: "Deg2Rad", Arity: 1, Kind: KindFloat, DTypes: Floats, F: func(x float64) float64 { return x * DegToRad }, Grad: GradRule},
	OpRad2Deg:  {Name: "rad2deg", Method: "Rad2Deg", Arity: 1, Kind: KindFloat, DTypes: Floats, F: func(x float64) float64 { return x * RadToDeg }, Grad: GradRule},
	OpArctan2:  {Name: "arctan2", Method: "Arctan2", Arity: 2, Kind: KindFloat, DTypes: Floats, CUDA: "atan2", F2: math.Atan2, Grad: GradRule},
	OpHypot:    {Name: "hypot", Method: "Hypot", Arity: 2, Kind: KindFloat, DTypes: Floats, CUDA: "hypot", F2: math.Hypot, Grad: GradRule},
	OpCopysign: {Name: "copysign", Method: "Copysign", Arity: 2, Kind: KindFloat, DTypes: Floats, CUDA: "copysign", F2: math.Copysign, Grad: GradRule},

	OpBitAnd:     {Name: "bitand", Method: "BitwiseAnd", Arity: 2, Kind: KindArith, DTypes: Ints, CUDA: "&", Grad: GradNone, OnBool: OpAnd},
	OpBitOr:      {Name: "bitor", Method: "BitwiseOr", Arity: 2, Kind: KindArith, DTypes: Ints, CUDA: "|", Grad: GradNone, OnBool: OpOr},
	OpBitXor:     {Name: "bitxor", Method: "BitwiseXor", Arity: 2, Kind: KindArith, DTypes: Ints, CUDA: "^", Grad: GradNone, OnBool: OpXor},
	OpBitNot:     {Name: "bitnot", Method: "BitwiseNot", Arity: 1, Kind: KindArith, DTypes: Ints, CUDA: "~", Grad: GradNone, OnBool: OpNot},
	OpLeftShift:  {Name: "lshift", Method: "LeftShift", Arity: 2, Kind: KindArith, DTypes: Ints, Grad: GradNone},
	OpRightShift: {Name: "rshift", Method: "RightShift", Arity: 2, Kind: KindArith, DTypes: Ints, Grad: GradNone},

	OpWhere: {Name: "where", Method: "Where", Arity: 3, Kind: KindSelect, DTypes: AllTypes, Grad: GradRule},
}

// AllOps lists the operations of the table, leaves included.
func AllOps() []Op {
	ops := make([]Op, 0, numOps)
	for o := Op(1); o < numOps; o++ {
		ops = append(ops, o)
	}
	return ops
}

func (o Op) info() *OpInfo {
	if o < numOps {
		return &Ops[o]
	}
	return &Ops[OpInvalid]
}

func (o Op) String() string {
	if n := o.info().Name; n != "" {
		return n
	}
	return "op?"
}

// Arity is the number of node arguments (0 for leaves).
func (o Op) Arity() int { return o.info().Arity }

// Kind is how package array types the operation.
func (o Op) Kind() Kind { return o.info().Kind }

// IsLeaf reports whether o reads an input, a scalar or the index.
func (o Op) IsLeaf() bool { return o.Kind() == KindLeaf }

// IsCompare reports whether o is a comparison (bool result).
func (o Op) IsCompare() bool { return o.Kind() == KindCompare }

// IsLogical reports whether o is a logical and/or/xor/not (bool operands).
func (o Op) IsLogical() bool { return o.Kind() == KindLogical }

// IsPredicate reports whether o is a unary float test (bool result).
func (o Op) IsPredicate() bool { return o.Kind() == KindPredicate }

// IsTranscendental reports whether o is defined only on floats (package
// array casts integer arguments to a float type first).
func (o Op) IsTranscendental() bool { return o.Kind() == KindFloat }

// Result is the dtype of o's node for arguments of dtype arg (for
// OpCast, the target is the node's own dtype and Result returns arg).
func (o Op) Result(arg DType) DType {
	switch o.Kind() {
	case KindCompare, KindPredicate, KindLogical:
		return Bool
	}
	return arg
}

// UnaryOps and BinaryOps list the computational operations of arity one
// and two, in table order (for tests and generators that cover them all).
var UnaryOps, BinaryOps = opsOfArity(1), opsOfArity(2)

func opsOfArity(n int) []Op {
	var ops []Op
	for _, o := range AllOps() {
		if o.Arity() == n {
			ops = append(ops, o)
		}
	}
	return ops
}

// Supports reports whether the node operation o is defined for arguments of
// dtype arg (the dtype package array has already cast them to). Package
// array only builds supported nodes; backends may rely on it. Storage
// types (int8, the low-precision floats) support only OpCast, to the
// dtypes CastDefined allows.
func Supports(o Op, arg DType) bool {
	if arg.IsStorage() {
		return o == OpCast
	}
	return o.info().DTypes.Has(arg)
}

// Sigmoid is 1/(1+e^-x), without overflow for large |x|.
func Sigmoid(x float64) float64 {
	if x >= 0 {
		return 1 / (1 + math.Exp(-x))
	}
	e := math.Exp(x)
	return e / (1 + e)
}

func sign(x float64) float64 {
	switch {
	case x > 0:
		return 1
	case x < 0:
		return -1
	case x == 0:
		return 0
	}
	return x // NaN
}

func relu(x float64) float64 { return max(x, 0) }

// DegToRad and RadToDeg are the factors of Deg2Rad and Rad2Deg, which
// both backends apply in float64.
const (
	DegToRad = math.Pi / 180
	RadToDeg = 180 / math.Pi
)
