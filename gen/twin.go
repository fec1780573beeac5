package gen

import (
	"fmt"
	"go/ast"
	"go/constant"
	"go/token"
	"go/types"
	"sort"
	"strconv"
	"strings"

	"github.com/gocu-dev/gocu/meta"
)

// The checked twin of a function is a Go copy in which every element
// access of a slice or array goes through kernel.At, which checks the index
// and reports the access to the simulator (for race detection), and every
// outer index of a multi-dimensional array goes through kernel.Index.
// Everything else is printed as written, so the twin computes exactly what
// the original does.

// imports manages the imports of the generated Go file.
type imports struct {
	u      *unit
	byPath map[string]string
	used   map[string]bool // aliases taken
	avoid  map[string]bool // identifiers the generated code uses
}

func (im *imports) alias(path, name string) string {
	if a, ok := im.byPath[path]; ok {
		return a
	}
	a := name
	for i := 0; im.used[a] || im.avoid[a] || im.u.pkg.Types.Scope().Lookup(a) != nil; i++ {
		a = fmt.Sprintf("gocu%s%d", name, i)
		if i == 0 {
			a = "gocu" + name
		}
	}
	im.used[a] = true
	im.byPath[path] = a
	return a
}

func (u *unit) imports() *imports {
	if u.imp == nil {
		u.imp = &imports{u: u, byPath: map[string]string{}, used: map[string]bool{}, avoid: map[string]bool{}}
		// Locals of the copied functions could shadow an import.
		for _, f := range u.fns {
			info := u.info(f)
			ast.Inspect(f.src.decl, func(n ast.Node) bool {
				if id, ok := n.(*ast.Ident); ok {
					if obj := info.Defs[id]; obj != nil {
						if _, isPkg := obj.(*types.PkgName); !isPkg {
							u.imp.avoid[id.Name] = true
						}
					}
				}
				return true
			})
		}
		u.imp.avoid["gocuT"] = true
	}
	return u.imp
}

func (u *unit) qualifier(p *types.Package) string {
	if p == u.pkg.Types {
		return ""
	}
	return u.imports().alias(p.Path(), p.Name())
}

// goType prints t as the generated file must spell it.
func (u *unit) goType(t types.Type, pos token.Pos) string {
	u.checkTwinType(t, pos)
	return types.TypeString(t, u.qualifier)
}

// checkTwinType rejects types the twin, living in the kernels' package,
// cannot name: unexported types of other packages.
func (u *unit) checkTwinType(t types.Type, pos token.Pos) {
	var walk func(t types.Type, depth int)
	walk = func(t types.Type, depth int) {
		if depth > 20 {
			return
		}
		switch t := types.Unalias(t).(type) {
		case *types.Named:
			o := t.Obj()
			if o.Pkg() != nil && o.Pkg() != u.pkg.Types && !o.Exported() {
				u.unsupported(pos, "the unexported type "+o.Pkg().Name()+"."+o.Name()+" in a function called from another package's kernel",
					"export the type, or move the function into the kernel's package")
			}
		case *types.Slice:
			walk(t.Elem(), depth+1)
		case *types.Array:
			walk(t.Elem(), depth+1)
		case *types.Pointer:
			walk(t.Elem(), depth+1)
		}
	}
	walk(t, 0)
}

// twinCtx prints the checked twin of one function.
type twinCtx struct {
	u      *unit
	f      *fn
	info   *types.Info
	b      strings.Builder
	thread string // name of the thread variable in the twin
	tvar   types.Object
	k      string // alias of package kernel
	tmp    int
}

func (u *unit) twinNameOf(f *fn) string {
	if f.twinName != "" {
		return f.twinName
	}
	name := "gocuChecked_" + f.obj.Name()
	if !f.kernel {
		name = "gocuChecked_" + u.twinDeviceName(f)
	}
	if u.pkg.Types.Scope().Lookup(name) != nil {
		u.errorf(f.src.decl.Pos(), "gocu gen: the name %s is taken in package %s; gocu gen needs it for the checked copy of %s", name, u.pkg.Name, f.obj.Name())
	}
	f.twinName = name
	return name
}

