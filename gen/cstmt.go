package gen

import (
	"fmt"
	"go/ast"
	"go/token"
	"go/types"
	"strings"
)

// stmts translates a statement list in the current block.
func (fc *fnCtx) stmts(list []ast.Stmt) {
	top := fc.kernelTop
	for _, s := range list {
		fc.kernelTop = top
		fc.stmt(s)
	}
	fc.kernelTop = top
}

// block translates a nested statement list.
func (fc *fnCtx) block(list []ast.Stmt) {
	top := fc.kernelTop
	fc.kernelTop = false
	fc.push()
	fc.stmts(list)
	fc.pop()
	fc.kernelTop = top
}

func (fc *fnCtx) stmt(s ast.Stmt) {
	fc.pos = s.Pos()
	saved := fc.cur
	fc.cur = s
	defer func() { fc.cur = saved }()
	fc.checkOrder(s)
	switch s := s.(type) {
	case *ast.DeclStmt:
		fc.declStmt(s)
	case *ast.AssignStmt:
		fc.assign(s)
	case *ast.ExprStmt:
		call, ok := ast.Unparen(s.X).(*ast.CallExpr)
		if !ok {
			fc.unsupported(s.Pos(), "this expression statement", "only calls can stand alone as statements")
			return
		}
		fc.line("%s;", fc.call(call).s)
	case *ast.IncDecStmt:
		op := token.ADD
		if s.Tok == token.DEC {
			op = token.SUB
		}
		t := fc.typeOf(s.X)
		if fc.lowpOperator(op, t, s) {
			return
		}
		if classOf(t) != wideSigned || !fc.pure(s.X) {
			if classOf(t) != wideSigned {
				fc.line("%s%s;", fc.lvalue(s.X).at(precPostfix), s.Tok)
				return
			}
		}
		fc.opAssign(s.X, op, nil, s)
	case *ast.IfStmt:
		fc.ifStmt(s, false)
	case *ast.ForStmt:
		fc.forStmt(s, "")
	case *ast.RangeStmt:
		fc.rangeStmt(s, "")
	case *ast.SwitchStmt:
		fc.switchStmt(s, "")
	case *ast.LabeledStmt:
		switch inner := s.Stmt.(type) {
		case *ast.ForStmt:
			fc.forStmt(inner, s.Label.Name)
		case *ast.RangeStmt:
			fc.rangeStmt(inner, s.Label.Name)
		case *ast.SwitchStmt:
			fc.switchStmt(inner, s.Label.Name)
		default:
			// A label that only goto could use.
			fc.stmt(s.Stmt)
		}
	case *ast.BlockStmt:
		fc.line("{")
		fc.ind++
		fc.block(s.List)
		fc.ind--
		fc.line("}")
	case *ast.BranchStmt:
		fc.branch(s)
	case *ast.ReturnStmt:
		fc.returnStmt(s)
	case *ast.EmptyStmt:
	case *ast.TypeSwitchStmt:
		fc.unsupported(s.Pos(), "a type switch", "use concrete types")
	case *ast.GoStmt:
		fc.unsupported(s.Pos(), "a go statement", "every GPU thread already runs the kernel; use more threads")
	case *ast.DeferStmt:
		fc.unsupported(s.Pos(), "defer", "call the function at the end explicitly")
	case *ast.SelectStmt:
		fc.unsupported(s.Pos(), "select", "communicate through shared memory and SyncThreads")
	case *ast.SendStmt:
		fc.unsupported(s.Pos(), "a channel send", "communicate through shared memory and SyncThreads")
	default:
		fc.unsupported(s.Pos(), fmt.Sprintf("the statement %T", s), "use the Go subset described in package gen")
	}
}

func (fc *fnCtx) declStmt(s *ast.DeclStmt) {
	gd, ok := s.Decl.(*ast.GenDecl)
	if !ok {
		return
	}
	switch gd.Tok {
	case token.CONST, token.TYPE:
		// Constants are folded; local types are emitted with the others.
		return
	case token.VAR:
		for _, spec := range gd.Specs {
			vs := spec.(*ast.ValueSpec)
			lhs := make([]ast.Expr, len(vs.Names))
			for i, n := range vs.Names {
				lhs[i] = n
			}
			switch {
			case len(vs.Values) == 0:
				for _, n := range vs.Names {
					obj := fc.info.Defs[n]
					if obj == nil || n.Name == "_" {
						continue
					}
					if !fc.u.checkValueType(n.Pos(), obj.Type()) {
						fc.reject(obj)
						continue
					}
					name := fc.bind(obj)
					z := fc.u.zero(obj.Type(), n.Pos()).s
					if strings.HasSuffix(z, "{}") {
						z = "{}"
					}
					fc.line("%s %s = %s;", fc.ctype(obj.Type()), name, z)
				}
			case len(vs.Values) == 1 && len(vs.Names) > 1:
				fc.multiAssign(lhs, vs.Values[0].(*ast.CallExpr), true, s)
			case len(vs.Values) == 1:
				fc.single(lhs[0], vs.Values[0], true)
			default:
				fc.parallel(lhs, vs.Values, true)
			}
		}
	}
}

