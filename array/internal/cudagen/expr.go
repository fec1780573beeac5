package cudagen

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/gocu-dev/gocu/array/internal/backend"
)

// elemFunc writes the per-element device function of a program:
//
//	static __device__ __forceinline__ OUT name(IN0 x0, ..., S0 s0, ..., long long idx)
//
// taking the values of the inputs at one position, the scalar parameters
// (already in their dtypes) and the flat index, and returning the result.
// Every kernel that evaluates the program (elementwise, reduction prologue,
// softmax input) calls it.
func elemFunc(name string, p *backend.Program) (string, error) {
	if err := p.Validate(); err != nil {
		return "", err
	}
	var b strings.Builder
	var params []string
	for i, in := range p.Inputs {
		params = append(params, fmt.Sprintf("%s x%d", ctype(in.DType()), i))
	}
	for i, s := range p.Scalars {
		params = append(params, fmt.Sprintf("%s s%d", ctype(s.DType), i))
	}
	params = append(params, "long long idx")
	fmt.Fprintf(&b, "static __device__ __forceinline__ %s %s(%s) {\n", ctype(p.Result()), name, strings.Join(params, ", "))
	b.WriteString("\t(void)idx;\n")
	for i, n := range p.Nodes {
		var e string
		switch n.Op {
		case backend.OpInput:
			e = fmt.Sprintf("x%d", n.Args[0])
		case backend.OpScalar:
			e = fmt.Sprintf("s%d", n.Args[0])
		case backend.OpIota:
			e = "idx"
		default:
			at := p.Nodes[n.Args[0]].DType
			if n.Op == backend.OpWhere {
				at = p.Nodes[n.Args[1]].DType
			}
			var args [3]string
			for a := 0; a < n.Op.Arity(); a++ {
				args[a] = fmt.Sprintf("v%d", n.Args[a])
			}
			var err error
			e, err = opExpr(n.Op, n.DType, at, args[0], args[1], args[2])
			if err != nil {
				return "", fmt.Errorf("cudagen: node %d: %w", i, err)
			}
		}
		fmt.Fprintf(&b, "\tconst %s v%d = %s;\n", ctype(n.DType), i, e)
	}
	fmt.Fprintf(&b, "\treturn v%d;\n}\n", len(p.Nodes)-1)
	return b.String(), nil
}

func fn(name string, d backend.DType) string {
	if d == backend.Float32 {
		return name + "f"
	}
	return name
}

// spelled writes op from its CUDA spelling in the op table: a math
// function of float arguments, or a prefix or infix operator.
func spelled(op backend.Op, dt backend.DType, a, b string) (string, bool) {
	s := backend.Ops[op].CUDA
	switch {
	case s == "":
		return "", false
	case s[0] >= 'a' && s[0] <= 'z':
		if !dt.IsFloat() {
			return "", false
		}
		if op.Arity() == 1 {
			return fmt.Sprintf("%s(%s)", fn(s, dt), a), true
		}
		return fmt.Sprintf("%s(%s, %s)", fn(s, dt), a, b), true
	case op.Arity() == 1:
		return "(" + s + a + ")", true
	}
	return fmt.Sprintf("(%s %s %s)", a, s, b), true
}

var intSuffix = map[backend.DType]string{backend.Uint8: "u8", backend.Int8: "i8", backend.Int32: "i32", backend.Int64: "i64"}

