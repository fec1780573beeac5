package gen

import (
	"fmt"
	"go/ast"
	"go/token"
	"go/types"
	"sort"

	"golang.org/x/tools/go/packages"
)

// A constant table is a package-level array variable that kernel code
// reads, such as a convolution's mask:
//
//	var mask = [5]float32{0.1, 0.2, 0.4, 0.2, 0.1}
//
// It becomes a __constant__ array initialised with the same values, which
// every thread reads through the constant cache (the lecture's convolution
// pattern). Kernels may index it, range over it, take its length and copy
// it; they may not write it, slice it or take its address. Its declaration
// must initialise it with constants, and no code of the loaded packages
// may write it: the GPU sees the values of the declaration, the simulator
// the Go variable, and the two must agree.

// maxConstant is the constant memory of every CUDA GPU: 64 KiB.
const maxConstant = 64 << 10

// table is a package-level array translated to __constant__ memory.
type table struct {
	obj   *types.Var
	cname string
	code  string // the C definition
	size  int64
}

// collectTables finds the package-level variables the translated
// functions read and makes each a table, or reports why it cannot be one.
// It runs before translation, so that the tables' C names are taken before
// any local name.
func (u *unit) collectTables() {
	var vars []*types.Var
	pos := map[*types.Var]token.Pos{}
	for _, f := range append(append([]*fn(nil), u.order...), u.kernels...) {
		if f.bad {
			continue
		}
		info := f.info
		ast.Inspect(f.src.decl.Body, func(n ast.Node) bool {
			id, ok := n.(*ast.Ident)
			if !ok {
				return true
			}
			v, ok := info.Uses[id].(*types.Var)
			if !ok || v.Pkg() == nil || v.Parent() != v.Pkg().Scope() {
				return true
			}
			if _, seen := pos[v]; !seen {
				pos[v] = id.Pos()
				vars = append(vars, v)
			}
			return true
		})
	}
	var total int64
	for _, v := range vars {
		t := u.newTable(v, pos[v])
		u.tables[v] = t // nil when rejected: uses are not reported again
		if t == nil {
			continue
		}
		total += t.size
		if total > maxConstant {
			u.unsupported(pos[v], fmt.Sprintf("%d bytes of package-level tables", total),
				fmt.Sprintf("they live in constant memory, of which a GPU has %d bytes (64 KiB); pass larger tables as slice parameters", maxConstant))
			u.tables[v] = nil
			continue
		}
		u.tableOrder = append(u.tableOrder, t)
	}
}

// newTable checks the package-level variable v, first used at pos, and
// translates it.
func (u *unit) newTable(v *types.Var, pos token.Pos) *table {
	name := v.Name()
	if v.Pkg() != u.pkg.Types {
		name = v.Pkg().Name() + "." + name
	}
	instead := "kernels read package-level arrays initialised with constants (constant tables); pass the value as a parameter, or declare a constant"
	if _, isArr := v.Type().Underlying().(*types.Array); !isArr {
		u.unsupported(pos, "the package-level variable "+name, instead)
		return nil
	}
	if !u.checkValueType(pos, v.Type()) {
		return nil
	}
	if hasVectorDeep(v.Type(), 0) {
		u.unsupported(pos, "the package-level table "+name+" of kernel vector types",
			"a table is initialised with constants, and CUDA's vector types are made by functions; use an array of float32 (or of a struct of float32 fields)")
		return nil
	}
	pkg := u.prog.byTypes[v.Pkg()]
	if pkg == nil || pkg.TypesInfo == nil {
		u.unsupported(pos, "the package-level variable "+name+" of a package not loaded from source", instead)
		return nil
	}
	spec, file, init := u.prog.varDecl(pkg, v)
	if spec == nil {
		u.unsupported(pos, "the package-level variable "+name+" without a declaration in Go source", instead)
		return nil
	}
	lit, isLit := ast.Unparen(init).(*ast.CompositeLit)
	if init == nil || !isLit || !constantLit(pkg.TypesInfo, lit) {
		u.unsupported(pos, "the package-level table "+name+" without a literal of constants",
			"initialise it where it is declared with a composite literal of constants, such as [3]float32{0.25, 0.5, 0.25}: the GPU's copy in constant memory holds those values; pass values computed at run time as a slice parameter")
		return nil
	}
	if w := u.tableWriteOutside(v); w.IsValid() {
		u.unsupported(pos, "the package-level table "+name+" (written at "+u.prog.position(w).String()+")",
			"the GPU's copy in constant memory holds the values of its declaration only; initialise it there and never write it, or pass it as a slice parameter")
		return nil
	}
	size, _ := u.cudaSize(v.Type())
	t := &table{obj: v, size: size}
	cname := v.Name()
	if v.Pkg() != u.pkg.Types {
		cname = v.Pkg().Name() + "_" + cname
	}
	t.cname = u.globals.take(cname)
	// The initialiser, translated in the declaring package.
	f := &fn{src: &funcSrc{pkg: pkg, file: file}, obj: nil, info: pkg.TypesInfo}
	fc := newFnCtx(u, f)
	val := fc.valAs(init, v.Type())
	t.code = fmt.Sprintf("// %s (%s)\n__constant__ %s %s = %s;\n", name, u.srcPosIn(pkg, v.Pos()), u.ctype(v.Type(), v.Pos()), t.cname, val.s)
	return t
}

