package gen

import (
	"fmt"
	"go/ast"
	"go/constant"
	"go/token"
	"go/types"
	"strings"
)

// cx is a translated C expression.
type cx struct {
	s    string
	prec int // precedence of the outermost operator of s
	// uns is set when s computes a signed 32- or 64-bit Go value in the
	// unsigned C type of the same width, where + - * wrap as in Go. It is
	// converted back to the signed type where the sign matters.
	uns  bool
	cval constant.Value // the value of an integer constant
	// signed is the plain signed rendering of an unsigned-form value made
	// from one, so that converting back does not stack casts.
	signed *cx
}

// C operator precedences, higher binds tighter.
const (
	precComma = iota + 1
	precAssign
	precCond
	precLOr
	precLAnd
	precOr
	precXor
	precAnd
	precEq
	precRel
	precShift
	precAdd
	precMul
	precUnary
	precPostfix
	precPrimary
)

var binPrec = map[token.Token]int{
	token.LOR: precLOr, token.LAND: precLAnd, token.OR: precOr, token.XOR: precXor, token.AND: precAnd,
	token.EQL: precEq, token.NEQ: precEq, token.LSS: precRel, token.LEQ: precRel, token.GTR: precRel,
	token.GEQ: precRel, token.SHL: precShift, token.SHR: precShift, token.ADD: precAdd, token.SUB: precAdd,
	token.MUL: precMul, token.QUO: precMul, token.REM: precMul, token.AND_NOT: precAnd,
}

// at returns s parenthesized unless it binds at least as tightly as p.
func (c cx) at(p int) string {
	if c.prec >= p {
		return c.s
	}
	return "(" + c.s + ")"
}

func prim(s string) cx { return cx{s: s, prec: precPrimary} }

// cast returns (t)x.
func cast(t string, x cx) cx {
	s := x.at(precUnary)
	return cx{s: "(" + t + ")" + s, prec: precUnary}
}

// call returns name(args...).
func callx(name string, args ...cx) cx {
	ss := make([]string, len(args))
	for i, a := range args {
		ss[i] = a.at(precAssign)
	}
	return prim(name + "(" + strings.Join(ss, ", ") + ")")
}

// macroArg protects a macro argument that contains a comma outside
// parentheses (as template argument lists do).
func macroArg(s string) string {
	depth := 0
	for _, r := range s {
		switch r {
		case '(', '[', '{':
			depth++
		case ')', ']', '}':
			depth--
		case ',':
			if depth == 0 {
				return "(" + s + ")"
			}
		}
	}
	return s
}

// sgn materializes x as a value of its Go type t.
func (fc *fnCtx) sgn(x cx, t types.Type) cx {
	if !x.uns {
		return x
	}
	if x.signed != nil {
		return *x.signed
	}
	return cast(fc.ctype(t), x)
}

// ufm returns x in the unsigned form of signed type t.
func (fc *fnCtx) ufm(x cx, t types.Type) cx {
	if x.uns {
		return x
	}
	if x.cval != nil {
		if constant.Sign(x.cval) >= 0 {
			suffix := "u"
			if bits(t) == 64 {
				suffix = "ull"
			}
			return cx{s: x.cval.ExactString() + suffix, prec: precPrimary, uns: true}
		}
		return cx{s: "(" + utype(t) + ")" + x.s, prec: precUnary, uns: true}
	}
	c := cast(utype(t), x)
	c.uns = true
	c.signed = &x
	return c
}

func (fc *fnCtx) typeOf(e ast.Expr) types.Type { return fc.info.TypeOf(e) }

func (fc *fnCtx) ctype(t types.Type) string { return fc.u.ctype(t, fc.pos) }

// val translates e as a value of its Go type.
func (fc *fnCtx) val(e ast.Expr) cx {
	return fc.sgn(fc.expr(e), fc.typeOf(e))
}

// valAs translates e and converts it to type t (used where Go converts
// implicitly: assignment of an untyped constant, which go/types already
// typed, or identical types).
func (fc *fnCtx) valAs(e ast.Expr, t types.Type) cx {
	x := fc.val(e)
	if from := fc.typeOf(e); from != nil && !types.Identical(from, t) && fc.ctype(from) != fc.ctype(t) {
		return fc.convert(x, from, t)
	}
	return x
}