// opExpr is the C expression of one operation. dt is the result dtype, at
// the arguments' (for a cast, the source).
func opExpr(op backend.Op, dt, at backend.DType, a, b, c string) (string, error) {
	T := ctype(dt)
	switch {
	case op == backend.OpCast:
		return castC(at, dt, a), nil
	case op == backend.OpWhere:
		return fmt.Sprintf("(%s ? %s : %s)", a, b, c), nil
	case op.IsCompare() || op.IsLogical():
		if e, ok := spelled(op, dt, a, b); ok {
			return e, nil
		}
	}
	switch op {
	case backend.OpIsNaN:
		return fmt.Sprintf("(%s != %s)", a, a), nil
	case backend.OpIsInf:
		return fmt.Sprintf("%s(%s)", fn("gocu_isinf", at), a), nil
	case backend.OpIsFinite:
		return fmt.Sprintf("%s(%s)", fn("gocu_isfinite", at), a), nil
	}
	if dt == backend.Bool {
		switch op {
		case backend.OpAbs, backend.OpSquare, backend.OpFloor, backend.OpCeil, backend.OpRound, backend.OpTrunc:
			return a, nil
		case backend.OpAdd, backend.OpMaximum:
			return fmt.Sprintf("(%s || %s)", a, b), nil
		case backend.OpMul, backend.OpMinimum:
			return fmt.Sprintf("(%s && %s)", a, b), nil
		}
		return "", fmt.Errorf("%v is not defined for bool", op)
	}
	if dt.IsFloat() {
		zero, one := lit(dt, 0), lit(dt, 1)
		switch op {
		case backend.OpSign:
			return fmt.Sprintf("(%s > %s ? %s : %s < %s ? -%s : %s == %s ? %s : %s)", a, zero, one, a, zero, one, a, zero, zero, a), nil
		case backend.OpSquare:
			return fmt.Sprintf("(%s * %s)", a, a), nil
		case backend.OpReciprocal:
			return fmt.Sprintf("(%s / %s)", one, a), nil
		case backend.OpSigmoid:
			return fmt.Sprintf("(%s / (%s + %s(-%s)))", one, one, fn("exp", dt), a), nil
		case backend.OpReLU:
			return fmt.Sprintf("(%s < %s ? %s : %s)", a, zero, zero, a), nil
		case backend.OpFloorDiv:
			return fmt.Sprintf("((%s)gocu_floordiv((double)%s, (double)%s))", T, a, b), nil
		case backend.OpMod:
			return fmt.Sprintf("((%s)gocu_fmod_py((double)%s, (double)%s))", T, a, b), nil
		case backend.OpDeg2Rad:
			return fmt.Sprintf("((%s)((double)%s * %s))", T, a, strconv.FormatFloat(backend.DegToRad, 'g', -1, 64)), nil
		case backend.OpRad2Deg:
			return fmt.Sprintf("((%s)((double)%s * %s))", T, a, strconv.FormatFloat(backend.RadToDeg, 'g', -1, 64)), nil
		case backend.OpMaximum:
			return fmt.Sprintf("((%s > %s || %s != %s) ? %s : %s)", a, b, a, a, a, b), nil
		case backend.OpMinimum:
			return fmt.Sprintf("((%s < %s || %s != %s) ? %s : %s)", a, b, a, a, a, b), nil
		}
		if e, ok := spelled(op, dt, a, b); ok {
			return e, nil
		}
		return "", fmt.Errorf("%v is not defined for %v", op, dt)
	}
	// Integers: arithmetic wraps, so signed types compute in unsigned.
	wrap := func(expr string) string {
		if dt == backend.Uint8 {
			return fmt.Sprintf("((unsigned char)(%s))", expr)
		}
		return fmt.Sprintf("((%s)(%s))", T, expr)
	}
	u := func(x string) string {
		if dt == backend.Uint8 {
			return "(unsigned int)" + x
		}
		return fmt.Sprintf("(%s)%s", utype(dt), x)
	}
	sfx := intSuffix[dt]
	switch op {
	case backend.OpNeg:
		return wrap(u("0") + " - " + u(a)), nil
	case backend.OpAbs:
		if dt == backend.Uint8 {
			return a, nil
		}
		return fmt.Sprintf("(%s < 0 ? %s : %s)", a, wrap(u("0")+" - "+u(a)), a), nil
	case backend.OpSign:
		return fmt.Sprintf("((%s)((%s > 0) - (%s < 0)))", T, a, a), nil
	case backend.OpSquare:
		return wrap(u(a) + " * " + u(a)), nil
	case backend.OpReLU:
		return fmt.Sprintf("(%s < 0 ? (%s)0 : %s)", a, T, a), nil
	case backend.OpFloor, backend.OpCeil, backend.OpRound, backend.OpTrunc:
		return a, nil
	case backend.OpAdd:
		return wrap(u(a) + " + " + u(b)), nil
	case backend.OpSub:
		return wrap(u(a) + " - " + u(b)), nil
	case backend.OpMul:
		return wrap(u(a) + " * " + u(b)), nil
	case backend.OpFloorDiv:
		return fmt.Sprintf("gocu_floordiv_%s(%s, %s)", sfx, a, b), nil
	case backend.OpMod:
		return fmt.Sprintf("gocu_mod_%s(%s, %s)", sfx, a, b), nil
	case backend.OpPow:
		return fmt.Sprintf("gocu_pow_%s(%s, %s)", sfx, a, b), nil
	case backend.OpMaximum:
		return fmt.Sprintf("(%s > %s ? %s : %s)", a, b, a, b), nil
	case backend.OpMinimum:
		return fmt.Sprintf("(%s < %s ? %s : %s)", a, b, a, b), nil
	case backend.OpLeftShift, backend.OpRightShift:
		// NumPy's shifts: a count of the width or more, or a negative
		// one (huge as unsigned), gives 0, or -1 for a negative a >>.
		w := 8 * dt.Size()
		if op == backend.OpLeftShift {
			return fmt.Sprintf("((unsigned long long)%s < %d ? %s : (%s)0)", b, w, wrap(u(a)+" << "+b), T), nil
		}
		fill := fmt.Sprintf("(%s)0", T)
		if dt.IsSigned() {
			fill = fmt.Sprintf("(%s < 0 ? (%s)-1 : (%s)0)", a, T, T)
		}
		return fmt.Sprintf("((unsigned long long)%s < %d ? (%s)(%s >> %s) : %s)", b, w, T, a, b, fill), nil
	}
	if e, ok := spelled(op, dt, a, b); ok {
		return fmt.Sprintf("((%s)%s)", T, e), nil
	}
	return "", fmt.Errorf("%v is not defined for %v", op, dt)
}

// castC converts a value between dtypes as the CPU backend does.
func castC(from, to backend.DType, a string) string {
	if s, ok := castStorageC(from, to, a); ok {
		return s
	}
	switch {
	case from == to:
		return a
	case to == backend.Bool:
		return fmt.Sprintf("(%s != 0)", a)
	case from == backend.Bool:
		return fmt.Sprintf("((%s)(%s ? 1 : 0))", ctype(to), a)
	case from.IsFloat() && to.IsInt():
		return fmt.Sprintf("gocu_f2%s((double)%s)", intSuffix[to], a)
	}
	return fmt.Sprintf("((%s)%s)", ctype(to), a)
}