// twin prints the checked twin of f.
func (u *unit) twin(f *fn) {
	tc := &twinCtx{u: u, f: f, info: f.src.pkg.TypesInfo, k: u.imports().alias(kernelPath, "kernel")}
	fd := f.src.decl
	sig := f.obj.Signature()
	// The thread variable: the function's own, unless it is blank or a
	// local shadows it somewhere.
	tc.thread = "gocuT"
	if f.thread != nil {
		tc.tvar = f.thread
		if n := f.thread.Name(); n != "_" && n != "" && !tc.shadowed(n) {
			tc.thread = n
		}
	}
	var params []string
	params = append(params, tc.thread+" *"+tc.k+".Thread")
	if recv := sig.Recv(); recv != nil {
		params = append(params, tc.paramName(recv)+" "+u.goType(recv.Type(), recv.Pos()))
	}
	for i := 0; i < sig.Params().Len(); i++ {
		p := sig.Params().At(i)
		if i == 0 && f.thread != nil {
			continue
		}
		params = append(params, tc.paramName(p)+" "+u.goType(p.Type(), p.Pos()))
	}
	results := ""
	if res := sig.Results(); res.Len() > 0 {
		var rs []string
		named := res.At(0).Name() != ""
		for i := 0; i < res.Len(); i++ {
			r := res.At(i)
			if named {
				rs = append(rs, tc.paramName(r)+" "+u.goType(r.Type(), r.Pos()))
			} else {
				rs = append(rs, u.goType(r.Type(), r.Pos()))
			}
		}
		results = " (" + strings.Join(rs, ", ") + ")"
	}
	tparams := ""
	if tps := sig.TypeParams(); tps != nil && tps.Len() > 0 {
		var list []string
		for i := 0; i < tps.Len(); i++ {
			tp := tps.At(i)
			list = append(list, tp.Obj().Name()+" "+u.goType(tp.Constraint(), tp.Obj().Pos()))
		}
		tparams = "[" + strings.Join(list, ", ") + "]"
	}
	fmt.Fprintf(&tc.b, "// %s is the checked copy of %s (%s).\n", u.twinNameOf(f), funcDisplayName(f.obj), u.srcPos(f, fd.Pos()))
	fmt.Fprintf(&tc.b, "func %s%s(%s)%s {\n", u.twinNameOf(f), tparams, strings.Join(params, ", "), results)
	tc.stmts(fd.Body.List)
	tc.b.WriteString("}\n")
	f.twin = tc.b.String()
}

func (tc *twinCtx) paramName(v *types.Var) string {
	if v.Name() == "" {
		return "_"
	}
	return v.Name()
}

// shadowed reports whether the function body declares a local named n.
func (tc *twinCtx) shadowed(n string) bool {
	found := false
	ast.Inspect(tc.f.src.decl.Body, func(x ast.Node) bool {
		if id, ok := x.(*ast.Ident); ok && id.Name == n && tc.info.Defs[id] != nil {
			found = true
		}
		return !found
	})
	return found
}

func (tc *twinCtx) w(format string, args ...any) {
	fmt.Fprintf(&tc.b, format, args...)
}

func (tc *twinCtx) stmts(list []ast.Stmt) {
	for _, s := range list {
		tc.w("%s", tc.line(s))
		tc.stmt(s)
		tc.b.WriteByte('\n')
	}
}

// line returns a line directive that gives the code printed after it the
// source line of n, as the site table names it ("/*line broken.go:72*/ "),
// so that the positions the simulator takes from the call stack in checked
// mode (the barrier a thread waits at or last passed, a warp operation, a
// shared declaration, a panic, the call of a device function) name the
// kernel's source, as the sites of its memory accesses do, and not the
// generated file. Every line of a twin that runs code starts with one;
// the twins come last in the generated file, so that nothing after them
// inherits a kernel's lines.
func (tc *twinCtx) line(n ast.Node) string {
	return "/*line " + tc.u.srcPos(tc.f, n.Pos()) + "*/ "
}

func (tc *twinCtx) block(list []ast.Stmt) {
	tc.w("{\n")
	tc.stmts(list)
	tc.w("}")
}

func (tc *twinCtx) stmt(s ast.Stmt) {
	switch s := s.(type) {
	case *ast.DeclStmt:
		tc.decl(s.Decl.(*ast.GenDecl))
	case *ast.AssignStmt:
		if len(s.Lhs) == 1 && len(s.Rhs) == 1 && s.Tok != token.DEFINE && hasIndex(s.Lhs[0]) && (hasIndex(s.Rhs[0]) || hasCall(s.Rhs[0])) {
			// Evaluate the right-hand side first, as compiled Go and CUDA
			// C++17 do, so that the first failing access is the same.
			v := tc.temp("gocuV")
			acc := "Write"
			if s.Tok != token.ASSIGN {
				acc = "ReadWrite"
			}
			rt := tc.info.TypeOf(s.Lhs[0])
			if s.Tok == token.SHL_ASSIGN || s.Tok == token.SHR_ASSIGN {
				rt = tc.info.TypeOf(s.Rhs[0])
			}
			tc.w("{\n%svar %s %s = %s\n%s%s %s %s\n}", tc.line(s), v, tc.u.goType(rt, s.Pos()), tc.expr(s.Rhs[0]), tc.line(s), tc.lhs(s.Lhs[0], acc), s.Tok, v)
			return
		}
		acc := "Write"
		if s.Tok != token.ASSIGN && s.Tok != token.DEFINE {
			acc = "ReadWrite"
		}
		var ls, rs []string
		for _, l := range s.Lhs {
			ls = append(ls, tc.lhs(l, acc))
		}
		for _, r := range s.Rhs {
			rs = append(rs, tc.expr(r))
		}
		tc.w("%s %s %s", strings.Join(ls, ", "), s.Tok, strings.Join(rs, ", "))
	case *ast.ExprStmt:
		tc.w("%s", tc.expr(s.X))
	case *ast.IncDecStmt:
		tc.w("%s%s", tc.lhs(s.X, "ReadWrite"), s.Tok)
	case *ast.IfStmt:
		tc.ifStmt(s)
	case *ast.ForStmt:
		tc.w("for ")
		if s.Init != nil {
			tc.stmt(s.Init)
		}
		if s.Init != nil || s.Post != nil {
			tc.w("; ")
		}
		if s.Cond != nil {
			tc.w("%s", tc.expr(s.Cond))
		}
		if s.Init != nil || s.Post != nil {
			tc.w("; ")
		}
		if s.Post != nil {
			tc.stmt(s.Post)
		}
		tc.w(" ")
		tc.loopBlock(s, s.Body.List)
	case *ast.RangeStmt:
		tc.rangeStmt(s, "")
	case *ast.SwitchStmt:
		tc.w("switch ")
		if s.Init != nil {
			tc.stmt(s.Init)
			tc.w("; ")
		}
		if s.Tag != nil {
			tc.w("%s ", tc.expr(s.Tag))
		}
		tc.w("{\n")
		for _, st := range s.Body.List {
			cc := st.(*ast.CaseClause)
			if cc.List == nil {
				tc.w("default:\n")
			} else {
				var es []string
				for _, e := range cc.List {
					es = append(es, tc.expr(e))
				}
				tc.w("case %s:\n", strings.Join(es, ", "))
			}
			tc.stmts(cc.Body)
		}
		tc.w("}")
	case *ast.LabeledStmt:
		if r, ok := s.Stmt.(*ast.RangeStmt); ok {
			tc.rangeStmt(r, s.Label.Name)
			return
		}
		tc.w("%s:\n%s", s.Label.Name, tc.line(s.Stmt))
		tc.stmt(s.Stmt)
	case *ast.BlockStmt:
		tc.block(s.List)
	case *ast.BranchStmt:
		tc.w("%s", s.Tok)
		if s.Label != nil {
			tc.w(" %s", s.Label.Name)
		}
	case *ast.ReturnStmt:
		var rs []string
		for _, r := range s.Results {
			rs = append(rs, tc.expr(r))
		}
		tc.w("return %s", strings.Join(rs, ", "))
	case *ast.EmptyStmt:
	default:
		tc.u.errorf(s.Pos(), "gocu gen: internal error: statement %T in a checked twin", s)
	}
}