// expr translates an expression. Constants are folded by go/types and
// printed exactly in their type.
func (fc *fnCtx) expr(e ast.Expr) cx {
	fc.pos = e.Pos()
	if tv, ok := fc.info.Types[e]; ok && tv.Value != nil {
		return fc.u.constLit(tv.Value, tv.Type, e.Pos())
	}
	switch e := e.(type) {
	case *ast.ParenExpr:
		return fc.expr(e.X)
	case *ast.Ident:
		return fc.ident(e)
	case *ast.SelectorExpr:
		return fc.selector(e)
	case *ast.IndexExpr:
		return fc.index(e, fc.u.site(e, fc.f), false)
	case *ast.IndexListExpr:
		fc.unsupported(e.Pos(), "a generic function value", "call the function")
	case *ast.SliceExpr:
		return fc.sliceExpr(e)
	case *ast.StarExpr:
		return fc.deref(e)
	case *ast.UnaryExpr:
		return fc.unary(e)
	case *ast.BinaryExpr:
		x := fc.expr(e.X)
		y := fc.expr(e.Y)
		return fc.binop(e.Op, x, y, fc.typeOf(e.X), fc.typeOf(e.Y), fc.typeOf(e), e)
	case *ast.CallExpr:
		return fc.call(e)
	case *ast.CompositeLit:
		return fc.composite(e)
	case *ast.FuncLit:
		fc.unsupported(e.Pos(), "a function literal (closure)", "write a named function and call it")
	case *ast.TypeAssertExpr:
		fc.unsupported(e.Pos(), "a type assertion", "use concrete types")
	case *ast.BasicLit:
		fc.unsupported(e.Pos(), "a string", "pass bytes as a []uint8")
	default:
		fc.unsupported(e.Pos(), fmt.Sprintf("the expression %s", fc.u.nodeText(e)), "use the Go subset described in package gen")
	}
	return prim("0")
}

func (fc *fnCtx) ident(id *ast.Ident) cx {
	obj := fc.info.Uses[id]
	if obj == nil {
		obj = fc.info.Defs[id]
	}
	switch obj := obj.(type) {
	case *types.Var:
		if fc.isThread(obj) {
			fc.unsupported(id.Pos(), "using the *kernel.Thread as a value", "pass it to a function, or read its fields and methods")
			return prim("0")
		}
		if name, ok := fc.vars[obj]; ok {
			if fc.shared[obj] {
				// The Go variable is a pointer to the shared array.
				return cx{s: "&" + name, prec: precUnary}
			}
			return prim(name)
		}
		if obj.Parent() == obj.Pkg().Scope() {
			return fc.tableRef(obj, id.Pos())
		} else if len(fc.u.diags) == 0 {
			// Otherwise its declaration was rejected already.
			fc.u.errorf(id.Pos(), "gocu gen: internal error: no C name for %s", obj.Name())
		}
	case *types.Nil:
		fc.unsupported(id.Pos(), "nil", "use an empty slice parameter or a length of zero")
	case *types.Func:
		fc.unsupported(id.Pos(), "a function value", "call the function directly")
	default:
		fc.unsupported(id.Pos(), "the identifier "+id.Name+" here", "use variables, constants and calls")
	}
	return prim("0")
}

// isThread reports whether obj is the function's *kernel.Thread.
func (fc *fnCtx) isThread(obj types.Object) bool {
	v, ok := obj.(*types.Var)
	return ok && isThreadPtr(v.Type())
}

func (fc *fnCtx) threadIdent(e ast.Expr) bool {
	id, ok := ast.Unparen(e).(*ast.Ident)
	if !ok {
		return false
	}
	return fc.isThread(fc.info.Uses[id])
}

// builtinVars are the Thread fields and the CUDA variables they become.
var builtinVars = map[string]string{"ThreadIdx": "threadIdx", "BlockIdx": "blockIdx", "BlockDim": "blockDim", "GridDim": "gridDim"}

func (fc *fnCtx) selector(e *ast.SelectorExpr) cx {
	sel := fc.info.Selections[e]
	if sel == nil {
		// A qualified identifier: constants were folded already.
		switch obj := fc.info.Uses[e.Sel].(type) {
		case *types.Var:
			return fc.tableRef(obj, e.Pos())
		case *types.Func:
			fc.unsupported(e.Pos(), "a function value", "call the function directly")
		default:
			fc.unsupported(e.Pos(), "the selector "+fc.u.nodeText(e), "use variables, constants and calls")
		}
		return prim("0")
	}
	if sel.Kind() != types.FieldVal {
		fc.unsupported(e.Pos(), "a method value", "call the method directly")
		return prim("0")
	}
	// t.ThreadIdx.X and friends.
	if inner, ok := ast.Unparen(e.X).(*ast.SelectorExpr); ok && fc.threadIdent(inner.X) {
		if v, ok := builtinVars[inner.Sel.Name]; ok {
			return cx{s: v + "." + strings.ToLower(e.Sel.Name), prec: precPostfix, uns: true}
		}
	}
	if fc.threadIdent(e.X) {
		if v, ok := builtinVars[e.Sel.Name]; ok {
			return prim("gocu_" + v + "()")
		}
		fc.unsupported(e.Pos(), "the Thread field "+e.Sel.Name, "use ThreadIdx, BlockIdx, BlockDim and GridDim")
		return prim("0")
	}
	base := fc.structBase(e.X, false)
	return cx{s: base.at(precPostfix) + fc.fieldPath(fc.typeOf(e.X), sel.Index(), e.Pos()), prec: precPostfix}
}