func (fc *fnCtx) assign(s *ast.AssignStmt) {
	switch s.Tok {
	case token.DEFINE, token.ASSIGN:
		define := s.Tok == token.DEFINE
		switch {
		case len(s.Lhs) > 1 && len(s.Rhs) == 1:
			call, ok := ast.Unparen(s.Rhs[0]).(*ast.CallExpr)
			if !ok {
				fc.unsupported(s.Pos(), "this multi-value assignment", "assign one value at a time")
				return
			}
			fc.multiAssign(s.Lhs, call, define, s)
		case len(s.Lhs) == 1:
			fc.single(s.Lhs[0], s.Rhs[0], define)
		default:
			fc.parallel(s.Lhs, s.Rhs, define)
		}
	default:
		op, ok := opAssign[s.Tok]
		if !ok {
			fc.unsupported(s.Pos(), "the assignment "+s.Tok.String(), "use Go's assignment operators")
			return
		}
		fc.opAssign(s.Lhs[0], op, s.Rhs[0], s)
	}
}

var opAssign = map[token.Token]token.Token{
	token.ADD_ASSIGN: token.ADD, token.SUB_ASSIGN: token.SUB, token.MUL_ASSIGN: token.MUL,
	token.QUO_ASSIGN: token.QUO, token.REM_ASSIGN: token.REM, token.AND_ASSIGN: token.AND,
	token.OR_ASSIGN: token.OR, token.XOR_ASSIGN: token.XOR, token.SHL_ASSIGN: token.SHL,
	token.SHR_ASSIGN: token.SHR, token.AND_NOT_ASSIGN: token.AND_NOT,
}

// isSharedCall reports whether e calls kernel.Shared.
func (fc *fnCtx) isSharedCall(e ast.Expr) bool {
	c, ok := ast.Unparen(e).(*ast.CallExpr)
	if !ok {
		return false
	}
	f, ok := fc.calleeOf(c)
	return ok && f.Pkg() != nil && f.Pkg().Path() == kernelPath && f.Name() == "Shared"
}

// newVar reports whether e is an identifier that a := declares.
func (fc *fnCtx) newVar(e ast.Expr, define bool) types.Object {
	id, ok := e.(*ast.Ident)
	if !ok || !define || id.Name == "_" {
		return nil
	}
	return fc.info.Defs[id]
}

func isBlank(e ast.Expr) bool {
	id, ok := e.(*ast.Ident)
	return ok && id.Name == "_"
}

// maxStaticShared is CUDA's limit on a block's static shared memory (the
// __shared__ declarations), on every GPU: 48 KiB. More needs dynamic
// shared memory and an opt-in at launch.
const maxStaticShared = 48 << 10

// sharedDecl declares a kernel.Shared array.
func (fc *fnCtx) sharedDecl(obj types.Object, call ast.Expr) {
	if !fc.kernelTop {
		fc.unsupported(call.Pos(), "kernel.Shared outside the top level of a kernel body", "declare shared arrays first in the kernel, outside loops and branches, and pass them to functions")
		return
	}
	t := obj.Type().(*types.Pointer).Elem()
	name := fc.bind(obj)
	fc.shared[obj] = true
	fc.eff.shared = true
	size, align := fc.u.cudaSize(t)
	total := (int64(fc.f.sharedBytes)+align-1)/align*align + size
	if total > maxStaticShared {
		fc.unsupported(call.Pos(), fmt.Sprintf("%d bytes of kernel.Shared arrays", total),
			fmt.Sprintf("CUDA gives a block at most %d bytes (48 KiB) of static shared memory; use smaller arrays, or kernel.DynamicShared with a launch that asks for more", maxStaticShared))
		return
	}
	fc.f.sharedBytes = int(total)
	if fc.u.usesBulk() {
		fc.line("__shared__ __align__(16) %s %s;", fc.ctype(t), name)
		return
	}
	fc.line("__shared__ %s %s;", fc.ctype(t), name)
}

// usesBulk reports whether the package calls kernel.CpAsyncBulk, whose
// destinations must be 16-byte aligned as the simulator aligns every
// shared array; other packages keep their declarations as they were.
func (u *unit) usesBulk() bool {
	if u.bulk == 0 {
		u.bulk = 1
		for _, obj := range u.pkg.TypesInfo.Uses {
			if f, ok := obj.(*types.Func); ok && f.Pkg() != nil && f.Pkg().Path() == kernelPath && f.Name() == "CpAsyncBulk" {
				u.bulk = 2
				break
			}
		}
	}
	return u.bulk == 2
}