func (tc *twinCtx) decl(gd *ast.GenDecl) {
	switch gd.Tok {
	case token.VAR:
		for _, spec := range gd.Specs {
			vs := spec.(*ast.ValueSpec)
			var names []string
			for _, n := range vs.Names {
				names = append(names, n.Name)
			}
			tc.w("var %s", strings.Join(names, ", "))
			if vs.Type != nil {
				tc.w(" %s", tc.u.goType(tc.info.TypeOf(vs.Type), vs.Type.Pos()))
			}
			if len(vs.Values) > 0 {
				var vals []string
				for _, v := range vs.Values {
					vals = append(vals, tc.expr(v))
				}
				tc.w(" = %s", strings.Join(vals, ", "))
			}
			tc.w(";")
		}
	case token.CONST:
		for _, spec := range gd.Specs {
			vs := spec.(*ast.ValueSpec)
			for i, n := range vs.Names {
				c, ok := tc.info.Defs[n].(*types.Const)
				if !ok || n.Name == "_" {
					continue
				}
				typ := ""
				if b := basicOf(c.Type()); b == nil || b.Info()&types.IsUntyped == 0 {
					typ = " " + tc.u.goType(c.Type(), n.Pos())
				}
				val := goConstLit(c.Val())
				if i < len(vs.Values) && len(vs.Values) == len(vs.Names) {
					val = tc.expr(vs.Values[i])
				}
				tc.w("const %s%s = %s;", n.Name, typ, val)
			}
		}
	case token.TYPE:
		for _, spec := range gd.Specs {
			ts := spec.(*ast.TypeSpec)
			obj := tc.info.Defs[ts.Name]
			if obj == nil {
				continue
			}
			eq := " "
			if ts.Assign.IsValid() {
				eq = " = "
			}
			tc.w("type %s%s%s;", ts.Name.Name, eq, tc.u.goType(obj.Type().Underlying(), ts.Pos()))
		}
	}
}

// loopBlock prints a loop's body, which first calls kernel.Loop: the
// back-edge where the simulator stops a thread whose launch ran out of
// time, naming the loop.
func (tc *twinCtx) loopBlock(loop ast.Stmt, list []ast.Stmt) {
	tc.w("{\n")
	tc.loopCheck(loop)
	tc.stmts(list)
	tc.w("}")
}

// loopCheck prints the call of kernel.Loop for a loop, whose site names
// its for clause ("for i < n").
func (tc *twinCtx) loopCheck(loop ast.Stmt) {
	id := tc.u.site(loop, tc.f)
	var hdr ast.Stmt
	switch l := loop.(type) {
	case *ast.ForStmt:
		c := *l
		c.Body = &ast.BlockStmt{}
		hdr = &c
	case *ast.RangeStmt:
		c := *l
		c.Body = &ast.BlockStmt{}
		hdr = &c
	}
	if hdr != nil {
		text := tc.u.nodeText(hdr) // "for cond {\n}"
		if i := strings.LastIndex(text, "{"); i >= 0 {
			text = text[:i]
		}
		tc.u.sites[id].expr = strings.TrimSpace(text)
	}
	tc.w("%s%s.Loop(%s, &gocuSite%d)\n", tc.line(loop), tc.k, tc.thread, id)
}