// structBase translates the operand of a field selection: a struct
// value, or a pointer to one (a shared struct, a pointer receiver), which
// Go dereferences implicitly. write says whether the field is assigned.
func (fc *fnCtx) structBase(x ast.Expr, write bool) cx {
	if _, ok := fc.typeOf(x).Underlying().(*types.Pointer); ok {
		if write {
			fc.eff.writes = true
		} else {
			fc.eff.reads = true
		}
		if name, ok := fc.sharedRoot(x); ok {
			return prim(name)
		}
		p := fc.expr(x)
		return cx{s: "(*" + p.at(precUnary) + ")", prec: precPrimary}
	}
	if write {
		return fc.lvalue(x)
	}
	return fc.expr(x)
}

// fieldPath returns ".a.b" for the field index path of a selection
// (promoted fields go through their embedded structs).
func (fc *fnCtx) fieldPath(t types.Type, path []int, pos token.Pos) string {
	var b strings.Builder
	for _, i := range path {
		if p, ok := t.Underlying().(*types.Pointer); ok {
			t = p.Elem()
		}
		st, ok := t.Underlying().(*types.Struct)
		if !ok {
			fc.u.errorf(pos, "gocu gen: internal error: field of non-struct %s", t)
			return ""
		}
		f := st.Field(i)
		switch {
		case isVectorNamed(t):
			b.WriteString("." + strings.ToLower(f.Name()))
		case isKernelNamed(t, "Dim3"):
			b.WriteString("." + f.Name())
		default:
			n, _ := types.Unalias(t).(*types.Named)
			s := fc.u.structs[n]
			if s == nil {
				fc.unsupported(pos, "a field of an unnamed struct type", "declare a named struct type")
				return ""
			}
			b.WriteString("." + s.fields[i])
		}
		t = f.Type()
	}
	return b.String()
}

func isVectorNamed(t types.Type) bool {
	_, ok := vectorType(t)
	return ok
}

// sharedRoot returns the name of the shared array a pointer expression
// denotes, when it is a variable bound to kernel.Shared.
func (fc *fnCtx) sharedRoot(e ast.Expr) (string, bool) {
	id, ok := ast.Unparen(e).(*ast.Ident)
	if !ok {
		return "", false
	}
	obj := fc.info.Uses[id]
	if obj == nil || !fc.shared[obj] {
		return "", false
	}
	return fc.vars[obj], true
}

// arrayObj returns a C expression of array type for e, which has array
// type or pointer-to-array type.
func (fc *fnCtx) arrayObj(e ast.Expr) (cx, *types.Array, bool) {
	t := fc.typeOf(e)
	if p, ok := t.Underlying().(*types.Pointer); ok {
		at, _ := p.Elem().Underlying().(*types.Array)
		if name, ok := fc.sharedRoot(e); ok {
			return prim(name), at, true
		}
		x := fc.expr(e)
		return cx{s: "(*" + x.at(precUnary) + ")", prec: precPrimary}, at, true
	}
	at, _ := t.Underlying().(*types.Array)
	return fc.expr(e), at, false
}

// indexVal translates an index: a constant, or a signed value.
func (fc *fnCtx) indexVal(e ast.Expr) cx {
	return fc.val(e)
}

