package difftest

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"

	"github.com/gocu-dev/gocu/kernel"
)

type expr struct {
	src   string
	val   Value
	konst bool // a constant: Go folds it at compile time
	tol   int
	abs   float64
}

type generator struct {
	r   *rand.Rand
	cfg Config
	in  *Inputs
}

// inputs returns n values of kind k, special values first.
func (g *generator) inputs(k Kind, n int) []Value {
	var specials []uint64
	switch k {
	case F32:
		for _, f := range []float32{0, float32(math.Copysign(0, -1)), 1, -1, 0.5, float32(math.Inf(1)), float32(math.Inf(-1)),
			float32(math.NaN()), math.MaxFloat32, math.SmallestNonzeroFloat32, 2147483648, -2147483904, 1e10, -3.5, 2.5, 9.3e18} {
			specials = append(specials, uint64(math.Float32bits(f)))
		}
	case F64:
		for _, f := range []float64{0, math.Copysign(0, -1), 1, -1, 0.5, math.Inf(1), math.Inf(-1), math.NaN(), math.MaxFloat64,
			math.SmallestNonzeroFloat64, 2147483647.9, -2147483648.7, 9.3e18, -9.2233720368547758e18, 1.8446744073709552e19, -2.5} {
			specials = append(specials, math.Float64bits(f))
		}
	default:
		w := k.bits()
		if k.isSigned() {
			minV := int64(-1) << (w - 1)
			maxV := int64(uint64(1)<<(w-1) - 1)
			for _, v := range []int64{0, 1, -1, minV, maxV, minV + 1, 7, -7, 2, 31, 63, 64} {
				specials = append(specials, uint64(v))
			}
		} else {
			maxV := uint64(1)<<w - 1
			if w == 64 {
				maxV = math.MaxUint64
			}
			specials = append(specials, 0, 1, maxV, maxV-1, 7, 2, 31, 32, 63, 64, maxV/2, maxV/2+1)
		}
	}
	vals := make([]Value, n)
	for i := range vals {
		var b uint64
		if i < len(specials) && g.r.IntN(3) > 0 {
			b = specials[i]
		} else {
			b = g.random(k)
		}
		vals[i] = Value{k, b}
	}
	g.r.Shuffle(len(vals), func(i, j int) { vals[i], vals[j] = vals[j], vals[i] })
	return vals
}

// random returns random bits of kind k, often small values.
func (g *generator) random(k Kind) uint64 {
	switch k {
	case F32:
		if g.r.IntN(2) == 0 {
			return uint64(math.Float32bits(float32(g.r.NormFloat64() * 100)))
		}
		return uint64(math.Float32bits(float32(g.r.NormFloat64() * math.Pow(10, float64(g.r.IntN(40)-20)))))
	case F64:
		if g.r.IntN(2) == 0 {
			return math.Float64bits(g.r.NormFloat64() * 100)
		}
		return math.Float64bits(g.r.NormFloat64() * math.Pow(10, float64(g.r.IntN(600)-300)))
	}
	var v uint64
	if g.r.IntN(2) == 0 {
		v = uint64(int64(g.r.IntN(200) - 100))
	} else {
		v = g.r.Uint64()
	}
	return normalize(k, v)
}

// normalize sign- or zero-extends the low bits of v for kind k.
func normalize(k Kind, v uint64) uint64 {
	switch k {
	case I8:
		return uint64(int64(int8(v)))
	case I16:
		return uint64(int64(int16(v)))
	case I32:
		return uint64(int64(int32(v)))
	case U8:
		return uint64(uint8(v))
	case U16:
		return uint64(uint16(v))
	case U32, F32:
		return uint64(uint32(v))
	}
	return v
}

func (g *generator) leaf(k Kind) expr {
	vals := g.in[k]
	if g.r.IntN(10) < 7 {
		i := g.r.IntN(len(vals))
		return expr{src: fmt.Sprintf("%s[%d]", paramNames[k], i), val: vals[i]}
	}
	// A typed constant.
	for {
		b := g.random(k)
		if g.r.IntN(3) == 0 {
			b = vals[g.r.IntN(len(vals))].Bits
		}
		v := Value{k, b}
		if s, ok := constSrc(v); ok {
			return expr{src: s, val: v, konst: true}
		}
	}
}