func (tc *twinCtx) ifStmt(s *ast.IfStmt) {
	tc.w("if ")
	if s.Init != nil {
		tc.stmt(s.Init)
		tc.w("; ")
	}
	tc.w("%s ", tc.expr(s.Cond))
	tc.block(s.Body.List)
	switch e := s.Else.(type) {
	case *ast.IfStmt:
		tc.w(" else %s", tc.line(e))
		tc.ifStmt(e)
	case *ast.BlockStmt:
		tc.w(" else ")
		tc.block(e.List)
	}
}

// rangeStmt prints a range loop; a loop over a slice or shared array that
// reads the element becomes a loop over the index with a checked read.
func (tc *twinCtx) rangeStmt(s *ast.RangeStmt, label string) {
	xt := tc.info.TypeOf(s.X)
	checked := false
	switch u := xt.Underlying().(type) {
	case *types.Slice:
		checked = true
	case *types.Pointer:
		_ = u
		checked = true
	}
	hasValue := s.Value != nil && !isBlank(s.Value)
	if !checked || !hasValue {
		if label != "" {
			tc.w("%s:\n", label)
		}
		tc.w("for ")
		if s.Key != nil {
			tc.w("%s", tc.lhs(s.Key, "Write"))
			if s.Value != nil {
				tc.w(", %s", tc.lhs(s.Value, "Write"))
			}
			tc.w(" %s ", s.Tok)
		}
		tc.w("range %s ", tc.expr(s.X))
		tc.loopBlock(s, s.Body.List)
		return
	}
	// for k, v := range x  =>  { r := x; for i := range r { k, v := i, *At(r, i) ... } }
	site := tc.u.site(s, tc.f)
	x := tc.expr(s.X)
	simple := false
	if id, ok := ast.Unparen(s.X).(*ast.Ident); ok {
		if obj := tc.info.Uses[id]; obj != nil && !(&fnCtx{u: tc.u, info: tc.info}).assignedIn(s.Body, obj) {
			simple = true
		}
	}
	tc.w("{\n")
	if !simple {
		r := tc.temp("gocuR")
		tc.w("%s%s := %s\n", tc.line(s), r, x)
		x = r
	}
	if label != "" {
		tc.w("%s:\n", label)
	}
	i := tc.temp("gocuI")
	tc.w("%sfor %s := range %s {\n", tc.line(s), i, x)
	tc.loopCheck(s)
	elem := fmt.Sprintf("*%s.At(%s, %s, %s, &gocuSite%d, %s.Read)", tc.k, tc.thread, tc.sliceOf(x, xt), i, site, tc.k)
	key := "_"
	if s.Key != nil {
		key = tc.lhs(s.Key, "Write")
	}
	tc.w("%s%s, %s %s %s, %s\n", tc.line(s), key, tc.lhs(s.Value, "Write"), s.Tok, i, elem)
	if s.Tok == token.DEFINE && key == "_" {
		// "_, v := ..." needs a new variable on the left: it has one.
	}
	tc.stmts(s.Body.List)
	tc.w("}\n}")
}

func (tc *twinCtx) temp(prefix string) string {
	tc.tmp++
	return fmt.Sprintf("%s%d", prefix, tc.tmp)
}

// sliceOf returns a slice expression over x for kernel.At.
func (tc *twinCtx) sliceOf(x string, t types.Type) string {
	if _, ok := t.Underlying().(*types.Slice); ok {
		return x
	}
	return x + "[:]"
}

// lhs prints an assignable expression with access kind acc.
func (tc *twinCtx) lhs(e ast.Expr, acc string) string {
	if ix, ok := ast.Unparen(e).(*ast.IndexExpr); ok {
		if s, ok := tc.access(ix, acc); ok {
			return s
		}
	}
	if sel, ok := ast.Unparen(e).(*ast.SelectorExpr); ok && tc.info.Selections[sel] != nil {
		return tc.operand(sel.X, acc) + "." + sel.Sel.Name
	}
	return tc.expr(e)
}

// operand prints e for use before a selector, index or slice.
func (tc *twinCtx) operand(e ast.Expr, acc string) string {
	if ix, ok := ast.Unparen(e).(*ast.IndexExpr); ok {
		if s, ok := tc.access(ix, acc); ok {
			return "(" + s + ")"
		}
	}
	if sel, ok := ast.Unparen(e).(*ast.SelectorExpr); ok && tc.info.Selections[sel] != nil {
		return tc.operand(sel.X, acc) + "." + sel.Sel.Name
	}
	s := tc.expr(e)
	switch ast.Unparen(e).(type) {
	case *ast.UnaryExpr, *ast.BinaryExpr, *ast.StarExpr:
		return "(" + s + ")"
	}
	return s
}

// access prints the checked element access e: *kernel.At(...). It returns
// false when e indexes something kernel.At cannot take (an array value
// that is not addressable, which Go checks itself).
func (tc *twinCtx) access(e *ast.IndexExpr, acc string) (string, bool) {
	p, ok := tc.address(e, acc, tc.u.site(e, tc.f))
	if !ok {
		return "", false
	}
	return "*" + p, true
}