// index translates x[i] (an rvalue unless write is set). site identifies
// the whole access expression for debug-mode checks.
func (fc *fnCtx) index(e *ast.IndexExpr, site int, write bool) cx {
	xt := fc.typeOf(e.X)
	switch u := xt.Underlying().(type) {
	case *types.Slice:
		if write {
			fc.eff.writes = true
		} else {
			fc.eff.reads = true
		}
		if size, _ := fc.u.cudaSize(u.Elem()); int(size) > fc.u.sinkBytes {
			fc.u.sinkBytes = int(size)
		}
		base := fc.val(e.X)
		i := fc.indexVal(e.Index)
		return cx{s: fmt.Sprintf("GOCU_AT(%s, %s, %d)", macroArg(base.s), macroArg(i.s), site), prec: precPrimary}
	case *types.Array, *types.Pointer:
		var arr cx
		var at *types.Array
		var viaPtr bool
		if inner, ok := ast.Unparen(e.X).(*ast.IndexExpr); ok && isArray(fc.typeOf(inner)) {
			arr = fc.index(inner, site, write)
			at = fc.typeOf(inner).Underlying().(*types.Array)
		} else {
			arr, at, viaPtr = fc.arrayObj(e.X)
		}
		if at == nil {
			fc.unsupported(e.Pos(), "indexing "+xt.String(), "index slices and arrays")
			return prim("0")
		}
		if viaPtr || fc.isSharedExpr(e.X) || fc.viaPointer(e.X) {
			if write {
				fc.eff.writes = true
			} else {
				fc.eff.reads = true
			}
		}
		if tv := fc.info.Types[e.Index]; tv.Value != nil {
			// Go checked a constant index at compile time.
			return cx{s: arr.at(precPostfix) + ".v[" + fc.indexVal(e.Index).s + "]", prec: precPostfix}
		}
		i := fc.indexVal(e.Index)
		return cx{s: fmt.Sprintf("%s.v[GOCU_AI(%s, %d, %d)]", arr.at(precPostfix), macroArg(i.s), at.Len(), site), prec: precPostfix}
	case *types.Map:
		fc.unsupported(e.Pos(), "a map", "use a slice or a fixed-size array indexed by an integer key")
	case *types.Basic:
		fc.unsupported(e.Pos(), "a string", "pass bytes as a []uint8")
	case *types.Signature:
		fc.unsupported(e.Pos(), "a generic function value", "call the function")
	default:
		_ = u
		fc.unsupported(e.Pos(), "indexing "+xt.String(), "index slices and arrays")
	}
	return prim("0")
}

func isArray(t types.Type) bool {
	if t == nil {
		return false
	}
	_, ok := t.Underlying().(*types.Array)
	return ok
}

// viaPointer reports whether an element chain is rooted at a pointer (a
// pointer receiver), whose memory may be shared.
func (fc *fnCtx) viaPointer(e ast.Expr) bool {
	for {
		switch x := ast.Unparen(e).(type) {
		case *ast.IndexExpr:
			e = x.X
		case *ast.SelectorExpr:
			e = x.X
		case *ast.Ident:
			_, ok := fc.typeOf(x).Underlying().(*types.Pointer)
			return ok
		default:
			return false
		}
	}
}

// isSharedExpr reports whether an array expression lives in shared memory
// (it is an element chain rooted at a kernel.Shared variable).
func (fc *fnCtx) isSharedExpr(e ast.Expr) bool {
	for {
		switch x := ast.Unparen(e).(type) {
		case *ast.IndexExpr:
			e = x.X
		case *ast.SelectorExpr:
			e = x.X
		case *ast.StarExpr:
			e = x.X
		case *ast.Ident:
			_, ok := fc.sharedRoot(x)
			return ok
		default:
			return false
		}
	}
}

// sliceExpr translates s[lo:hi] of a slice or an addressable array.
func (fc *fnCtx) sliceExpr(e *ast.SliceExpr) cx {
	if e.Slice3 {
		fc.unsupported(e.Pos(), "a three-index slice expression", "GPU slices carry no capacity; use s[lo:hi]")
		return prim("0")
	}
	xt := fc.typeOf(e.X)
	site := fc.u.site(e, fc.f)
	var base cx
	var elem types.Type
	switch u := xt.Underlying().(type) {
	case *types.Slice:
		base = fc.val(e.X)
		elem = u.Elem()
	case *types.Array, *types.Pointer:
		if fc.noWriteTable(e.X, "slicing") {
			return prim("0")
		}
		arr, at, _ := fc.arrayObj(e.X)
		if at == nil {
			fc.unsupported(e.Pos(), "slicing "+xt.String(), "slice slices and arrays")
			return prim("0")
		}
		if _, isPtr := u.(*types.Pointer); !isPtr && !fc.addressable(e.X) {
			fc.unsupported(e.Pos(), "slicing an array that is not a variable", "assign the array to a variable first")
			return prim("0")
		}
		elem = at.Elem()
		base = prim(fmt.Sprintf("gocu_slice<%s>{%s.v, %d}", fc.ctype(elem), arr.at(precPostfix), at.Len()))
	default:
		fc.unsupported(e.Pos(), "slicing "+xt.String(), "slice slices and arrays")
		return prim("0")
	}
	if e.Low == nil && e.High == nil {
		return base
	}
	lo := prim("0")
	if e.Low != nil {
		lo = cast("long long", fc.val(e.Low))
	}
	var hi cx
	if e.High != nil {
		hi = cast("long long", fc.val(e.High))
	} else {
		// s[lo:] needs the length of s: evaluate s once.
		if !fc.pure(e.X) {
			fc.unsupported(e.Pos(), "s[lo:] of an expression with calls", "assign the slice to a variable first")
		}
		hi = prim(base.at(precPostfix) + ".n")
	}
	_ = elem
	return callx("gocu_reslice", base, lo, hi, prim(fmt.Sprint(site)))
}