// constSrc prints a constant of v's kind, if v can be one.
func constSrc(v Value) (string, bool) {
	switch v.Kind {
	case F32:
		f := math.Float32frombits(uint32(v.Bits))
		if f != f || math.IsInf(float64(f), 0) || (f == 0 && math.Signbit(float64(f))) {
			return "", false
		}
		return "float32(" + strconv.FormatFloat(float64(f), 'g', -1, 32) + ")", true
	case F64:
		f := math.Float64frombits(v.Bits)
		if f != f || math.IsInf(f, 0) || (f == 0 && math.Signbit(f)) {
			return "", false
		}
		return "float64(" + strconv.FormatFloat(f, 'g', -1, 64) + ")", true
	}
	if v.Kind.isSigned() {
		return fmt.Sprintf("%s(%d)", v.Kind, int64(v.Bits)), true
	}
	return fmt.Sprintf("%s(%d)", v.Kind, v.Bits), true
}

// nonConst returns an expression of kind k that is not a constant.
func (g *generator) nonConst(k Kind, depth int) (expr, bool) {
	for tries := 0; tries < 20; tries++ {
		e, ok := g.expr(k, depth)
		if ok && !e.konst {
			return e, true
		}
	}
	vals := g.in[k]
	i := g.r.IntN(len(vals))
	return expr{src: fmt.Sprintf("%s[%d]", paramNames[k], i), val: vals[i]}, true
}

// root returns a top-level expression of kind k.
func (g *generator) root(k Kind) (expr, bool) {
	if k.isFloat() && !g.cfg.NoMath && g.r.IntN(6) == 0 {
		return g.transcendental(k)
	}
	return g.expr(k, g.cfg.Depth)
}

var intOps = []string{"+", "-", "*", "/", "%", "&", "|", "^", "&^", "<<", ">>"}
var floatOps = []string{"+", "-", "*", "/"}

func (g *generator) expr(k Kind, depth int) (expr, bool) {
	if depth <= 0 || g.r.IntN(5) == 0 {
		return g.leaf(k), true
	}
	switch g.r.IntN(10) {
	case 0: // unary
		x, _ := g.nonConst(k, depth-1)
		ops := []string{"-", "+"}
		if !k.isFloat() {
			ops = append(ops, "^")
		}
		op := ops[g.r.IntN(len(ops))]
		return expr{src: op + "(" + x.src + ")", val: unary(op, x.val)}, true
	case 1, 2: // conversion
		from := Kind(g.r.IntN(int(numKinds)))
		x, _ := g.nonConst(from, depth-1)
		return expr{src: fmt.Sprintf("%s(%s)", k, x.src), val: convert(x.val, k)}, true
	case 3: // min, max
		x, _ := g.nonConst(k, depth-1)
		y, ok := g.expr(k, depth-1)
		if !ok {
			return expr{}, false
		}
		op := []string{"min", "max"}[g.r.IntN(2)]
		if g.r.IntN(2) == 0 {
			x, y = y, x
		}
		return expr{src: fmt.Sprintf("%s(%s, %s)", op, x.src, y.src), val: minmax(op, x.val, y.val)}, true
	case 4:
		if k.isFloat() {
			return g.exactMath(k, depth)
		}
	}
	ops := floatOps
	if !k.isFloat() {
		ops = intOps
	}
	op := ops[g.r.IntN(len(ops))]
	if op == "<<" || op == ">>" {
		x, _ := g.nonConst(k, depth-1)
		ck := Kind(g.r.IntN(int(U64) + 1))
		if ck == Int || ck == I8 || ck == I16 || ck == I32 || ck == I64 {
			if g.r.IntN(2) == 0 {
				ck = U8
			}
		}
		var s expr
		if g.r.IntN(3) == 0 {
			// A constant count, sometimes past the width.
			n := uint64(g.r.IntN(k.bits() + 8))
			s = expr{src: strconv.FormatUint(n, 10), val: Value{U64, n}, konst: true}
		} else {
			var ok bool
			s, ok = g.expr(ck, depth-1)
			if !ok || s.konst {
				s, _ = g.nonConst(ck, depth-1)
			}
			if ck.isSigned() && int64(s.val.Bits) < 0 {
				return expr{}, false // Go panics on a negative count
			}
		}
		return expr{src: "(" + x.src + " " + op + " " + s.src + ")", val: shift(op, x.val, s.val.Bits)}, true
	}
	x, ok1 := g.expr(k, depth-1)
	y, ok2 := g.expr(k, depth-1)
	if !ok1 || !ok2 {
		return expr{}, false
	}
	if x.konst && y.konst {
		y, _ = g.nonConst(k, depth-1)
	}
	if (op == "/" || op == "%") && !k.isFloat() && y.val.Bits == 0 {
		return expr{}, false // Go panics (or does not compile)
	}
	v, ok := binary(op, x.val, y.val)
	if !ok {
		return expr{}, false
	}
	return expr{src: "(" + x.src + " " + op + " " + y.src + ")", val: v}, true
}