// address prints kernel.At(...) for element e: a pointer.
func (tc *twinCtx) address(e *ast.IndexExpr, acc string, site int) (string, bool) {
	base, idx, ok := tc.addressParts(e, site)
	if !ok {
		return "", false
	}
	return fmt.Sprintf("%s.At(%s, %s, %s, &gocuSite%d, %s.%s)", tc.k, tc.thread, base, idx, site, tc.k, acc), true
}

// addressParts prints the slice and the int index of address.
func (tc *twinCtx) addressParts(e *ast.IndexExpr, site int) (base, idx string, ok bool) {
	xt := tc.info.TypeOf(e.X)
	idx = "int(" + tc.expr(e.Index) + ")"
	switch xt.Underlying().(type) {
	case *types.Slice:
		base = tc.expr(e.X)
	case *types.Pointer:
		base = tc.expr(e.X) + "[:]"
	case *types.Array:
		b, ok := tc.arrayVar(e.X, site)
		if !ok {
			return "", "", false
		}
		base = b + "[:]"
	default:
		return "", "", false
	}
	return base, idx, true
}

// arrayVar prints an addressable array expression whose outer indices go
// through kernel.Index.
func (tc *twinCtx) arrayVar(e ast.Expr, site int) (string, bool) {
	e = ast.Unparen(e)
	ix, ok := e.(*ast.IndexExpr)
	if !ok {
		if !(&fnCtx{u: tc.u, info: tc.info}).addressable(e) {
			return "", false
		}
		if sel, ok := e.(*ast.SelectorExpr); ok && tc.info.Selections[sel] != nil {
			return tc.operand(sel.X, "Read") + "." + sel.Sel.Name, true
		}
		return tc.expr(e), true
	}
	xt := tc.info.TypeOf(ix.X)
	idx := tc.expr(ix.Index)
	switch u := xt.Underlying().(type) {
	case *types.Array:
		inner, ok := tc.arrayVar(ix.X, site)
		if !ok {
			return "", false
		}
		return fmt.Sprintf("%s[%s.Index(%s, int(%s), %d, &gocuSite%d)]", inner, tc.k, tc.thread, idx, u.Len(), site), true
	case *types.Pointer:
		at := u.Elem().Underlying().(*types.Array)
		return fmt.Sprintf("%s[%s.Index(%s, int(%s), %d, &gocuSite%d)]", tc.operand(ix.X, "Read"), tc.k, tc.thread, idx, at.Len(), site), true
	case *types.Slice:
		if (&fnCtx{u: tc.u, info: tc.info}).pure(ix.X) {
			x := tc.expr(ix.X)
			return fmt.Sprintf("%s[%s.Index(%s, int(%s), len(%s), &gocuSite%d)]", x, tc.k, tc.thread, idx, x, site), true
		}
		p, ok := tc.address(ix, "Read", site)
		if !ok {
			return "", false
		}
		return "(*" + p + ")", true
	}
	return "", false
}