// addressable reports whether e denotes a variable (or part of one).
func (fc *fnCtx) addressable(e ast.Expr) bool {
	switch x := ast.Unparen(e).(type) {
	case *ast.Ident:
		_, ok := fc.info.Uses[x].(*types.Var)
		return ok
	case *ast.IndexExpr:
		if _, ok := fc.typeOf(x.X).Underlying().(*types.Slice); ok {
			return true
		}
		if _, ok := fc.typeOf(x.X).Underlying().(*types.Pointer); ok {
			return true
		}
		return fc.addressable(x.X)
	case *ast.SelectorExpr:
		return fc.addressable(x.X)
	case *ast.StarExpr:
		return true
	}
	return false
}

func (fc *fnCtx) deref(e *ast.StarExpr) cx {
	t := fc.typeOf(e.X)
	if p, ok := t.Underlying().(*types.Pointer); ok {
		switch p.Elem().Underlying().(type) {
		case *types.Array, *types.Struct:
			if name, ok := fc.sharedRoot(e.X); ok {
				fc.eff.reads = true
				return prim(name)
			}
			x := fc.expr(e.X)
			fc.eff.reads = true
			return cx{s: "(*" + x.at(precUnary) + ")", prec: precPrimary}
		}
	}
	fc.unsupported(e.Pos(), "dereferencing a pointer", "use slices; pointers exist only for shared arrays and pointer receivers")
	return prim("0")
}

func (fc *fnCtx) unary(e *ast.UnaryExpr) cx {
	t := fc.typeOf(e)
	switch e.Op {
	case token.ADD:
		return fc.expr(e.X)
	case token.SUB:
		if fc.lowpOperator(e.Op, t, e) {
			return prim("0")
		}
		x := fc.expr(e.X)
		switch classOf(t) {
		case wideSigned:
			x = fc.ufm(x, t)
			return cx{s: "-" + noSignStart(x.at(precUnary)), prec: precUnary, uns: true}
		case narrowS, narrowU:
			return cast(fc.ctype(t), cx{s: "-" + noSignStart(x.at(precUnary)), prec: precUnary})
		}
		return cx{s: "-" + noSignStart(x.at(precUnary)), prec: precUnary}
	case token.NOT:
		x := fc.val(e.X)
		return cx{s: "!" + x.at(precUnary), prec: precUnary}
	case token.XOR:
		if fc.lowpOperator(e.Op, t, e) {
			return prim("0")
		}
		x := fc.expr(e.X)
		switch classOf(t) {
		case narrowS, narrowU:
			return cast(fc.ctype(t), cx{s: "~" + x.at(precUnary), prec: precUnary})
		}
		return cx{s: "~" + x.at(precUnary), prec: precUnary, uns: x.uns}
	case token.AND:
		fc.unsupported(e.Pos(), "taking an address", "pass &s[i] only to the kernel package's atomics; use slices otherwise")
	case token.ARROW:
		fc.unsupported(e.Pos(), "a channel receive", "communicate through shared memory and SyncThreads")
	default:
		fc.unsupported(e.Pos(), "the operator "+e.Op.String(), "use Go's arithmetic operators")
	}
	return prim("0")
}

// noSignStart keeps "- -x" from becoming the decrement operator.
func noSignStart(s string) string {
	if strings.HasPrefix(s, "-") || strings.HasPrefix(s, "+") {
		return "(" + s + ")"
	}
	return s
}