// hasVectorDeep reports whether t holds a kernel vector type anywhere.
func hasVectorDeep(t types.Type, depth int) bool {
	if depth > 20 {
		return false
	}
	if hasVector(t) {
		return true
	}
	switch u := t.Underlying().(type) {
	case *types.Array:
		return hasVectorDeep(u.Elem(), depth+1)
	case *types.Struct:
		for i := 0; i < u.NumFields(); i++ {
			if hasVectorDeep(u.Field(i).Type(), depth+1) {
				return true
			}
		}
	}
	return false
}

// constantLit reports whether every element of a composite literal is a
// constant or a composite literal of constants.
func constantLit(info *types.Info, lit *ast.CompositeLit) bool {
	for _, el := range lit.Elts {
		if kv, ok := el.(*ast.KeyValueExpr); ok {
			el = kv.Value
		}
		if inner, ok := ast.Unparen(el).(*ast.CompositeLit); ok {
			if !constantLit(info, inner) {
				return false
			}
			continue
		}
		if tv := info.Types[el]; tv.Value == nil {
			return false
		}
	}
	return true
}

// varDecl finds the declaration of the package-level variable v in pkg:
// its spec, file and initialiser (nil if none).
func (p *program) varDecl(pkg *packages.Package, v *types.Var) (*ast.ValueSpec, *ast.File, ast.Expr) {
	for _, f := range pkg.Syntax {
		for _, d := range f.Decls {
			gd, ok := d.(*ast.GenDecl)
			if !ok || gd.Tok != token.VAR {
				continue
			}
			for _, s := range gd.Specs {
				vs := s.(*ast.ValueSpec)
				for i, n := range vs.Names {
					if pkg.TypesInfo.Defs[n] != v {
						continue
					}
					var init ast.Expr
					if len(vs.Values) == len(vs.Names) {
						init = vs.Values[i]
					}
					return vs, f, init
				}
			}
		}
	}
	return nil, nil, nil
}

// tableWriteOutside returns the first position outside the translated
// functions where v is written (see tableWrite), or NoPos. Writes inside
// them are reported where they are translated.
func (u *unit) tableWriteOutside(v *types.Var) token.Pos {
	for _, w := range u.prog.tableWrite(v) {
		inside := false
		for _, f := range u.fns {
			if f.src.decl.Pos() <= w && w < f.src.decl.End() {
				inside = true
				break
			}
		}
		if !inside {
			return w
		}
	}
	return token.NoPos
}