// expr prints an rvalue.
func (tc *twinCtx) expr(e ast.Expr) string {
	switch x := e.(type) {
	case *ast.Ident:
		return tc.ident(x)
	case *ast.BasicLit:
		return x.Value
	case *ast.ParenExpr:
		return "(" + tc.expr(x.X) + ")"
	case *ast.SelectorExpr:
		if tc.info.Selections[x] == nil {
			return tc.ident(x.Sel)
		}
		return tc.operand(x.X, "Read") + "." + x.Sel.Name
	case *ast.IndexExpr:
		if tv := tc.info.Types[x.X]; tv.IsValue() || tv.IsVoid() {
			if _, isFunc := tv.Type.(*types.Signature); !isFunc {
				if s, ok := tc.access(x, "Read"); ok {
					return s
				}
				return tc.operand(x.X, "Read") + "[" + tc.expr(x.Index) + "]"
			}
		}
		return tc.expr(x.X) + "[" + tc.typeArg(x.Index) + "]"
	case *ast.IndexListExpr:
		var ts []string
		for _, i := range x.Indices {
			ts = append(ts, tc.typeArg(i))
		}
		return tc.expr(x.X) + "[" + strings.Join(ts, ", ") + "]"
	case *ast.SliceExpr:
		// Slicing an array element of an array (tile[i][:]) addresses the
		// element without reading it: its indices are only checked.
		var s string
		if ix, ok := ast.Unparen(x.X).(*ast.IndexExpr); ok {
			if _, isArr := tc.info.TypeOf(x.X).Underlying().(*types.Array); isArr {
				if b, ok := tc.arrayVar(ix, tc.u.site(ix, tc.f)); ok {
					s = b
				}
			}
		}
		if s == "" {
			s = tc.operand(x.X, "Read")
		}
		s += "["
		if x.Low != nil {
			s += tc.expr(x.Low)
		}
		s += ":"
		if x.High != nil {
			s += tc.expr(x.High)
		}
		if x.Slice3 {
			s += ":" + tc.expr(x.Max)
		}
		return s + "]"
	case *ast.StarExpr:
		return "*" + tc.operand(x.X, "Read")
	case *ast.UnaryExpr:
		if x.Op == token.AND {
			if ix, ok := ast.Unparen(x.X).(*ast.IndexExpr); ok {
				if isKernelNamed(tc.info.TypeOf(ix), "MBarrier") {
					// The executor checks a barrier's use itself: only
					// the index is checked here.
					site := tc.u.site(ix, tc.f)
					if base, idx, ok := tc.addressParts(ix, site); ok {
						return fmt.Sprintf("&%s[%s.Index(%s, %s, len(%s), &gocuSite%d)]", base, tc.k, tc.thread, idx, base, site)
					}
				}
				if p, ok := tc.address(ix, "Atomic", tc.u.site(ix, tc.f)); ok {
					return p
				}
			}
			if sel, ok := ast.Unparen(x.X).(*ast.SelectorExpr); ok {
				return "&" + tc.atomicField(sel)
			}
		}
		return x.Op.String() + tc.operand(x.X, "Read")
	case *ast.BinaryExpr:
		return tc.expr(x.X) + " " + x.Op.String() + " " + tc.expr(x.Y)
	case *ast.CallExpr:
		return tc.call(x)
	case *ast.CompositeLit:
		var els []string
		st, isStruct := tc.info.TypeOf(x).Underlying().(*types.Struct)
		for i, el := range x.Elts {
			if _, kv := el.(*ast.KeyValueExpr); !kv && isStruct && i < st.NumFields() {
				// Keyed, so that vet accepts literals of other packages' types.
				els = append(els, st.Field(i).Name()+": "+tc.expr(el))
				continue
			}
			if kv, ok := el.(*ast.KeyValueExpr); ok {
				key := tc.expr(kv.Key)
				if _, isStruct := tc.info.TypeOf(x).Underlying().(*types.Struct); isStruct {
					key = kv.Key.(*ast.Ident).Name
				}
				els = append(els, key+": "+tc.expr(kv.Value))
				continue
			}
			els = append(els, tc.expr(el))
		}
		typ := ""
		if x.Type != nil {
			typ = tc.u.goType(tc.info.TypeOf(x), x.Pos())
		}
		return typ + "{" + strings.Join(els, ", ") + "}"
	case *ast.ArrayType, *ast.StructType, *ast.FuncType, *ast.MapType, *ast.ChanType, *ast.InterfaceType:
		return tc.u.goType(tc.info.TypeOf(x), x.Pos())
	}
	tc.u.errorf(e.Pos(), "gocu gen: internal error: expression %T in a checked twin", e)
	return "0"
}

// atomicField prints s[i].f (or deeper) with the element access checked
// as atomic, for &s[i].f.
func (tc *twinCtx) atomicField(sel *ast.SelectorExpr) string {
	switch x := ast.Unparen(sel.X).(type) {
	case *ast.IndexExpr:
		if p, ok := tc.address(x, "Atomic", tc.u.site(x, tc.f)); ok {
			return p + "." + sel.Sel.Name
		}
	case *ast.SelectorExpr:
		return tc.atomicField(x) + "." + sel.Sel.Name
	}
	return tc.expr(sel)
}

func (tc *twinCtx) typeArg(e ast.Expr) string {
	if tv, ok := tc.info.Types[e]; ok && tv.IsType() {
		return tc.u.goType(tv.Type, e.Pos())
	}
	return tc.expr(e)
}

// ident prints an identifier as the generated file must spell it.
func (tc *twinCtx) ident(id *ast.Ident) string {
	obj := tc.info.Uses[id]
	if obj == nil {
		obj = tc.info.Defs[id]
	}
	if obj == nil {
		return id.Name
	}
	if obj == tc.tvar && tc.tvar != nil {
		return tc.thread
	}
	if obj.Pkg() == nil || obj.Parent() == types.Universe {
		return id.Name
	}
	if obj.Parent() != obj.Pkg().Scope() {
		return id.Name // a local
	}
	if obj.Pkg() == tc.u.pkg.Types {
		return id.Name
	}
	switch o := obj.(type) {
	case *types.Const:
		if !o.Exported() {
			return tc.constLit(o, id.Pos())
		}
	case *types.TypeName:
		return tc.u.goType(o.Type(), id.Pos())
	}
	if !obj.Exported() {
		tc.u.unsupported(id.Pos(), "the unexported "+obj.Pkg().Name()+"."+obj.Name()+" in a function called from another package's kernel",
			"export it, or move the function into the kernel's package")
	}
	return tc.u.qualifier(obj.Pkg()) + "." + obj.Name()
}

func (tc *twinCtx) constLit(c *types.Const, pos token.Pos) string {
	v := goConstLit(c.Val())
	if b := basicOf(c.Type()); b != nil && b.Info()&types.IsUntyped != 0 {
		return "(" + v + ")"
	}
	return tc.u.goType(c.Type(), pos) + "(" + v + ")"
}

// goConstLit prints a constant exactly as Go source.
func goConstLit(v constant.Value) string {
	switch v.Kind() {
	case constant.Float:
		s := v.ExactString()
		if n, d, ok := strings.Cut(s, "/"); ok {
			return "(" + n + ".0 / " + d + ")"
		}
		if !strings.ContainsAny(s, ".eEpP") {
			s += ".0"
		}
		return s
	case constant.Bool:
		return strconv.FormatBool(constant.BoolVal(v))
	}
	return v.ExactString()
}