// binop translates x op y with Go's meaning. xt and yt are the operand
// types (they differ only for shifts), rt the result type; node is the
// source of the operation for debug-mode sites.
func (fc *fnCtx) binop(op token.Token, x, y cx, xt, yt, rt types.Type, node ast.Node) cx {
	if fc.lowpOperator(op, xt, node) {
		return prim("0")
	}
	p := binPrec[op]
	bin := func(a, b cx, uns bool) cx {
		return cx{s: a.at(p) + " " + op.String() + " " + b.at(p+1), prec: p, uns: uns}
	}
	switch op {
	case token.LAND, token.LOR:
		return bin(fc.sgn(x, xt), fc.sgn(y, yt), false)
	case token.EQL, token.NEQ:
		if !isComparableScalar(xt) {
			fc.unsupported(node.Pos(), "comparing values of type "+types.TypeString(xt, types.RelativeTo(fc.u.pkg.Types)), "compare the fields or elements one by one")
			return prim("false")
		}
		if classOf(xt) == wideSigned && (x.uns || y.uns) {
			return bin(fc.ufm(x, xt), fc.ufm(y, xt), false)
		}
		return bin(fc.sgn(x, xt), fc.sgn(y, xt), false)
	case token.LSS, token.LEQ, token.GTR, token.GEQ:
		return bin(fc.sgn(x, xt), fc.sgn(y, xt), false)
	case token.SHL, token.SHR:
		return fc.shift(op, x, y, rt, yt, node)
	case token.QUO, token.REM:
		return fc.divide(op, x, y, rt, node)
	}
	switch classOf(rt) {
	case wideSigned:
		switch op {
		case token.ADD, token.SUB, token.MUL:
			return bin(fc.ufm(x, rt), fc.ufm(y, rt), true)
		case token.AND_NOT:
			if !(x.uns && y.uns) {
				x, y = fc.sgn(x, rt), fc.sgn(y, rt)
			}
			return cx{s: x.at(precAnd) + " & ~" + y.at(precUnary), prec: precAnd, uns: x.uns && y.uns}
		}
		if x.uns && y.uns {
			return bin(x, y, true)
		}
		return bin(fc.sgn(x, rt), fc.sgn(y, rt), false)
	case narrowS, narrowU:
		t := fc.ctype(rt)
		switch op {
		case token.MUL:
			if b := basicOf(rt); b.Kind() == types.Uint16 {
				// 65535*65535 overflows int, to which C promotes.
				return cast(t, cx{s: cast("unsigned int", x).s + " * " + y.at(precMul+1), prec: precMul})
			}
			return cast(t, bin(x, y, false))
		case token.ADD, token.SUB:
			return cast(t, bin(x, y, false))
		case token.AND_NOT:
			return cast(t, cx{s: x.at(precAnd) + " & ~" + y.at(precUnary), prec: precAnd})
		}
		return bin(x, y, false)
	}
	if op == token.AND_NOT {
		return cx{s: x.at(precAnd) + " & ~" + y.at(precUnary), prec: precAnd}
	}
	if isFloat(rt) || classOf(rt) == wideUns || isBool(rt) {
		return bin(x, y, false)
	}
	fc.unsupported(node.Pos(), "the operator "+op.String()+" on "+rt.String(), "use numbers")
	return prim("0")
}

func isComparableScalar(t types.Type) bool {
	b := basicOf(t)
	return b != nil && b.Info()&(types.IsNumeric|types.IsBoolean) != 0 && b.Info()&types.IsComplex == 0
}

// shift translates x << y and x >> y: Go gives 0 (or -1) for counts of at
// least the width, where C is undefined.
func (fc *fnCtx) shift(op token.Token, x, y cx, t, yt types.Type, node ast.Node) cx {
	w := bits(t)
	ct := fc.ctype(t)
	cls := classOf(t)
	if y.cval != nil {
		n, _ := constant.Uint64Val(y.cval)
		if constant.Sign(y.cval) < 0 {
			fc.u.errorf(node.Pos(), "negative shift count")
			return prim("0")
		}
		if n >= uint64(w) {
			if op == token.SHL || !isSigned(t) {
				return fc.discard(leftOperand(node), x, fc.u.zero(t, node.Pos()))
			}
			n = uint64(w - 1)
		}
		ns := fmt.Sprint(n)
		if op == token.SHL {
			switch cls {
			case wideSigned:
				return cx{s: fc.ufm(x, t).at(precShift) + " << " + ns, prec: precShift, uns: true}
			case narrowS, narrowU:
				return cast(ct, cx{s: cast("unsigned int", x).s + " << " + ns, prec: precShift})
			}
			return cx{s: x.at(precShift) + " << " + ns, prec: precShift}
		}
		return cx{s: fc.sgn(x, t).at(precShift) + " >> " + ns, prec: precShift}
	}
	var count cx
	if isSigned(yt) {
		count = prim(fmt.Sprintf("GOCU_SHCNT(%s, %d)", macroArg(fc.sgn(y, yt).s), fc.u.site(node, fc.f)))
	} else {
		count = cast("unsigned long long", fc.sgn(y, yt))
	}
	name := "gocu_shl"
	if op == token.SHR {
		name = "gocu_shr"
	}
	return callx(name+"<"+ct+">", fc.sgn(x, t), count)
}