// tableWrite returns the positions, in order, where code of the loaded
// packages writes v (or an element of it), takes its address, slices it
// or calls a pointer-receiver method on it.
func (p *program) tableWrite(v *types.Var) []token.Pos {
	if pos, ok := p.writes[v]; ok {
		return pos
	}
	var found []token.Pos
	root := func(info *types.Info, e ast.Expr) bool {
		for {
			switch x := ast.Unparen(e).(type) {
			case *ast.Ident:
				return info.Uses[x] == v
			case *ast.SelectorExpr:
				if info.Selections[x] == nil {
					return info.Uses[x.Sel] == v
				}
				e = x.X
			case *ast.IndexExpr:
				if _, isSlice := info.TypeOf(x.X).Underlying().(*types.Slice); isSlice {
					return false
				}
				e = x.X
			default:
				return false
			}
		}
	}
	for _, pkg := range p.byTypes {
		if pkg.TypesInfo == nil {
			continue
		}
		info := pkg.TypesInfo
		for _, f := range pkg.Syntax {
			ast.Inspect(f, func(n ast.Node) bool {
				switch n := n.(type) {
				case *ast.AssignStmt:
					for _, l := range n.Lhs {
						if root(info, l) {
							found = append(found, l.Pos())
						}
					}
				case *ast.IncDecStmt:
					if root(info, n.X) {
						found = append(found, n.X.Pos())
					}
				case *ast.RangeStmt:
					if n.Tok == token.ASSIGN {
						for _, e := range []ast.Expr{n.Key, n.Value} {
							if e != nil && root(info, e) {
								found = append(found, e.Pos())
							}
						}
					}
				case *ast.UnaryExpr:
					if n.Op == token.AND && root(info, n.X) {
						found = append(found, n.Pos())
					}
				case *ast.SliceExpr:
					if root(info, n.X) {
						found = append(found, n.Pos())
					}
				case *ast.CallExpr:
					// A pointer-receiver method called on the table or an
					// element of it.
					if sel, ok := ast.Unparen(n.Fun).(*ast.SelectorExpr); ok {
						if s := info.Selections[sel]; s != nil && s.Kind() == types.MethodVal && root(info, sel.X) {
							if fn, ok := s.Obj().(*types.Func); ok {
								if _, ptr := fn.Signature().Recv().Type().(*types.Pointer); ptr {
									found = append(found, n.Pos())
								}
							}
						}
					}
				}
				return true
			})
		}
	}
	sort.Slice(found, func(i, j int) bool { return found[i] < found[j] })
	p.writes[v] = found
	return found
}

// tableRoot returns the package-level table at the root of an element
// chain (mask, mask[i], pairs[i].a), or nil.
func (fc *fnCtx) tableRoot(e ast.Expr) *types.Var {
	for {
		switch x := ast.Unparen(e).(type) {
		case *ast.Ident:
			v, ok := fc.info.Uses[x].(*types.Var)
			if ok && v.Pkg() != nil && v.Parent() == v.Pkg().Scope() {
				return v
			}
			return nil
		case *ast.SelectorExpr:
			if fc.info.Selections[x] == nil {
				v, ok := fc.info.Uses[x.Sel].(*types.Var)
				if ok && v.Pkg() != nil && v.Parent() == v.Pkg().Scope() {
					return v
				}
				return nil
			}
			e = x.X
		case *ast.IndexExpr:
			if _, isSlice := fc.typeOf(x.X).Underlying().(*types.Slice); isSlice {
				return nil
			}
			e = x.X
		default:
			return nil
		}
	}
}

// tableRef translates a use of the package-level variable v: its table,
// or a diagnostic.
func (fc *fnCtx) tableRef(v *types.Var, pos token.Pos) cx {
	t, known := fc.u.tables[v]
	switch {
	case t != nil:
		return prim(t.cname)
	case !known:
		fc.u.errorf(pos, "gocu gen: internal error: the package-level variable %s was not collected", v.Name())
	}
	return prim("0") // rejected, and reported where it was first used
}

// noWriteTable reports a write of a table at the root of e.
func (fc *fnCtx) noWriteTable(e ast.Expr, what string) bool {
	v := fc.tableRoot(e)
	if v == nil || fc.u.tables[v] == nil {
		return false
	}
	fc.unsupported(e.Pos(), what+" the package-level table "+v.Name(),
		"it lives in constant memory, which kernels only read; copy it into a local array (c := "+v.Name()+") and change the copy")
	return true
}

// srcPosIn is srcPos for a declaration of package pkg.
func (u *unit) srcPosIn(pkg *packages.Package, pos token.Pos) string {
	p := u.prog.fset.Position(pos)
	file := baseName(p.Filename)
	if pkg != u.pkg {
		file = pkg.PkgPath + "/" + file
	}
	return fmt.Sprintf("%s:%d", file, p.Line)
}