// call prints a call; calls of translated functions become calls of their
// twins, which take the thread first.
func (tc *twinCtx) call(c *ast.CallExpr) string {
	var args []string
	for _, a := range c.Args {
		args = append(args, tc.expr(a))
	}
	ell := ""
	if c.Ellipsis.IsValid() {
		ell = "..."
	}
	if tv := tc.info.Types[c.Fun]; tv.IsType() {
		return tc.u.goType(tv.Type, c.Fun.Pos()) + "(" + strings.Join(args, ", ") + ")"
	}
	callee, _ := (&fnCtx{u: tc.u, info: tc.info}).calleeOf(c)
	if callee != nil && callee.Pkg() != nil && callee.Pkg().Path() == "fmt" && printFuncs[callee.Name()] {
		return tc.twinPrint(c, callee.Name())
	}
	if callee != nil {
		if g := tc.u.byObj[callee.Origin()]; g != nil && !g.kernel {
			// The thread first (the callee's own, or the twin's), then the
			// receiver, then the other arguments.
			var all []string
			rest := args
			if g.thread == nil {
				all = append(all, tc.thread)
			} else if len(args) > 0 {
				all, rest = append(all, args[0]), args[1:]
			}
			if recv := callee.Signature().Recv(); recv != nil {
				sel := ast.Unparen(c.Fun).(*ast.SelectorExpr)
				all = append(all, tc.recv(sel.X, recv.Type()))
			}
			all = append(all, rest...)
			inst := ""
			if id := calleeIdent(c.Fun); id != nil {
				if in, ok := tc.info.Instances[id]; ok && in.TypeArgs.Len() > 0 {
					var ts []string
					for i := 0; i < in.TypeArgs.Len(); i++ {
						ts = append(ts, tc.u.goType(in.TypeArgs.At(i), c.Pos()))
					}
					inst = "[" + strings.Join(ts, ", ") + "]"
				}
			}
			return tc.u.twinNameOf(g) + inst + "(" + strings.Join(all, ", ") + ell + ")"
		}
	}
	return tc.expr(c.Fun) + "(" + strings.Join(args, ", ") + ell + ")"
}

// recv prints the receiver x of a method call as the method's twin takes
// it, a function parameter of type rt: Go's implicit & and * written out.
func (tc *twinCtx) recv(x ast.Expr, rt types.Type) string {
	_, wantPtr := rt.Underlying().(*types.Pointer)
	_, havePtr := tc.info.TypeOf(x).Underlying().(*types.Pointer)
	switch {
	case wantPtr && !havePtr:
		if ix, ok := ast.Unparen(x).(*ast.IndexExpr); ok {
			if p, ok := tc.address(ix, "ReadWrite", tc.u.site(ix, tc.f)); ok {
				return p
			}
		}
		return "&" + tc.operand(x, "ReadWrite")
	case !wantPtr && havePtr:
		return "*" + tc.operand(x, "Read")
	}
	return tc.expr(x)
}