// single translates lhs = rhs (or lhs := rhs).
func (fc *fnCtx) single(lhs, rhs ast.Expr, define bool) {
	if obj := fc.newVar(lhs, define); obj != nil {
		if fc.isSharedCall(rhs) {
			fc.sharedDecl(obj, rhs)
			return
		}
		// The value first: its problem (a closure, an allocation) says
		// more than the type of the variable it would initialise.
		before := len(fc.u.diags)
		v := fc.valAs(rhs, obj.Type())
		if len(fc.u.diags) > before || !fc.u.checkValueType(lhs.Pos(), obj.Type()) {
			fc.reject(obj)
			return
		}
		name := fc.bind(obj)
		fc.line("%s %s = %s;", fc.ctype(obj.Type()), name, v.s)
		return
	}
	if isBlank(lhs) {
		fc.line("(void)%s;", fc.val(rhs).at(precUnary))
		return
	}
	if fc.isSharedCall(rhs) {
		fc.unsupported(rhs.Pos(), "assigning kernel.Shared to an existing variable", "declare it with :=")
		return
	}
	lt := fc.typeOf(lhs)
	v := fc.valAs(rhs, lt)
	fc.line("%s = %s;", fc.lvalue(lhs).s, v.s)
}

// store assigns the value v of type vt to lhs.
func (fc *fnCtx) store(lhs ast.Expr, define bool, v cx, vt types.Type) {
	if isBlank(lhs) {
		return
	}
	if obj := fc.newVar(lhs, define); obj != nil {
		v = fc.sgn(v, vt)
		if !types.Identical(vt, obj.Type()) && fc.ctype(vt) != fc.ctype(obj.Type()) {
			v = fc.convert(v, vt, obj.Type())
		}
		name := fc.bind(obj)
		fc.line("%s %s = %s;", fc.ctype(obj.Type()), name, v.s)
		return
	}
	fc.line("%s = %s;", fc.lvalue(lhs).s, fc.sgn(v, vt).s)
}

// multiAssign translates a, b := f().
func (fc *fnCtx) multiAssign(lhs []ast.Expr, call *ast.CallExpr, define bool, node ast.Node) {
	vals, setup, ok := fc.multi(call)
	if !ok {
		fc.unsupported(node.Pos(), "this multi-value assignment", "assign one value at a time")
		return
	}
	tt, _ := fc.typeOf(call).(*types.Tuple)
	refs := fc.lhsRefs(lhs, define)
	for _, s := range setup {
		fc.line("%s", s)
	}
	for i, l := range lhs {
		if i >= len(vals) || tt == nil {
			break
		}
		if refs[i] != "" {
			fc.line("%s = %s;", refs[i], fc.sgn(vals[i], tt.At(i).Type()).s)
			continue
		}
		fc.store(l, define, vals[i], tt.At(i).Type())
	}
}

// lhsRefs binds C++ references to the left-hand sides that are not plain
// variables, so that their index operands are evaluated first, as Go does.
func (fc *fnCtx) lhsRefs(lhs []ast.Expr, define bool) []string {
	refs := make([]string, len(lhs))
	for i, l := range lhs {
		if _, ok := ast.Unparen(l).(*ast.Ident); ok {
			continue
		}
		r := fc.names.takeInternal("gocu_l")
		fc.line("%s& %s = %s;", fc.ctype(fc.typeOf(l)), r, fc.lvalue(l).s)
		refs[i] = r
	}
	return refs
}

// parallel translates a, b = x, y: every right-hand side is evaluated
// before any assignment.
func (fc *fnCtx) parallel(lhs, rhs []ast.Expr, define bool) {
	allNew := true
	for _, l := range lhs {
		if fc.newVar(l, define) == nil && !isBlank(l) {
			allNew = false
		}
	}
	if allNew {
		for i := range lhs {
			if isBlank(lhs[i]) {
				fc.line("(void)%s;", fc.val(rhs[i]).at(precUnary))
				continue
			}
			fc.single(lhs[i], rhs[i], define)
		}
		return
	}
	refs := fc.lhsRefs(lhs, define)
	tmps := make([]string, len(rhs))
	types_ := make([]types.Type, len(rhs))
	for i, r := range rhs {
		t := fc.typeOf(lhs[i])
		if isBlank(lhs[i]) || t == nil {
			t = fc.typeOf(r)
		}
		if obj := fc.newVar(lhs[i], define); obj != nil {
			t = obj.Type()
		}
		types_[i] = t
		tmps[i] = fc.names.takeInternal("gocu_t")
		fc.line("%s %s = %s;", fc.ctype(t), tmps[i], fc.valAs(r, t).s)
	}
	for i, l := range lhs {
		switch {
		case isBlank(l):
		case refs[i] != "":
			fc.line("%s = %s;", refs[i], tmps[i])
		default:
			fc.store(l, define, prim(tmps[i]), types_[i])
		}
	}
}