// discard yields v, evaluating x first when the Go operand e makes calls.
func (fc *fnCtx) discard(e ast.Expr, x cx, v cx) cx {
	if e != nil && fc.pure(e) {
		return v
	}
	return cx{s: "((void)" + x.at(precUnary) + ", " + v.s + ")", prec: precPrimary}
}

// leftOperand returns the Go expression of the left operand of node, an
// operation or an assignment operation.
func leftOperand(node ast.Node) ast.Expr {
	switch n := node.(type) {
	case *ast.BinaryExpr:
		return n.X
	case *ast.AssignStmt:
		return n.Lhs[0]
	case *ast.IncDecStmt:
		return n.X
	}
	return nil
}

// divide translates x / y and x % y. Float division is IEEE; integer
// division by a constant other than -1 is C's, which truncates like Go's;
// everything else goes through gocu_div and gocu_rem.
func (fc *fnCtx) divide(op token.Token, x, y cx, t types.Type, node ast.Node) cx {
	if isFloat(t) {
		if op == token.REM {
			fc.u.errorf(node.Pos(), "%% on floats")
			return prim("0")
		}
		return cx{s: x.at(precMul) + " / " + y.at(precMul+1), prec: precMul}
	}
	ct := fc.ctype(t)
	if y.cval != nil {
		if constant.Sign(y.cval) == 0 {
			fc.u.errorf(node.Pos(), "division by zero")
			return prim("0")
		}
		minus1 := constant.Compare(y.cval, token.EQL, constant.MakeInt64(-1))
		switch {
		case minus1 && op == token.QUO:
			// MinInt / -1 wraps to MinInt in Go.
			if classOf(t) == wideSigned {
				return cx{s: "-" + noSignStart(fc.ufm(x, t).at(precUnary)), prec: precUnary, uns: true}
			}
			return cast(ct, cx{s: "-" + noSignStart(x.at(precUnary)), prec: precUnary})
		case minus1:
			return fc.discard(leftOperand(node), x, fc.u.zero(t, node.Pos()))
		}
		return cx{s: fc.sgn(x, t).at(precMul) + " " + op.String() + " " + y.at(precMul+1), prec: precMul}
	}
	name := "gocu_div"
	if op == token.REM {
		name = "gocu_rem"
	}
	return callx(name+"<"+ct+">", fc.sgn(x, t), fc.sgn(y, t), prim(fmt.Sprint(fc.u.site(node, fc.f))))
}

// convert translates the conversion of x from type from to type to.
func (fc *fnCtx) convert(x cx, from, to types.Type) cx {
	if y, ok := fc.lowpConvert(x, from, to); ok {
		return y
	}
	if types.Identical(from.Underlying(), to.Underlying()) || fc.ctype(from) == fc.ctype(to) {
		if _, ok := to.Underlying().(*types.Struct); ok && !types.Identical(from, to) && fc.ctype(from) != fc.ctype(to) {
			fc.unsupported(fc.pos, "converting between struct types", "copy the fields one by one")
			return prim("0")
		}
		return x
	}
	ct := fc.ctype(to)
	fb, tb := basicOf(from), basicOf(to)
	if fb == nil || tb == nil {
		fc.unsupported(fc.pos, "the conversion from "+from.String()+" to "+to.String(), "convert numbers only")
		return prim("0")
	}
	switch {
	case fb.Info()&types.IsInteger != 0 && tb.Info()&types.IsInteger != 0:
		fw, tw := bits(from), bits(to)
		switch {
		case x.uns && tw == fw && !isSigned(to):
			// The unsigned form already is the value.
			return cx{s: x.s, prec: x.prec}
		case x.uns && tw <= fw:
			return cast(ct, x)
		case classOf(to) == wideSigned && tw < fw:
			// Narrowing keeps the low bits: in unsigned form a plain cast.
			s := cast(ct, fc.sgn(x, from))
			u := cast(utype(to), fc.sgn(x, from))
			u.uns = true
			u.signed = &s
			return u
		}
		return cast(ct, fc.sgn(x, from))
	case fb.Info()&types.IsInteger != 0 && tb.Info()&types.IsFloat != 0:
		return cast(ct, fc.sgn(x, from))
	case fb.Info()&types.IsFloat != 0 && tb.Info()&types.IsFloat != 0:
		return cast(ct, x)
	case fb.Info()&types.IsFloat != 0 && tb.Info()&types.IsInteger != 0:
		switch tb.Kind() {
		case types.Int32:
			return callx("gocu_f2i32", x)
		case types.Int8, types.Int16, types.Uint8, types.Uint16:
			return cast(ct, callx("gocu_f2i32", x))
		case types.Int64, types.Int:
			return callx("gocu_f2i64", x)
		case types.Uint32:
			return cast(ct, callx("gocu_f2i64", x))
		case types.Uint64, types.Uint:
			return callx("gocu_f2u64", x)
		}
	}
	fc.unsupported(fc.pos, "the conversion from "+from.String()+" to "+to.String(), "convert between numeric types")
	return prim("0")
}