// exactMath applies a math function IEEE 754 defines exactly.
func (g *generator) exactMath(k Kind, depth int) (expr, bool) {
	x, _ := g.nonConst(k, depth-1)
	if k == F32 {
		f := math.Float32frombits(uint32(x.val.Bits))
		names := []string{"Abs", "Floor", "Ceil", "Trunc", "Round", "Sqrt", "Min", "Max", "Mod"}
		name := names[g.r.IntN(len(names))]
		var r float32
		src := "kernel." + name + "(" + x.src
		switch name {
		case "Abs":
			r = kernel.Abs(f)
		case "Floor":
			r = kernel.Floor(f)
		case "Ceil":
			r = kernel.Ceil(f)
		case "Trunc":
			r = kernel.Trunc(f)
		case "Round":
			r = kernel.Round(f)
		case "Sqrt":
			r = kernel.Sqrt(f)
		default:
			y, ok := g.expr(k, depth-1)
			if !ok {
				return expr{}, false
			}
			yf := math.Float32frombits(uint32(y.val.Bits))
			src += ", " + y.src
			switch name {
			case "Min":
				r = kernel.Min(f, yf)
			case "Max":
				r = kernel.Max(f, yf)
			case "Mod":
				r = kernel.Mod(f, yf)
			}
		}
		return expr{src: src + ")", val: Value{F32, uint64(math.Float32bits(r))}}, true
	}
	f := math.Float64frombits(x.val.Bits)
	names := []string{"Abs", "Floor", "Ceil", "Trunc", "Round", "RoundToEven", "Sqrt", "Min", "Max", "Mod", "Copysign", "Dim"}
	name := names[g.r.IntN(len(names))]
	var r float64
	src := "math." + name + "(" + x.src
	switch name {
	case "Abs":
		r = math.Abs(f)
	case "Floor":
		r = math.Floor(f)
	case "Ceil":
		r = math.Ceil(f)
	case "Trunc":
		r = math.Trunc(f)
	case "Round":
		r = math.Round(f)
	case "RoundToEven":
		r = math.RoundToEven(f)
	case "Sqrt":
		r = math.Sqrt(f)
	default:
		y, ok := g.expr(k, depth-1)
		if !ok {
			return expr{}, false
		}
		yf := math.Float64frombits(y.val.Bits)
		src += ", " + y.src
		switch name {
		case "Min":
			r = math.Min(f, yf)
		case "Max":
			r = math.Max(f, yf)
		case "Mod":
			r = math.Mod(f, yf)
		case "Copysign":
			r = math.Copysign(f, yf)
		case "Dim":
			r = math.Dim(f, yf)
		}
	}
	return expr{src: src + ")", val: Value{F64, math.Float64bits(r)}}, true
}