// lvalue translates an assignable expression.
func (fc *fnCtx) lvalue(e ast.Expr) cx {
	if fc.noWriteTable(e, "writing") {
		return prim("0")
	}
	switch x := ast.Unparen(e).(type) {
	case *ast.Ident:
		obj := fc.info.Uses[x]
		if obj == nil {
			obj = fc.info.Defs[x]
		}
		if fc.shared[obj] {
			fc.unsupported(x.Pos(), "assigning to a kernel.Shared variable", "declare another shared array")
			return prim("0")
		}
		return fc.ident(x)
	case *ast.IndexExpr:
		return fc.index(x, fc.u.site(x, fc.f), true)
	case *ast.SelectorExpr:
		sel := fc.info.Selections[x]
		if sel == nil || sel.Kind() != types.FieldVal {
			return fc.selector(x)
		}
		if fc.threadIdent(x.X) {
			fc.unsupported(x.Pos(), "assigning to the thread's position", "copy it into a variable")
			return prim("0")
		}
		if inner, ok := ast.Unparen(x.X).(*ast.SelectorExpr); ok && fc.threadIdent(inner.X) {
			fc.unsupported(x.Pos(), "assigning to the thread's position", "copy it into a variable")
			return prim("0")
		}
		base := fc.structBase(x.X, true)
		return cx{s: base.at(precPostfix) + fc.fieldPath(fc.typeOf(x.X), sel.Index(), x.Pos()), prec: precPostfix}
	case *ast.StarExpr:
		fc.eff.writes = true
		return fc.deref(x)
	}
	fc.unsupported(e.Pos(), "assigning to "+fc.u.nodeText(e), "assign to variables, slice and array elements and struct fields")
	return prim("0")
}

// opAssign translates lhs op= rhs (rhs nil means 1, for ++ and --).
func (fc *fnCtx) opAssign(lhs ast.Expr, op token.Token, rhs ast.Expr, node ast.Node) {
	t := fc.typeOf(lhs)
	if fc.lowpOperator(op, t, node) {
		return
	}
	var r cx
	rt := t
	if rhs == nil {
		r = fc.u.constLit(constOne, t, lhs.Pos())
	} else if op == token.SHL || op == token.SHR {
		r = fc.expr(rhs)
		rt = fc.typeOf(rhs)
	} else {
		r = fc.expr(rhs)
		if from := fc.typeOf(rhs); from != nil && fc.ctype(from) != fc.ctype(t) {
			r = fc.convert(fc.sgn(r, from), from, t)
		}
	}
	cls := classOf(t)
	simple := false
	switch op {
	case token.ADD, token.SUB:
		simple = isFloat(t) || cls == wideUns || cls == narrowS || cls == narrowU
	case token.MUL:
		simple = isFloat(t) || cls == wideUns
	case token.QUO:
		simple = isFloat(t)
	case token.AND, token.OR, token.XOR:
		simple = cls != notInt
	}
	if simple {
		fc.line("%s %s= %s;", fc.lvalue(lhs).s, op, fc.sgn(r, rt).at(precAssign))
		return
	}
	if fc.pure(lhs) {
		l := fc.lvalue(lhs)
		cur := fc.expr(lhs)
		v := fc.binop(op, cur, r, t, rt, t, node)
		fc.line("%s = %s;", l.s, fc.sgn(v, t).s)
		return
	}
	ref := fc.names.takeInternal("gocu_ref")
	fc.line("{")
	fc.ind++
	fc.line("%s& %s = %s;", fc.ctype(t), ref, fc.lvalue(lhs).s)
	v := fc.binop(op, prim(ref), r, t, rt, t, node)
	fc.line("%s = %s;", ref, fc.sgn(v, t).s)
	fc.ind--
	fc.line("}")
}

// cond translates a boolean condition for if, for and switch.
func (fc *fnCtx) cond(e ast.Expr) string {
	return fc.val(e).s
}

func (fc *fnCtx) ifStmt(s *ast.IfStmt, chained bool) {
	init := ""
	if s.Init != nil {
		fc.push()
		defer fc.pop()
		// C++17's if (init; cond) scopes the variable as Go does, when the
		// initialisation is one statement.
		rendered := fc.render(s.Init)
		if e, ok := asExpr(rendered); ok {
			init = e + "; "
		} else {
			s = &ast.IfStmt{If: s.If, Init: &renderedStmt{text: rendered}, Cond: s.Cond, Body: s.Body, Else: s.Else}
		}
	}
	if s.Init != nil && init == "" {
		if chained {
			fc.b.WriteString("{\n")
		} else {
			fc.line("{")
		}
		fc.ind++
		fc.emit(s.Init.(*renderedStmt).text)
		chained = false
	}
	head := fmt.Sprintf("if (%s%s) {", init, fc.cond(s.Cond))
	if chained {
		fc.b.WriteString(head + "\n")
	} else {
		fc.line("%s", head)
	}
	fc.ind++
	fc.block(s.Body.List)
	fc.ind--
	switch e := s.Else.(type) {
	case nil:
		fc.line("}")
	case *ast.IfStmt:
		fc.b.WriteString(strings.Repeat("  ", fc.ind) + "} else ")
		fc.ifStmt(e, true)
	case *ast.BlockStmt:
		fc.line("} else {")
		fc.ind++
		fc.block(e.List)
		fc.ind--
		fc.line("}")
	}
	if s.Init != nil && init == "" {
		fc.ind--
		fc.line("}")
	}
}

// renderedStmt carries an already translated statement.
type renderedStmt struct {
	ast.EmptyStmt
	text string
}