// goFile assembles the generated Go file.
func (u *unit) goFile(src string) []byte {
	im := u.imports()
	k := im.alias(kernelPath, "kernel")
	m := im.alias(metaPath, "meta")
	var body strings.Builder
	w := func(format string, args ...any) { fmt.Fprintf(&body, format, args...) }
	w("// gocuSource is the CUDA C++ source of the package's kernels, for NVRTC.\n")
	if strings.Contains(src, "`") || strings.Contains(src, "\r") {
		w("const gocuSource = %s\n\n", strconv.Quote(src))
	} else {
		w("const gocuSource = `%s`\n\n", src)
	}
	w("// gocuSourceSHA256 is the hex SHA-256 of gocuSource.\n")
	w("const gocuSourceSHA256 = %q\n\n", sha256hex(src))
	w("// gocuModule describes the package's kernels for launchers and the simulator.\n")
	w("var gocuModule = &%s.Module{\n", m)
	w("Package: %q,\nSource: gocuSource,\nSHA256: gocuSourceSHA256,\n", u.pkg.PkgPath)
	if u.wgmma {
		w("ArchSpecific: true,\n")
	}
	w("Kernels: []%s.Kernel{\n", m)
	for i, kf := range u.kernels {
		km := u.kernelMeta(kf)
		w("{\n")
		w("Name: %q,\nEntry: %q,\n", km.Name, km.Entry)
		w("Params: []%s.Param{\n", m)
		for _, p := range km.Params {
			w("{Name: %q, GoType: %q, Kind: %s.%s, CType: %q, Size: %d, Align: %d", p.Name, p.GoType, m, kindName[p.Kind], p.CType, p.Size, p.Align)
			if p.ElemSize > 0 {
				w(", ElemSize: %d", p.ElemSize)
			}
			w("},\n")
		}
		w("},\n")
		for _, f := range []struct {
			name string
			on   bool
		}{{"Barriers", km.Barriers}, {"Warp", km.Warp}, {"Atomics", km.Atomics}, {"DynamicShared", km.DynamicShared}, {"NoAlias", km.NoAlias}, {"ArchSpecific", km.ArchSpecific}, {"Prints", km.Prints}} {
			if f.on {
				w("%s: true,\n", f.name)
			}
		}
		for _, f := range []struct {
			name string
			v    int
		}{{"SharedBytes", km.SharedBytes}, {"MaxThreads", km.MaxThreads}, {"MinBlocks", km.MinBlocks}} {
			if f.v != 0 {
				w("%s: %d,\n", f.name, f.v)
			}
		}
		inst := ""
		if len(kf.targs) > 0 {
			var ts []string
			for _, t := range kf.targs {
				ts = append(ts, u.goType(t, kf.src.decl.Pos()))
			}
			inst = "[" + strings.Join(ts, ", ") + "]"
		}
		w("Func: %s%s,\nChecked: %s%s,\n", kf.obj.Name(), inst, u.twinNameOf(kf), inst)
		w("},\n")
		_ = i
	}
	w("},\n")
	w("Sites: []*%s.Site{", k)
	for i := range u.sites {
		if i%8 == 0 {
			w("\n")
		}
		w("&gocuSite%d, ", i)
	}
	w("\n},\n")
	if gs := u.goSources(); len(gs) > 0 {
		w("GoSources: []%s.GoSource{\n", m)
		for _, g := range gs {
			w("{File: %q, Func: %q, SHA256: %q},\n", g.File, g.Func, g.SHA256)
		}
		w("},\n")
	}
	w("}\n\n")
	w("func init() { %s.Register(gocuModule) }\n\n", m)
	lp := im.alias(launchPath, "launch")
	w("// %s compiles the package's CUDA source on first use on each GPU, for\n// the launchers.\n", programVar)
	w("var %s = %s.NewProgram(gocuModule)\n\n", programVar, lp)
	for _, kf := range u.origins() {
		body.WriteString(u.launcher(kf))
		body.WriteString("\n")
	}
	if len(u.sites) > 0 {
		w("// Source sites of the checked accesses and debug-mode checks.\nvar (\n")
		for i, s := range u.sites {
			w("gocuSite%d = %s.Site{File: %q, Line: %d, Col: %d, Expr: %q}\n", i, k, s.file, s.line, s.col, s.expr)
		}
		w(")\n\n")
	}
	for _, f := range u.order {
		body.WriteString(f.twin)
		body.WriteString("\n")
	}
	for _, kf := range u.kernels {
		body.WriteString(kf.twin)
		body.WriteString("\n")
	}
	var out strings.Builder
	out.WriteString(generatedMarker + "\n" + staleNote + "\n")
	fmt.Fprintf(&out, "package %s\n\n", u.pkg.Name)
	var paths []string
	for p := range im.byPath {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	out.WriteString("import (\n")
	for _, p := range paths {
		a := im.byPath[p]
		if a == baseName(p) {
			fmt.Fprintf(&out, "%q\n", p)
		} else {
			fmt.Fprintf(&out, "%s %q\n", a, p)
		}
	}
	out.WriteString(")\n\n")
	out.WriteString(body.String())
	return u.format(out.String())
}

var kindName = map[meta.Kind]string{meta.Scalar: "Scalar", meta.Slice: "Slice", meta.Struct: "Struct", meta.Array: "Array"}

// kernelMeta returns the metadata of a kernel.
func (u *unit) kernelMeta(k *fn) meta.Kernel {
	km := meta.Kernel{
		Name: k.displayName(), Entry: k.cname,
		Barriers: k.eff.barrier, Warp: k.eff.warp, Atomics: k.eff.atomic,
		SharedBytes: k.sharedBytes, DynamicShared: k.dynShared,
		MaxThreads: k.maxThreads, MinBlocks: k.minBlocks, NoAlias: k.noalias,
		ArchSpecific: k.eff.sm90a,
		Prints:       k.eff.fmtPrint,
	}
	sig := k.sig
	for i := 1; i < sig.Params().Len(); i++ {
		km.Params = append(km.Params, u.paramMeta(sig.Params().At(i)))
	}
	return km
}

func (u *unit) paramMeta(v *types.Var) meta.Param {
	p := meta.Param{Name: v.Name(), GoType: types.TypeString(v.Type(), types.RelativeTo(u.pkg.Types))}
	t := v.Type()
	switch ut := t.Underlying().(type) {
	case *types.Slice:
		p.Kind = meta.Slice
		p.CType = u.ctype(ut.Elem(), v.Pos()) + "*"
		p.Size, p.Align = 8, 8
		es, _ := u.cudaSize(ut.Elem())
		p.ElemSize = int(es)
		return p
	case *types.Struct:
		p.Kind = meta.Struct
	case *types.Array:
		p.Kind = meta.Array
	default:
		p.Kind = meta.Scalar
	}
	p.CType = u.ctype(t, v.Pos())
	size, align := u.cudaSize(t)
	p.Size, p.Align = int(size), int(align)
	return p
}

func hasIndex(e ast.Expr) bool {
	found := false
	ast.Inspect(e, func(n ast.Node) bool {
		if _, ok := n.(*ast.IndexExpr); ok {
			found = true
		}
		return !found
	})
	return found
}

func hasCall(e ast.Expr) bool {
	found := false
	ast.Inspect(e, func(n ast.Node) bool {
		if _, ok := n.(*ast.CallExpr); ok {
			found = true
		}
		return !found
	})
	return found
}
