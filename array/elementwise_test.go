package array

import (
	"fmt"
	"math"
	"strings"
	"testing"
)

var allDTypes = []DType{Bool, Uint8, Int32, Int64, Float32, Float64}

// testShapes covers rank 0 to 6, size-1 and size-0 dimensions.
var testShapes = [][]int{{}, {1}, {7}, {0}, {3, 4}, {2, 0, 3}, {4, 1, 3}, {2, 3, 4, 5}, {1, 2, 1, 3, 2}, {2, 1, 2, 3, 1, 2}}

// wrapInt is two's-complement storage of an exact integer in dt.
func wrapInt(dt DType, v float64) float64 {
	i := int64(v)
	switch dt {
	case Uint8:
		return float64(uint8(i))
	case Int32:
		return float64(int32(i))
	case Bool:
		if i != 0 {
			return 1
		}
		return 0
	}
	return float64(i)
}

type unaryCase struct {
	name          string
	apply         func(*Array) *Array
	fl            func(float64) float64 // the float definition
	in            func(int64) int64     // integer definition (nil: computed in a float type)
	lo            float64               // float inputs are drawn from [lo, hi)
	hi            float64
	tol           tolerance
	res           func(DType) DType // result dtype
	noBool, noInt bool              // dtypes that must be rejected
}

func keep(d DType) DType { return d }
func toBool(DType) DType { return Bool }