// unroll returns the #pragma for a //gocu:unroll directive on the line
// before s.
func (fc *fnCtx) unroll(s ast.Stmt) string {
	dirs := fc.u.prog.directives(fc.f.src.file)
	line := fc.u.prog.fset.Position(s.Pos()).Line
	d, ok := dirs[line-1]
	if !ok {
		return ""
	}
	fc.u.used[d.pos] = true
	if d.name != "unroll" {
		fc.u.errorf(d.pos, "unknown directive //gocu:%s before a loop (known: unroll)", d.name)
		return ""
	}
	switch len(d.args) {
	case 0:
		return "#pragma unroll"
	case 1:
		n, ok := parseDirectiveInt(d.args[0])
		if !ok {
			fc.u.errorf(d.pos, "//gocu:unroll: %q is not a positive count", d.args[0])
			return ""
		}
		return fmt.Sprintf("#pragma unroll %d", n)
	}
	fc.u.errorf(d.pos, "//gocu:unroll takes at most one count, such as //gocu:unroll 4")
	return ""
}

func (fc *fnCtx) pragma(p string) {
	if p != "" {
		fc.b.WriteString(p + "\n")
	}
}

// render translates s into a string instead of the function body.
func (fc *fnCtx) render(s ast.Stmt) string {
	saved := fc.b
	fc.b = &strings.Builder{}
	ind := fc.ind
	fc.ind = 0
	fc.stmt(s)
	out := fc.b.String()
	fc.b = saved
	fc.ind = ind
	return out
}

// asExpr returns a rendered statement as a C expression, if it is one.
func asExpr(rendered string) (string, bool) {
	s := strings.TrimSuffix(rendered, "\n")
	if strings.Contains(s, "\n") || !strings.HasSuffix(s, ";") || strings.HasPrefix(s, "{") {
		return "", false
	}
	return strings.TrimSuffix(s, ";"), true
}

func (fc *fnCtx) pushTarget(s ast.Stmt, label string, loop bool) *target {
	t := &target{stmt: s, label: label, loop: loop}
	fc.targets = append(fc.targets, t)
	return t
}

func (fc *fnCtx) popTarget(t *target) {
	fc.targets = fc.targets[:len(fc.targets)-1]
	if t.brkUsed {
		fc.line("%s:;", t.brk)
	}
}

func (fc *fnCtx) forStmt(s *ast.ForStmt, label string) {
	fc.push()
	defer fc.pop()
	pragma := fc.unroll(s)
	wrap := false
	init := ""
	if s.Init != nil {
		rendered := fc.render(s.Init)
		if e, ok := asExpr(rendered); ok && !strings.HasPrefix(e, "__shared__") {
			init = e
		} else {
			wrap = true
			fc.line("{")
			fc.ind++
			fc.emit(rendered)
		}
	}
	cond := ""
	if s.Cond != nil {
		cond = fc.cond(s.Cond)
	}
	t := fc.pushTarget(s, label, true)
	post := ""
	postText := ""
	if s.Post != nil {
		post, postText = fc.postExpr(s)
		if post == "" {
			t.postInBody = true
		}
	}
	fc.pragma(pragma)
	switch {
	case init == "" && post == "" && !t.postInBody && cond != "":
		fc.line("while (%s) {", cond)
	case init == "" && post == "" && !t.postInBody:
		fc.line("for (;;) {")
	default:
		fc.line("for (%s; %s; %s) {", init, cond, post)
	}
	fc.ind++
	fc.loopBody(t, s.Body.List, func() {
		if t.postInBody {
			fc.emit(postText)
		}
	})
	fc.ind--
	fc.line("}")
	fc.popTarget(t)
	if wrap {
		fc.ind--
		fc.line("}")
	}
}

// emit writes rendered statements at the current indentation.
func (fc *fnCtx) emit(rendered string) {
	for _, l := range strings.Split(strings.TrimSuffix(rendered, "\n"), "\n") {
		if strings.HasPrefix(l, "#") {
			fc.b.WriteString(l + "\n")
			continue
		}
		fc.line("%s", l)
	}
}

// loopBody writes a loop body; tail runs after the continue label. The
// body gets its own block only when a continue label follows it, so that
// a goto to the label jumps over no initialisation.
func (fc *fnCtx) loopBody(t *target, body []ast.Stmt, tail func()) {
	saved := fc.b
	fc.b = &strings.Builder{}
	fc.ind++
	fc.block(body)
	fc.ind--
	text := fc.b.String()
	fc.b = saved
	if t.contUsed {
		fc.line("{")
		fc.b.WriteString(text)
		fc.line("}")
		fc.line("%s:;", t.cont)
	} else {
		fc.b.WriteString(strings.ReplaceAll(dedent(text), "\x00", ""))
	}
	tail()
}

// dedent removes one level of indentation from every line.
func dedent(s string) string {
	lines := strings.SplitAfter(s, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimPrefix(l, "  ")
	}
	return strings.Join(lines, "")
}