// Transcendental functions, with the CUDA Math API's documented maximum
// error in ulps plus one for the Go side (its float32 functions round a
// float64 result; its float64 functions are within about one ulp).
var math32 = []struct {
	name string
	f    func(float32) float32
	ulp  int
}{
	{"Exp", kernel.Exp, 3}, {"Exp2", kernel.Exp2, 3}, {"Expm1", kernel.Expm1, 2}, {"Log", kernel.Log, 2},
	{"Log2", kernel.Log2, 2}, {"Log10", kernel.Log10, 3}, {"Log1p", kernel.Log1p, 2}, {"Sin", kernel.Sin, 3},
	{"Cos", kernel.Cos, 3}, {"Tan", kernel.Tan, 5}, {"Tanh", kernel.Tanh, 3}, {"Atan", kernel.Atan, 3},
	{"Asin", kernel.Asin, 3}, {"Acos", kernel.Acos, 3}, {"Sinh", kernel.Sinh, 4}, {"Cosh", kernel.Cosh, 3},
	{"Erf", kernel.Erf, 3}, {"Cbrt", kernel.Cbrt, 2}, {"Rsqrt", kernel.Rsqrt, 3},
}

var math64 = []struct {
	name string
	f    func(float64) float64
	ulp  int
}{
	{"Exp", math.Exp, 2}, {"Exp2", math.Exp2, 2}, {"Expm1", math.Expm1, 2}, {"Log", math.Log, 2},
	{"Log2", math.Log2, 2}, {"Log10", math.Log10, 2}, {"Log1p", math.Log1p, 2}, {"Sin", math.Sin, 3},
	{"Cos", math.Cos, 3}, {"Tan", math.Tan, 3}, {"Tanh", math.Tanh, 2}, {"Atan", math.Atan, 3},
	{"Asin", math.Asin, 3}, {"Acos", math.Acos, 3}, {"Sinh", math.Sinh, 3}, {"Cosh", math.Cosh, 3},
	{"Erf", math.Erf, 3}, {"Cbrt", math.Cbrt, 2},
}

func (g *generator) transcendental(k Kind) (expr, bool) {
	x, _ := g.nonConst(k, 1)
	if k == F32 {
		m := math32[g.r.IntN(len(math32))]
		f := math.Float32frombits(uint32(x.val.Bits))
		if g.r.IntN(4) == 0 {
			y, _ := g.nonConst(k, 1)
			yf := math.Float32frombits(uint32(y.val.Bits))
			if g.r.IntN(2) == 0 {
				r := kernel.Pow(f, yf)
				return expr{src: "kernel.Pow(" + x.src + ", " + y.src + ")", val: Value{F32, uint64(math.Float32bits(r))}, tol: 5}, true
			}
			r := kernel.Atan2(f, yf)
			return expr{src: "kernel.Atan2(" + x.src + ", " + y.src + ")", val: Value{F32, uint64(math.Float32bits(r))}, tol: 4}, true
		}
		return expr{src: "kernel." + m.name + "(" + x.src + ")", val: Value{F32, uint64(math.Float32bits(m.f(f)))}, tol: m.ulp}, true
	}
	m := math64[g.r.IntN(len(math64))]
	f := math.Float64frombits(x.val.Bits)
	if (m.name == "Log" || m.name == "Log10") && f != 0 && math.Abs(f) < 0x1p-1022 {
		// Go's math.Log is wrong for subnormal arguments on amd64
		// (golang/go#56600); CUDA's is right. Not the translator's
		// business: leave them out.
		return expr{}, false
	}
	if g.r.IntN(4) == 0 {
		y, _ := g.nonConst(k, 1)
		yf := math.Float64frombits(y.val.Bits)
		if g.r.IntN(2) == 0 {
			// Go's Pow loses accuracy as |y log x| grows (it multiplies out
			// the integer part of y; 74 ulps seen at 1e-233); CUDA's is
			// within 2 ulps. Allow an error that grows with the exponent.
			r := math.Pow(f, yf)
			tol := 16
			if _, e := math.Frexp(r); r != 0 && !math.IsInf(r, 0) && r == r {
				tol += max(e, -e)
			}
			return expr{src: "math.Pow(" + x.src + ", " + y.src + ")", val: Value{F64, math.Float64bits(r)}, tol: tol}, true
		}
		return expr{src: "math.Atan2(" + x.src + ", " + y.src + ")", val: Value{F64, math.Float64bits(math.Atan2(f, yf))}, tol: 3}, true
	}
	return expr{src: "math." + m.name + "(" + x.src + ")", val: Value{F64, math.Float64bits(m.f(f))}, tol: m.ulp,
		abs: 16 * 0x1p-52 * max(1, math.Abs(f))}, true
}