// composite translates a struct, array or vector literal.
func (fc *fnCtx) composite(e *ast.CompositeLit) cx {
	t := fc.typeOf(e)
	if v, ok := vectorType(t); ok {
		st := t.Underlying().(*types.Struct)
		vals := fc.structElems(e, st)
		return callx("make_"+v, vals...)
	}
	switch u := t.Underlying().(type) {
	case *types.Struct:
		if isKernelNamed(t, "Dim3") {
			return prim("gocu_Dim3{" + joinCx(fc.structElems(e, u)) + "}")
		}
		if _, ok := types.Unalias(t).(*types.Named); !ok {
			fc.unsupported(e.Pos(), "an anonymous struct literal", "declare a named struct type")
			return prim("0")
		}
		return prim(fc.ctype(t) + "{" + joinCx(fc.structElems(e, u)) + "}")
	case *types.Array:
		vals := make([]cx, u.Len())
		next := int64(0)
		for _, el := range e.Elts {
			v := el
			if kv, ok := el.(*ast.KeyValueExpr); ok {
				k, _ := constant.Int64Val(fc.info.Types[kv.Key].Value)
				next = k
				v = kv.Value
			}
			if next >= 0 && next < u.Len() {
				vals[next] = fc.valAs(v, u.Elem())
			}
			next++
		}
		for i := range vals {
			if vals[i].s == "" {
				vals[i] = fc.u.zero(u.Elem(), e.Pos())
			}
		}
		return prim(fc.ctype(t) + "{{" + joinCx(vals) + "}}")
	case *types.Slice:
		fc.unsupported(e.Pos(), "a slice literal (it allocates memory)", "use a fixed-size array, such as [4]float32{...}")
	case *types.Map:
		fc.unsupported(e.Pos(), "a map", "use a slice or a fixed-size array indexed by an integer key")
	default:
		fc.unsupported(e.Pos(), "a composite literal of type "+t.String(), "use struct and array literals")
	}
	return prim("0")
}

// structElems returns the field values of a struct literal in field order,
// zero where omitted.
func (fc *fnCtx) structElems(e *ast.CompositeLit, st *types.Struct) []cx {
	vals := make([]cx, st.NumFields())
	for i, el := range e.Elts {
		if kv, ok := el.(*ast.KeyValueExpr); ok {
			name := kv.Key.(*ast.Ident).Name
			for j := 0; j < st.NumFields(); j++ {
				if st.Field(j).Name() == name {
					vals[j] = fc.valAs(kv.Value, st.Field(j).Type())
				}
			}
			continue
		}
		if i < len(vals) {
			vals[i] = fc.valAs(el, st.Field(i).Type())
		}
	}
	for i := range vals {
		if vals[i].s == "" {
			vals[i] = fc.u.zero(st.Field(i).Type(), e.Pos())
		}
	}
	return vals
}

func joinCx(xs []cx) string {
	ss := make([]string, len(xs))
	for i, x := range xs {
		ss[i] = x.at(precAssign)
	}
	return strings.Join(ss, ", ")
}

// pure reports whether e makes no calls other than conversions and pure
// builtins, so that it may be evaluated twice.
func (fc *fnCtx) pure(e ast.Expr) bool {
	ok := true
	ast.Inspect(e, func(n ast.Node) bool {
		if c, isCall := n.(*ast.CallExpr); isCall {
			if tv := fc.info.Types[c.Fun]; tv.IsType() {
				return true
			}
			if id, isID := ast.Unparen(c.Fun).(*ast.Ident); isID {
				if _, b := fc.info.Uses[id].(*types.Builtin); b {
					return true
				}
			}
			if callee, isF := fc.calleeOf(c); isF && callee.Pkg() != nil && (callee.Pkg().Path() == "math" || (callee.Pkg().Path() == kernelPath && pureKernelFunc[callee.Name()])) {
				return true
			}
			ok = false
		}
		return ok
	})
	return ok
}