// postExpr returns the post statement of a for loop as a C expression, or
// "" and its rendering when it needs statements. i++ stays i++ when the
// condition i < n guarantees it cannot overflow.
func (fc *fnCtx) postExpr(s *ast.ForStmt) (string, string) {
	if inc, ok := s.Post.(*ast.IncDecStmt); ok {
		if id, ok := inc.X.(*ast.Ident); ok && fc.safeIncrement(s, id, inc.Tok) {
			return fc.ident(id).s + inc.Tok.String(), ""
		}
	}
	rendered := fc.render(s.Post)
	if e, ok := asExpr(rendered); ok {
		return e, ""
	}
	return "", rendered
}

// safeIncrement reports whether v++ (v--) in loop s cannot overflow: the
// condition is v < x (v > x) and the body never assigns v.
func (fc *fnCtx) safeIncrement(s *ast.ForStmt, v *ast.Ident, tok token.Token) bool {
	obj := fc.info.Uses[v]
	if obj == nil || classOf(obj.Type()) != wideSigned {
		return true
	}
	b, ok := ast.Unparen(s.Cond).(*ast.BinaryExpr)
	if !ok {
		return false
	}
	isV := func(e ast.Expr) bool {
		id, ok := ast.Unparen(e).(*ast.Ident)
		return ok && fc.info.Uses[id] == obj
	}
	var good bool
	if tok == token.INC {
		good = (b.Op == token.LSS && isV(b.X)) || (b.Op == token.GTR && isV(b.Y))
	} else {
		good = (b.Op == token.GTR && isV(b.X)) || (b.Op == token.LSS && isV(b.Y))
	}
	return good && !fc.assignedIn(s.Body, obj)
}

// assignedIn reports whether body assigns obj (or an element of it).
func (fc *fnCtx) assignedIn(body ast.Node, obj types.Object) bool {
	found := false
	root := func(e ast.Expr) types.Object {
		for {
			switch x := ast.Unparen(e).(type) {
			case *ast.Ident:
				if o := fc.info.Uses[x]; o != nil {
					return o
				}
				return fc.info.Defs[x]
			case *ast.IndexExpr:
				if _, ok := fc.typeOf(x.X).Underlying().(*types.Slice); ok {
					return nil
				}
				e = x.X
			case *ast.SelectorExpr:
				e = x.X
			default:
				return nil
			}
		}
	}
	ast.Inspect(body, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.AssignStmt:
			for _, l := range n.Lhs {
				if root(l) == obj {
					found = true
				}
			}
		case *ast.IncDecStmt:
			if root(n.X) == obj {
				found = true
			}
		case *ast.RangeStmt:
			if n.Tok == token.ASSIGN {
				if n.Key != nil && root(n.Key) == obj || n.Value != nil && root(n.Value) == obj {
					found = true
				}
			}
		}
		return !found
	})
	return found
}