var unaryCases = []unaryCase{
	{name: "Neg", apply: (*Array).Neg, fl: func(x float64) float64 { return -x }, in: func(x int64) int64 { return -x }, lo: -5, hi: 5, tol: exact, res: keep, noBool: true},
	{name: "Abs", apply: (*Array).Abs, fl: math.Abs, in: func(x int64) int64 {
		if x < 0 {
			return -x
		}
		return x
	}, lo: -5, hi: 5, tol: exact, res: keep},
	{name: "Sign", apply: (*Array).Sign, fl: func(x float64) float64 {
		switch {
		case x > 0:
			return 1
		case x < 0:
			return -1
		}
		return 0
	}, in: func(x int64) int64 {
		switch {
		case x > 0:
			return 1
		case x < 0:
			return -1
		}
		return 0
	}, lo: -2, hi: 2, tol: exact, res: keep, noBool: true},
	{name: "Square", apply: (*Array).Square, fl: func(x float64) float64 { return x * x }, in: func(x int64) int64 { return x * x }, lo: -5, hi: 5, tol: simpleTol, res: keep},
	{name: "ReLU", apply: (*Array).ReLU, fl: func(x float64) float64 { return math.Max(x, 0) }, in: func(x int64) int64 { return max(x, 0) }, lo: -3, hi: 3, tol: exact, res: keep, noBool: true},
	{name: "Floor", apply: (*Array).Floor, fl: math.Floor, in: func(x int64) int64 { return x }, lo: -5, hi: 5, tol: exact, res: keep},
	{name: "Ceil", apply: (*Array).Ceil, fl: math.Ceil, in: func(x int64) int64 { return x }, lo: -5, hi: 5, tol: exact, res: keep},
	{name: "Round", apply: (*Array).Round, fl: math.RoundToEven, in: func(x int64) int64 { return x }, lo: -5, hi: 5, tol: exact, res: keep},
	{name: "Trunc", apply: (*Array).Trunc, fl: math.Trunc, in: func(x int64) int64 { return x }, lo: -5, hi: 5, tol: exact, res: keep},
	{name: "Reciprocal", apply: (*Array).Reciprocal, fl: func(x float64) float64 { return 1 / x }, lo: 0.5, hi: 4, tol: simpleTol, res: floatFor},
	{name: "Sqrt", apply: (*Array).Sqrt, fl: math.Sqrt, lo: 0, hi: 10, tol: simpleTol, res: floatFor},
	{name: "Exp", apply: (*Array).Exp, fl: math.Exp, lo: -5, hi: 5, tol: transTol, res: floatFor},
	{name: "Exp2", apply: (*Array).Exp2, fl: math.Exp2, lo: -5, hi: 5, tol: transTol, res: floatFor},
	{name: "Expm1", apply: (*Array).Expm1, fl: math.Expm1, lo: -1, hi: 1, tol: transTol, res: floatFor},
	{name: "Log", apply: (*Array).Log, fl: math.Log, lo: 0.01, hi: 10, tol: transTol, res: floatFor},
	{name: "Log2", apply: (*Array).Log2, fl: math.Log2, lo: 0.01, hi: 10, tol: transTol, res: floatFor},
	{name: "Log10", apply: (*Array).Log10, fl: math.Log10, lo: 0.01, hi: 10, tol: transTol, res: floatFor},
	{name: "Log1p", apply: (*Array).Log1p, fl: math.Log1p, lo: -0.5, hi: 2, tol: transTol, res: floatFor},
	{name: "Sin", apply: (*Array).Sin, fl: math.Sin, lo: -4, hi: 4, tol: transTol, res: floatFor},
	{name: "Cos", apply: (*Array).Cos, fl: math.Cos, lo: -4, hi: 4, tol: transTol, res: floatFor},
	{name: "Tan", apply: (*Array).Tan, fl: math.Tan, lo: -1.2, hi: 1.2, tol: transTol, res: floatFor},
	{name: "Tanh", apply: (*Array).Tanh, fl: math.Tanh, lo: -4, hi: 4, tol: transTol, res: floatFor},
	{name: "Sigmoid", apply: (*Array).Sigmoid, fl: func(x float64) float64 { return 1 / (1 + math.Exp(-x)) }, lo: -8, hi: 8, tol: transTol, res: floatFor},
	{name: "Arcsin", apply: (*Array).Arcsin, fl: math.Asin, lo: -1, hi: 1, tol: transTol, res: floatFor},
	{name: "Arccos", apply: (*Array).Arccos, fl: math.Acos, lo: -1, hi: 1, tol: transTol, res: floatFor},
	{name: "Arctan", apply: (*Array).Arctan, fl: math.Atan, lo: -5, hi: 5, tol: transTol, res: floatFor},
	{name: "Sinh", apply: (*Array).Sinh, fl: math.Sinh, lo: -4, hi: 4, tol: transTol, res: floatFor},
	{name: "Cosh", apply: (*Array).Cosh, fl: math.Cosh, lo: -4, hi: 4, tol: transTol, res: floatFor},
	{name: "Arcsinh", apply: (*Array).Arcsinh, fl: math.Asinh, lo: -5, hi: 5, tol: transTol, res: floatFor},
	{name: "Arccosh", apply: (*Array).Arccosh, fl: math.Acosh, lo: 1, hi: 10, tol: transTol, res: floatFor},
	{name: "Arctanh", apply: (*Array).Arctanh, fl: math.Atanh, lo: -0.99, hi: 0.99, tol: transTol, res: floatFor},
	{name: "Erf", apply: (*Array).Erf, fl: math.Erf, lo: -3, hi: 3, tol: transTol, res: floatFor},
	{name: "Erfc", apply: (*Array).Erfc, fl: math.Erfc, lo: -3, hi: 5, tol: transTol, res: floatFor},
	{name: "Deg2Rad", apply: (*Array).Deg2Rad, fl: func(x float64) float64 { return x * math.Pi / 180 }, lo: -360, hi: 360, tol: simpleTol, res: floatFor},
	{name: "Rad2Deg", apply: (*Array).Rad2Deg, fl: func(x float64) float64 { return x * 180 / math.Pi }, lo: -7, hi: 7, tol: simpleTol, res: floatFor},
	{name: "IsNaN", apply: (*Array).IsNaN, fl: func(x float64) float64 { return b2f(math.IsNaN(x)) }, lo: -1, hi: 1, tol: exact, res: toBool},
	{name: "IsFinite", apply: (*Array).IsFinite, fl: func(x float64) float64 { return b2f(!math.IsNaN(x) && !math.IsInf(x, 0)) }, lo: -1, hi: 1, tol: exact, res: toBool},
	{name: "LogicalNot", apply: (*Array).LogicalNot, fl: func(x float64) float64 { return b2f(x == 0) }, lo: -1, hi: 1, tol: exact, res: toBool},
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// expectUnary is the reference value of a unary case for an input x of dtype dt.
func (c unaryCase) expect(dt DType, x float64) float64 {
	res := c.res(dt)
	if res == Bool {
		return c.fl(x)
	}
	if c.in != nil && !dt.IsFloat() {
		if dt == Bool {
			return x // abs, square, floor... are the identity on bool
		}
		return wrapInt(dt, float64(c.in(int64(x))))
	}
	return roundTo(res, c.fl(x))
}

func TestUnaryOps(t *testing.T) {
	forEachBackend(t, func(t *testing.T, d *Maker) {
		r := newRand(t)
		for _, c := range unaryCases {
			for _, dt := range allDTypes {
				if (c.noBool && dt == Bool) || (c.noInt && dt.IsInt()) {
					err := c.apply(d.Ones(dt, 2)).Err()
					if !isKind(err, ErrDType) {
						t.Errorf("%s(%v): want ErrDType, got %v", c.name, dt, err)
					}
					continue
				}
				for si, shape := range testShapes {
					kind := layoutKinds[si%len(layoutKinds)]
					lo, hi := c.lo, c.hi
					if !dt.IsFloat() {
						lo, hi = math.Max(lo, 0), math.Max(hi, 3)
						if c.in != nil {
							lo = -hi
						}
					}
					h := randHost(r, dt, shape, lo, hi)
					if dt == Uint8 && c.in != nil {
						h = randHost(r, dt, shape, 0, 255)
					}
					x := makeArray(t, d, dt, h, kind)
					y := c.apply(x)
					what := fmt.Sprintf("%s(%v %v %v)", c.name, dt, shape, kind)
					if y.DType() != c.res(dt) {
						t.Fatalf("%s: dtype %v, want %v", what, y.DType(), c.res(dt))
					}
					want := make([]float64, len(h.v))
					for i, v := range h.v {
						want[i] = c.expect(dt, v)
					}
					checkHost(t, what, readHost(t, y), shape, want, c.tol.of(c.res(dt)))
				}
			}
		}
	})
}

// Special values of the float functions: NaN propagation, infinities,
// signed zeros where NumPy defines them.
func TestUnarySpecialValues(t *testing.T) {
	nan, inf := math.NaN(), math.Inf(1)
	in := []float64{nan, inf, -inf, 0, -1, 1}
	forEachBackend(t, func(t *testing.T, d *Maker) {
		for _, dt := range []DType{Float32, Float64} {
			x := fromTyped(d, typed(dt, in), []int{len(in)})
			check := func(name string, a *Array, want []float64) {
				t.Helper()
				checkHost(t, fmt.Sprintf("%s %v", name, dt), readHost(t, a), []int{len(in)}, want, 0)
			}
			// CUDA's expf and tanhf are within 2 ulp, not correctly rounded
			// (CUDA C Programming Guide, mathematical functions): the
			// special values stay exact, the finite ones get 2 ulp.
			ulp2 := 2 * math.Pow(2, -23)
			if dt == Float64 {
				ulp2 = 2 * math.Pow(2, -52)
			}
			checkULP := func(name string, a *Array, want []float64) {
				t.Helper()
				checkHost(t, fmt.Sprintf("%s %v", name, dt), readHost(t, a), []int{len(in)}, want, ulp2)
			}
			check("ReLU", x.ReLU(), []float64{nan, inf, 0, 0, 0, 1})
			check("Sign", x.Sign(), []float64{nan, 1, -1, 0, -1, 1})
			checkULP("Exp", x.Exp(), []float64{nan, inf, 0, 1, roundTo(dt, math.Exp(-1)), roundTo(dt, math.E)})
			check("Log", x.Log(), []float64{nan, inf, nan, -inf, nan, 0})
			check("Sqrt", x.Sqrt(), []float64{nan, inf, nan, 0, nan, 1})
			checkULP("Sigmoid", x.Sigmoid(), []float64{nan, 1, 0, 0.5, roundTo(dt, 1/(1+math.E)), roundTo(dt, 1/(1+math.Exp(-1)))})
			checkULP("Tanh", x.Tanh(), []float64{nan, 1, -1, 0, roundTo(dt, math.Tanh(-1)), roundTo(dt, math.Tanh(1))})
			check("IsNaN", x.IsNaN(), []float64{1, 0, 0, 0, 0, 0})
			check("IsInf", x.IsInf(), []float64{0, 1, 1, 0, 0, 0})
			check("IsFinite", x.IsFinite(), []float64{0, 0, 0, 1, 1, 1})
			check("Maximum", x.Maximum(0.5), []float64{nan, inf, 0.5, 0.5, 0.5, 1})
			check("Minimum", x.Minimum(0.5), []float64{nan, 0.5, -inf, 0, -1, 0.5})
			check("Clip", x.Clip(-0.5, 0.5), []float64{nan, 0.5, -0.5, 0, -0.5, 0.5})
			check("Round", fromTyped(d, typed(dt, []float64{0.5, 1.5, 2.5, -0.5, -1.5, 3.7}), []int{6}).Round(),
				[]float64{0, 2, 2, 0, -2, 4})
		}
		// Integer abs of the minimum wraps, as NumPy.
		m := fromSliceOn(d, []int32{math.MinInt32, -3, 3, 0, 1, 2})
		checkHost(t, "abs int32 min", readHost(t, m.Abs()), []int{6}, []float64{math.MinInt32, 3, 3, 0, 1, 2}, 0)
	})
}

type binaryCase struct {
	name  string
	apply func(a *Array, b any) *Array
	fl    func(a, b float64) float64
	in    func(a, b int64) int64 // nil: not defined on integers
	bl    func(a, b bool) bool   // nil: not defined on bool
	cmp   bool                   // result is bool
	div   bool                   // true division: integers compute in float64
	flt   bool                   // a float function: integers compute in floatFor's type
	noFlt bool                   // not defined on floats (bitwise operations)
	lo    float64
	hi    float64
	bLo   float64
	tol   tolerance
}

func pyMod(a, b float64) float64 {
	if b == 0 {
		return math.NaN()
	}
	m := math.Mod(a, b)
	if m != 0 && (m < 0) != (b < 0) {
		m += b
	}
	return m
}

var binaryCases = []binaryCase{
	{name: "Add", apply: (*Array).Add, fl: func(a, b float64) float64 { return a + b }, in: func(a, b int64) int64 { return a + b }, bl: func(a, b bool) bool { return a || b }, lo: -10, hi: 10, tol: simpleTol},
	{name: "Sub", apply: (*Array).Sub, fl: func(a, b float64) float64 { return a - b }, in: func(a, b int64) int64 { return a - b }, lo: -10, hi: 10, tol: simpleTol},
	{name: "Mul", apply: (*Array).Mul, fl: func(a, b float64) float64 { return a * b }, in: func(a, b int64) int64 { return a * b }, bl: func(a, b bool) bool { return a && b }, lo: -10, hi: 10, tol: simpleTol},
	{name: "Div", apply: (*Array).Div, fl: func(a, b float64) float64 { return a / b }, div: true, lo: -10, hi: 10, bLo: 0.5, tol: simpleTol},
	{name: "FloorDiv", apply: (*Array).FloorDiv, fl: func(a, b float64) float64 { return math.Floor(a / b) }, in: func(a, b int64) int64 {
		if b == 0 {
			return 0
		}
		return int64(math.Floor(float64(a) / float64(b)))
	}, lo: -20, hi: 20, bLo: 0.5, tol: simpleTol},
	{name: "Mod", apply: (*Array).Mod, fl: pyMod, in: func(a, b int64) int64 {
		if b == 0 {
			return 0
		}
		return int64(pyMod(float64(a), float64(b)))
	}, lo: -20, hi: 20, bLo: 0.5, tol: tolerance{1e-5, 1e-13}},
	{name: "Pow", apply: (*Array).Pow, fl: math.Pow, in: func(a, b int64) int64 {
		r := int64(1)
		for k := int64(0); k < b; k++ {
			r *= a
		}
		return r
	}, lo: 0.1, hi: 3, tol: transTol},
	{name: "Maximum", apply: (*Array).Maximum, fl: math.Max, in: func(a, b int64) int64 { return max(a, b) }, bl: func(a, b bool) bool { return a || b }, lo: -10, hi: 10, tol: exact},
	{name: "Minimum", apply: (*Array).Minimum, fl: math.Min, in: func(a, b int64) int64 { return min(a, b) }, bl: func(a, b bool) bool { return a && b }, lo: -10, hi: 10, tol: exact},
	{name: "Eq", apply: (*Array).Eq, fl: func(a, b float64) float64 { return b2f(a == b) }, cmp: true, lo: -2, hi: 2, tol: exact},
	{name: "Ne", apply: (*Array).Ne, fl: func(a, b float64) float64 { return b2f(a != b) }, cmp: true, lo: -2, hi: 2, tol: exact},
	{name: "Lt", apply: (*Array).Lt, fl: func(a, b float64) float64 { return b2f(a < b) }, cmp: true, lo: -2, hi: 2, tol: exact},
	{name: "Le", apply: (*Array).Le, fl: func(a, b float64) float64 { return b2f(a <= b) }, cmp: true, lo: -2, hi: 2, tol: exact},
	{name: "Gt", apply: (*Array).Gt, fl: func(a, b float64) float64 { return b2f(a > b) }, cmp: true, lo: -2, hi: 2, tol: exact},
	{name: "Ge", apply: (*Array).Ge, fl: func(a, b float64) float64 { return b2f(a >= b) }, cmp: true, lo: -2, hi: 2, tol: exact},
	{name: "LogicalAnd", apply: (*Array).LogicalAnd, fl: func(a, b float64) float64 { return b2f(a != 0 && b != 0) }, cmp: true, lo: -1, hi: 1, tol: exact},
	{name: "LogicalOr", apply: (*Array).LogicalOr, fl: func(a, b float64) float64 { return b2f(a != 0 || b != 0) }, cmp: true, lo: -1, hi: 1, tol: exact},
	{name: "LogicalXor", apply: (*Array).LogicalXor, fl: func(a, b float64) float64 { return b2f((a != 0) != (b != 0)) }, cmp: true, lo: -1, hi: 1, tol: exact},
	{name: "Arctan2", apply: (*Array).Arctan2, fl: math.Atan2, flt: true, lo: -3, hi: 3, tol: transTol},
	{name: "Hypot", apply: (*Array).Hypot, fl: math.Hypot, flt: true, lo: -10, hi: 10, tol: transTol},
	{name: "Copysign", apply: (*Array).Copysign, fl: math.Copysign, flt: true, lo: -10, hi: 10, tol: exact},
	{name: "BitwiseAnd", apply: (*Array).BitwiseAnd, in: func(a, b int64) int64 { return a & b }, bl: func(a, b bool) bool { return a && b }, noFlt: true, lo: -70000, hi: 70000, tol: exact},
	{name: "BitwiseOr", apply: (*Array).BitwiseOr, in: func(a, b int64) int64 { return a | b }, bl: func(a, b bool) bool { return a || b }, noFlt: true, lo: -70000, hi: 70000, tol: exact},
	{name: "BitwiseXor", apply: (*Array).BitwiseXor, in: func(a, b int64) int64 { return a ^ b }, bl: func(a, b bool) bool { return a != b }, noFlt: true, lo: -70000, hi: 70000, tol: exact},
	{name: "LeftShift", apply: (*Array).LeftShift, in: shiftLeft, noFlt: true, lo: -70000, hi: 70000, tol: exact},
	{name: "RightShift", apply: (*Array).RightShift, in: shiftRight, noFlt: true, lo: -70000, hi: 70000, tol: exact},
}

// shiftLeft and shiftRight are NumPy's shifts of values held in int64
// (wrapping to the dtype afterwards gives the narrower types' results).
func shiftLeft(a, b int64) int64 {
	if b < 0 || b >= 64 {
		return 0
	}
	return a << b
}

func shiftRight(a, b int64) int64 {
	switch {
	case (b < 0 || b >= 64) && a < 0:
		return -1
	case b < 0 || b >= 64:
		return 0
	}
	return a >> b
}

// expect computes the reference for operands already converted to the
// compute dtype dt.
func (c binaryCase) expect(dt DType, a, b float64) float64 {
	switch {
	case c.cmp:
		return c.fl(a, b)
	case dt == Bool:
		return b2f(c.bl(a != 0, b != 0))
	case dt.IsFloat():
		return roundTo(dt, c.fl(a, b))
	}
	return wrapInt(dt, float64(c.in(int64(a), int64(b))))
}

func (c binaryCase) computeDType(a, b DType) DType {
	dt := Promote(a, b)
	switch {
	case c.name == "LogicalAnd" || c.name == "LogicalOr" || c.name == "LogicalXor":
		return Bool
	case c.div && !dt.IsFloat():
		return Float64
	case c.flt:
		return floatFor(dt)
	}
	return dt
}

func (c binaryCase) supported(dt DType) bool {
	switch {
	case c.cmp || c.div || c.flt:
		return true
	case c.noFlt && dt.IsFloat():
		return false
	case dt == Bool:
		return c.bl != nil
	}
	return true
}

// binaryInputs draws operand values for a case in its dtype.
func binaryInputs(t *testing.T, c binaryCase, dt DType, shape []int, second bool) host {
	r := newRand(t)
	lo, hi := c.lo, c.hi
	if second && c.bLo > 0 {
		lo = c.bLo // divisors away from zero for floats
	}
	switch {
	case c.name == "Pow" && !dt.IsFloat():
		lo, hi = -4, 4
		if second {
			lo, hi = 0, 5
		}
	case dt == Int32 && (c.name == "Mul" || c.name == "Add" || c.name == "Sub"):
		lo, hi = -70000, 70000 // products and sums wrap
	case dt == Uint8:
		lo, hi = 0, 255
	case !dt.IsFloat() && second && (c.name == "FloorDiv" || c.name == "Mod"):
		lo, hi = -5, 5 // includes zero divisors
	case !dt.IsFloat() && second && strings.HasSuffix(c.name, "Shift"):
		lo, hi = -3, 70 // negative counts and counts past every width
	case !dt.IsFloat():
		lo, hi = math.Floor(lo), math.Ceil(hi)
	}
	h := randHost(r, dt, shape, lo, hi)
	if c.cmp && !second {
		// Make equal pairs likely for comparisons.
		for i := range h.v {
			h.v[i] = math.Round(h.v[i])
		}
	}
	return h
}

var broadcastPairs = [][2][]int{
	{{}, {}}, {{3, 4}, {4}}, {{3, 4}, {}}, {{2, 1, 5}, {3, 1}}, {{0, 3}, {1, 3}}, {{4, 1}, {1, 0}},
	{{1}, {5}}, {{2, 3, 1, 4, 1, 2}, {3, 1, 1, 5, 2}}, {{5}, {5}}, {{2, 2, 2, 2}, {2, 1, 2, 1}}, {{1, 1, 1}, {}},
}

func runBinary(t *testing.T, d *Maker, c binaryCase, da, db DType, sa, sb []int, ka, kb layoutKind) {
	t.Helper()
	ha := binaryInputs(t, c, da, sa, false)
	hb := binaryInputs(t, c, db, sb, true)
	x, y := makeArray(t, d, da, ha, ka), makeArray(t, d, db, hb, kb)
	z := c.apply(x, y)
	what := fmt.Sprintf("%s(%v%v %v, %v%v %v)", c.name, da, sa, ka, db, sb, kb)
	dt := c.computeDType(da, db)
	if !c.supported(dt) {
		if !isKind(z.Err(), ErrDType) {
			t.Errorf("%s: want ErrDType, got %v", what, z.Err())
		}
		return
	}
	res := dt
	if c.cmp {
		res = Bool
	}
	if z.DType() != res {
		t.Fatalf("%s: dtype %v, want %v (%v)", what, z.DType(), res, z.Err())
	}
	shape, _ := broadcastShapes("", sa, sb)
	av, bv := broadcastHost(ha, shape), broadcastHost(hb, shape)
	want := make([]float64, len(av))
	for i := range av {
		want[i] = c.expect(dt, roundTo(dt, av[i]), roundTo(dt, bv[i]))
	}
	tol := c.tol.of(res)
	if c.name == "FloorDiv" && res.IsFloat() {
		tol = 0 // exact away from integer quotients; see the check below
	}
	checkHost(t, what, readHost(t, z), shape, want, tol)
}

// Every binary op on every dtype pair (promotion), then on every
// broadcasting pair and memory layout for each dtype.
func TestBinaryOps(t *testing.T) {
	forEachBackend(t, func(t *testing.T, d *Maker) {
		for _, c := range binaryCases {
			for _, da := range allDTypes {
				for _, db := range allDTypes {
					runBinary(t, d, c, da, db, []int{3, 4}, []int{4}, contiguous, contiguous)
				}
			}
			for _, dt := range allDTypes {
				if !c.supported(c.computeDType(dt, dt)) {
					continue
				}
				for i, p := range broadcastPairs {
					ka := layoutKinds[i%len(layoutKinds)]
					kb := layoutKinds[(i/2+1)%len(layoutKinds)]
					runBinary(t, d, c, dt, dt, p[0], p[1], ka, kb)
					runBinary(t, d, c, dt, dt, p[1], p[0], kb, ka)
				}
			}
		}
	})
}

// Scalars as either operand, with NEP 50 typing.
func TestScalarOperands(t *testing.T) {
	forEachBackend(t, func(t *testing.T, d *Maker) {
		x := fromSliceOn(d, []float32{-2, -0.5, 0, 1.5, 3})
		got := readHost(t, x.Mul(1.5).Add(0.5).ReLU().Mul(2))
		want := []float64{0, 0, 1, 5.5, 10}
		checkHost(t, "relu(1.5x+0.5)*2", got, []int{5}, want, 0)
		i := fromSliceOn(d, []int32{-7, 7, 9})
		checkHost(t, "int32 // 2", readHost(t, i.FloorDiv(2)), []int{3}, []float64{-4, 3, 4}, 0)
		checkHost(t, "int32 % -4", readHost(t, i.Mod(-4)), []int{3}, []float64{-3, -1, -3}, 0)
		checkHost(t, "int32 * 0.5", readHost(t, i.Mul(0.5)), []int{3}, []float64{-3.5, 3.5, 4.5}, 0)
		if i.Mul(0.5).DType() != Float64 {
			t.Errorf("int32 * 0.5 is not float64")
		}
		u := fromSliceOn(d, []uint8{250, 3, 0})
		checkHost(t, "uint8 + 10 wraps", readHost(t, u.Add(10)), []int{3}, []float64{4, 13, 10}, 0)
		checkHost(t, "uint8 - 5 wraps", readHost(t, u.Sub(5)), []int{3}, []float64{245, 254, 251}, 0)
		// Where with scalars on both sides and a broadcast condition.
		c := fromSliceOn(d, []bool{true, false}, 2, 1)
		w := Where(c, 1, 2.5)
		if w.DType() != Float64 {
			t.Errorf("Where(c, 1, 2.5) dtype %v", w.DType())
		}
		checkHost(t, "where scalars", readHost(t, w), []int{2, 1}, []float64{1, 2.5}, 0)
		w2 := Where(c, x, -1)
		checkHost(t, "where broadcast", readHost(t, w2), []int{2, 5}, []float64{-2, -0.5, 0, 1.5, 3, -1, -1, -1, -1, -1}, 0)
		if w2.DType() != Float32 {
			t.Errorf("Where(c, f32, -1) dtype %v", w2.DType())
		}
		// Integer powers with negative exponents (documented: truncated 1/a^-b).
		p := fromSliceOn(d, []int64{2, -1, 1, 0, -1, 3})
		e := fromSliceOn(d, []int64{-1, -3, -2, 3, -2, 40})
		checkHost(t, "int pow", readHost(t, p.Pow(e)), []int{6}, []float64{0, -1, 1, 0, 1, float64(pow3(40))}, 0)
	})
}

// Where over every dtype and layout against a reference.
func TestWhere(t *testing.T) {
	forEachBackend(t, func(t *testing.T, d *Maker) {
		r := newRand(t)
		for _, dt := range allDTypes {
			for i, p := range broadcastPairs {
				cond := randHost(r, Bool, p[0], 0, 1)
				a := randHost(r, dt, p[1], -5, 5)
				b := randHost(r, dt, p[0], -5, 5)
				k := layoutKinds[i%len(layoutKinds)]
				z := Where(makeArray(t, d, Bool, cond, k), makeArray(t, d, dt, a, contiguous), makeArray(t, d, dt, b, reversed))
				shape, _ := broadcastShapes("", p[0], p[1])
				cv, av, bv := broadcastHost(cond, shape), broadcastHost(a, shape), broadcastHost(b, shape)
				want := make([]float64, len(cv))
				for j := range cv {
					if cv[j] != 0 {
						want[j] = av[j]
					} else {
						want[j] = bv[j]
					}
				}
				checkHost(t, fmt.Sprintf("Where %v %v", dt, p), readHost(t, z), shape, want, 0)
			}
		}
	})
}

// AsType between every pair of dtypes, including saturation of
// out-of-range floats and NaN to 0 for integers.
func TestAsType(t *testing.T) {
	src := []float64{0, 1, -1, 2.7, -2.7, 255.9, 256, -300, 1e10, -1e10, math.NaN(), math.Inf(1), math.Inf(-1), 0.4}
	forEachBackend(t, func(t *testing.T, d *Maker) {
		for _, from := range allDTypes {
			var vals []float64
			for _, v := range src {
				if from.IsFloat() {
					vals = append(vals, roundTo(from, v))
				} else if !math.IsNaN(v) && !math.IsInf(v, 0) && v >= intMin(from) && v <= intMax(from) {
					vals = append(vals, math.Trunc(v))
				}
			}
			if from == Bool {
				vals = []float64{0, 1, 1, 0}
			}
			for _, to := range allDTypes {
				x := fromTyped(d, typed(from, vals), []int{len(vals)}).Slice(S(None, None, -1))
				y := x.AsType(to)
				want := make([]float64, len(vals))
				for i := range vals {
					v := vals[len(vals)-1-i]
					switch {
					case to == Bool:
						want[i] = b2f(v != 0)
					case to.IsFloat():
						want[i] = roundTo(to, v)
					case from.IsFloat():
						want[i] = float64(saturate(v, to))
					default:
						want[i] = wrapInt(to, v)
					}
				}
				checkHost(t, fmt.Sprintf("AsType %v->%v", from, to), readHost(t, y), []int{len(vals)}, want, 0)
			}
		}
	})
}

// pow3 is 3^n in wrapping int64 arithmetic.
func pow3(n int) int64 {
	p := int64(1)
	for range n {
		p *= 3
	}
	return p
}