// rangeStmt translates for range over an integer, a slice or an array.
func (fc *fnCtx) rangeStmt(s *ast.RangeStmt, label string) {
	fc.push()
	defer fc.pop()
	pragma := fc.unroll(s)
	xt := fc.typeOf(s.X)
	// The loop goes into its own buffer: it needs an enclosing block only
	// when temporaries come before it.
	outer := fc.b
	fc.b = &strings.Builder{}
	fc.ind++
	prelude := -1
	defer func() {
		fc.ind--
		text := fc.b.String()
		fc.b = outer
		if prelude == 0 {
			fc.b.WriteString(dedent(text))
			return
		}
		fc.line("{")
		fc.b.WriteString(text)
		fc.line("}")
	}()
	var n string  // the trip count
	var ct string // C type of the counter
	var elem func(i string) string
	var elemType types.Type
	switch u := xt.Underlying().(type) {
	case *types.Basic:
		if u.Info()&types.IsInteger == 0 {
			fc.unsupported(s.Pos(), "ranging over "+xt.String(), "range over an integer, a slice or an array")
			return
		}
		t := xt
		if s.Key != nil && !isBlank(s.Key) {
			if obj := fc.info.Defs[s.Key.(*ast.Ident)]; obj != nil {
				t = obj.Type()
			} else {
				t = fc.typeOf(s.Key)
			}
		}
		if u.Info()&types.IsUntyped != 0 && (s.Key == nil || isBlank(s.Key)) {
			t = types.Typ[types.Int]
		}
		ct = fc.ctype(t)
		n = fc.stable(s.X, t, s.Body)
	case *types.Slice:
		ct = "long long"
		x := fc.stable(s.X, xt, s.Body)
		n = x + ".n"
		fc.eff.reads = true
		elem = func(i string) string { return x + ".p[" + i + "]" }
		elemType = u.Elem()
	case *types.Array:
		ct = "long long"
		n = fmt.Sprint(u.Len())
		elemType = u.Elem()
		if s.Value != nil && !isBlank(s.Value) {
			// Go ranges over a copy of an array value.
			var x string
			if fc.addressable(s.X) && !fc.writesRoot(s.Body, s.X) {
				x = fc.expr(s.X).at(precPostfix)
			} else {
				x = fc.names.takeInternal("gocu_a")
				fc.line("%s %s = %s;", fc.ctype(xt), x, fc.val(s.X).s)
			}
			if fc.isSharedExpr(s.X) || fc.viaPointer(s.X) {
				fc.eff.reads = true
			}
			elem = func(i string) string { return x + ".v[" + i + "]" }
		}
	case *types.Pointer:
		at, ok := u.Elem().Underlying().(*types.Array)
		if !ok {
			fc.unsupported(s.Pos(), "ranging over "+xt.String(), "range over an integer, a slice or an array")
			return
		}
		ct = "long long"
		n = fmt.Sprint(at.Len())
		elemType = at.Elem()
		if s.Value != nil && !isBlank(s.Value) {
			arr, _, _ := fc.arrayObj(s.X)
			x := arr.at(precPostfix)
			fc.eff.reads = true
			elem = func(i string) string { return x + ".v[" + i + "]" }
		}
	case *types.Map:
		fc.unsupported(s.Pos(), "a map", "use a slice or a fixed-size array indexed by an integer key")
		return
	case *types.Chan:
		fc.unsupported(s.Pos(), "ranging over a channel", "communicate through shared memory and SyncThreads")
		return
	case *types.Signature:
		fc.unsupported(s.Pos(), "ranging over a function (iterator)", "use a counting loop")
		return
	default:
		fc.unsupported(s.Pos(), "ranging over "+xt.String(), "range over an integer, a slice or an array")
		return
	}
	define := s.Tok == token.DEFINE
	// The counter: the key itself when it is declared here, else hidden.
	counter := ""
	keyAssign := ""
	if s.Key != nil && !isBlank(s.Key) {
		if obj := fc.newVar(s.Key, define); obj != nil {
			counter = fc.bind(obj)
		} else {
			keyAssign = fc.lvalue(s.Key).s
		}
	}
	if counter == "" {
		counter = fc.names.takeInternal("gocu_i")
	}
	t := fc.pushTarget(s, label, true)
	prelude = fc.b.Len()
	fc.pragma(pragma)
	zero := "0"
	fc.line("for (%s %s = %s; %s < %s; %s++) {", ct, counter, zero, counter, n, counter)
	fc.ind++
	if keyAssign != "" {
		fc.line("%s = %s;", keyAssign, counter)
	}
	if s.Value != nil && !isBlank(s.Value) && elem != nil {
		if obj := fc.newVar(s.Value, define); obj != nil {
			name := fc.bind(obj)
			fc.line("%s %s = %s;", fc.ctype(obj.Type()), name, elem(counter))
		} else {
			fc.line("%s = %s;", fc.lvalue(s.Value).s, elem(counter))
		}
	}
	_ = elemType
	fc.loopBody(t, s.Body.List, func() {})
	fc.ind--
	fc.line("}")
	fc.popTarget(t)
}

// stable returns a C expression for e that stays the same while body runs:
// e itself when it is a constant or a variable body does not assign, else a
// temporary holding its value.
func (fc *fnCtx) stable(e ast.Expr, t types.Type, body ast.Node) string {
	if tv := fc.info.Types[e]; tv.Value != nil {
		return fc.u.constLit(tv.Value, t, e.Pos()).s
	}
	if id, ok := ast.Unparen(e).(*ast.Ident); ok {
		if obj := fc.info.Uses[id]; obj != nil && !fc.assignedIn(body, obj) {
			v := fc.expr(e)
			return fc.sgn(v, t).at(precPostfix)
		}
	}
	tmp := fc.names.takeInternal("gocu_n")
	fc.line("%s %s = %s;", fc.ctype(t), tmp, fc.valAs(e, t).s)
	return tmp
}

// writesRoot reports whether body writes the variable at the root of e.
func (fc *fnCtx) writesRoot(body ast.Node, e ast.Expr) bool {
	for {
		switch x := ast.Unparen(e).(type) {
		case *ast.Ident:
			obj := fc.info.Uses[x]
			return obj == nil || fc.assignedIn(body, obj)
		case *ast.SelectorExpr:
			e = x.X
		case *ast.IndexExpr:
			e = x.X
		default:
			return true
		}
	}
}

func (fc *fnCtx) switchStmt(s *ast.SwitchStmt, label string) {
	fc.push()
	defer fc.pop()
	fc.line("{")
	fc.ind++
	if s.Init != nil {
		fc.stmt(s.Init)
	}
	var tag cx
	var tagType types.Type
	if s.Tag != nil {
		tagType = fc.typeOf(s.Tag)
		if !isComparableScalar(tagType) {
			fc.unsupported(s.Tag.Pos(), "switching on "+tagType.String(), "switch on numbers or bools")
		}
		if tv := fc.info.Types[s.Tag]; tv.Value != nil {
			tag = fc.expr(s.Tag)
		} else if id, ok := ast.Unparen(s.Tag).(*ast.Ident); ok && fc.info.Uses[id] != nil {
			tag = fc.val(id)
		} else {
			name := fc.names.takeInternal("gocu_tag")
			fc.line("%s %s = %s;", fc.ctype(tagType), name, fc.val(s.Tag).s)
			tag = prim(name)
		}
	}
	t := fc.pushTarget(s, label, false)
	var deflt *ast.CaseClause
	first := true
	for _, st := range s.Body.List {
		cc := st.(*ast.CaseClause)
		if cc.List == nil {
			deflt = cc
			continue
		}
		var conds []string
		for _, e := range cc.List {
			if s.Tag != nil {
				c := fc.binop(token.EQL, tag, fc.valAs(e, tagType), tagType, tagType, types.Typ[types.Bool], e)
				conds = append(conds, c.at(precLOr+1))
			} else {
				conds = append(conds, fc.val(e).at(precLOr+1))
			}
		}
		if first {
			fc.line("if (%s) {", strings.Join(conds, " || "))
		} else {
			fc.line("} else if (%s) {", strings.Join(conds, " || "))
		}
		first = false
		fc.ind++
		fc.caseBody(cc)
		fc.ind--
	}
	if deflt != nil {
		if first {
			fc.line("{")
		} else {
			fc.line("} else {")
		}
		fc.ind++
		fc.caseBody(deflt)
		fc.ind--
		first = false
	}
	if !first {
		fc.line("}")
	}
	fc.ind--
	fc.line("}")
	fc.popTarget(t)
}

func (fc *fnCtx) caseBody(cc *ast.CaseClause) {
	for _, st := range cc.Body {
		if br, ok := st.(*ast.BranchStmt); ok && br.Tok == token.FALLTHROUGH {
			fc.unsupported(br.Pos(), "fallthrough", "list the values in one case (case a, b:) or repeat the code")
		}
	}
	fc.block(cc.Body)
}

func (fc *fnCtx) branch(s *ast.BranchStmt) {
	switch s.Tok {
	case token.GOTO:
		fc.unsupported(s.Pos(), "goto", "use labelled break and continue")
		return
	case token.FALLTHROUGH:
		return // reported by caseBody
	}
	var t *target
	for i := len(fc.targets) - 1; i >= 0; i-- {
		c := fc.targets[i]
		if s.Label != nil {
			if c.label == s.Label.Name {
				t = c
				break
			}
			continue
		}
		if s.Tok == token.CONTINUE && !c.loop {
			continue
		}
		t = c
		break
	}
	if t == nil {
		fc.u.errorf(s.Pos(), "gocu gen: internal error: no target for %s", s.Tok)
		return
	}
	innermostLoop := func() bool {
		for i := len(fc.targets) - 1; i >= 0; i-- {
			if fc.targets[i].loop {
				return fc.targets[i] == t
			}
		}
		return false
	}
	if s.Tok == token.BREAK {
		if t.loop && innermostLoop() {
			fc.line("break;")
			return
		}
		if t.brk == "" {
			t.brk = fc.labels.takeInternal("gocu_break")
		}
		t.brkUsed = true
		fc.line("goto %s;", t.brk)
		return
	}
	if innermostLoop() && !t.postInBody {
		fc.line("continue;")
		return
	}
	if t.cont == "" {
		t.cont = fc.labels.takeInternal("gocu_continue")
	}
	t.contUsed = true
	fc.line("goto %s;", t.cont)
}

func (fc *fnCtx) returnStmt(s *ast.ReturnStmt) {
	if fc.f.kernel || fc.resultTypes.Len() == 0 {
		fc.line("return;")
		return
	}
	rt := fc.resultTypes
	if len(s.Results) == 0 {
		if len(fc.results) == 1 {
			fc.line("return %s;", fc.results[0])
		} else {
			fc.line("return %s{%s};", fc.u.tupleFor(rt, s.Pos()).name, strings.Join(fc.results, ", "))
		}
		return
	}
	if len(s.Results) == 1 && rt.Len() == 1 {
		fc.line("return %s;", fc.valAs(s.Results[0], rt.At(0).Type()).s)
		return
	}
	if len(s.Results) == 1 {
		call, ok := ast.Unparen(s.Results[0]).(*ast.CallExpr)
		if !ok {
			fc.unsupported(s.Pos(), "this return", "return the values one by one")
			return
		}
		vals, setup, ok := fc.multi(call)
		if !ok {
			fc.unsupported(s.Pos(), "this return", "return the values one by one")
			return
		}
		for _, st := range setup {
			fc.line("%s", st)
		}
		tt := fc.typeOf(call).(*types.Tuple)
		var parts []string
		for i, v := range vals {
			parts = append(parts, fc.sgn(v, tt.At(i).Type()).s)
		}
		fc.line("return %s{%s};", fc.u.tupleFor(rt, s.Pos()).name, strings.Join(parts, ", "))
		return
	}
	var parts []string
	for i, r := range s.Results {
		parts = append(parts, fc.valAs(r, rt.At(i).Type()).at(precAssign))
	}
	fc.line("return %s{%s};", fc.u.tupleFor(rt, s.Pos()).name, strings.Join(parts, ", "))
}
