package gen

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"go/types"
	"strings"
)

// Generic kernels and device functions are translated once per
// instantiation, as C++ templates would be, but without templates: each
// instance is a function of its own, translated from the generic
// function's syntax with a copy of the type information in which every
// type parameter is replaced by its type argument (instanceInfo). The
// translator itself then sees only concrete types: T(2) is a conversion
// to float32, x / y an integer or a float division, as in the instance.
//
// Device functions are instantiated with the type arguments of the calls
// that reach them. A generic kernel is instantiated for every type its
// constraint allows (kernel.Float: float32 and float64), or for the
// instantiations a //gocu:instantiate directive names; its launcher is
// generic too and picks the instance by the underlying type of its type
// arguments (see launcher.go).

// maxInstances bounds the instances of one generic kernel.
const maxInstances = 16

// fnKey identifies a function instance: the generic function (or plain
// function) and its type arguments.
type fnKey struct {
	obj   *types.Func
	targs string
}

func keyOf(obj *types.Func, targs []types.Type) fnKey {
	return fnKey{obj: obj.Origin(), targs: typeList(targs)}
}

// typeList prints type arguments as Go spells them in the package they
// come from: "float32", "float32, int32".
func typeList(ts []types.Type) string {
	var ss []string
	for _, t := range ts {
		ss = append(ss, types.TypeString(t, byName))
	}
	return strings.Join(ss, ", ")
}

// displayName is how messages and the metadata name an instance:
// Axpy[float32].
func (f *fn) displayName() string {
	if len(f.targs) == 0 {
		return f.obj.Name()
	}
	return f.obj.Name() + "[" + typeList(f.targs) + "]"
}

// funcDisplayName is funcDisplayName of the function with its type
// arguments: lecture.Axpy[float32].
func (f *fn) funcDisplayName() string {
	if len(f.targs) == 0 {
		return funcDisplayName(f.obj)
	}
	return funcDisplayName(f.obj) + "[" + typeList(f.targs) + "]"
}

// instanceSuffix is the part of an instance's C name that names its type
// arguments: "_float32", "_float32_int32".
func instanceSuffix(ts []types.Type) string {
	var b strings.Builder
	for _, t := range ts {
		b.WriteByte('_')
		for _, r := range types.TypeString(t, byName) {
			switch {
			case r == '_' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z':
				b.WriteRune(r)
			case r == '[':
				b.WriteString("arr")
			case r == '.':
				b.WriteByte('_')
			}
		}
	}
	return b.String()
}

// subster replaces type parameters by type arguments.
type subster struct {
	m    map[*types.TypeParam]types.Type
	ctxt *types.Context
}

func (s *subster) typ(t types.Type) types.Type {
	if s == nil || t == nil {
		return t
	}
	return s.walk(t, 0)
}

func (s *subster) walk(t types.Type, depth int) types.Type {
	if depth > 30 {
		return t
	}
	switch t := t.(type) {
	case *types.TypeParam:
		if r, ok := s.m[t]; ok {
			return r
		}
		return t
	case *types.Alias:
		return s.walk(types.Unalias(t), depth+1)
	case *types.Basic:
		return t
	case *types.Pointer:
		if e := s.walk(t.Elem(), depth+1); e != t.Elem() {
			return types.NewPointer(e)
		}
	case *types.Slice:
		if e := s.walk(t.Elem(), depth+1); e != t.Elem() {
			return types.NewSlice(e)
		}
	case *types.Array:
		if e := s.walk(t.Elem(), depth+1); e != t.Elem() {
			return types.NewArray(e, t.Len())
		}
	case *types.Tuple:
		if t == nil {
			return t
		}
		changed := false
		vs := make([]*types.Var, t.Len())
		for i := range vs {
			v := t.At(i)
			if nt := s.walk(v.Type(), depth+1); nt != v.Type() {
				v = types.NewParam(v.Pos(), v.Pkg(), v.Name(), nt)
				changed = true
			}
			vs[i] = v
		}
		if changed {
			return types.NewTuple(vs...)
		}
	case *types.Signature:
		p, r := s.walk(t.Params(), depth+1), s.walk(t.Results(), depth+1)
		if p != t.Params() || r != t.Results() {
			return types.NewSignatureType(t.Recv(), nil, nil, p.(*types.Tuple), r.(*types.Tuple), t.Variadic())
		}
	case *types.Struct:
		changed := false
		fs := make([]*types.Var, t.NumFields())
		tags := make([]string, t.NumFields())
		for i := range fs {
			f := t.Field(i)
			tags[i] = t.Tag(i)
			if nt := s.walk(f.Type(), depth+1); nt != f.Type() {
				f = types.NewField(f.Pos(), f.Pkg(), f.Name(), nt, f.Embedded())
				changed = true
			}
			fs[i] = f
		}
		if changed {
			return types.NewStruct(fs, tags)
		}
	case *types.Named:
		if args := t.TypeArgs(); args.Len() > 0 {
			changed := false
			nargs := make([]types.Type, args.Len())
			for i := range nargs {
				nargs[i] = s.walk(args.At(i), depth+1)
				changed = changed || nargs[i] != args.At(i)
			}
			if changed {
				if it, err := types.Instantiate(s.ctxt, t.Origin(), nargs, false); err == nil {
					return it
				}
			}
		}
	}
	return t
}

// instantiate makes f the instance of its generic function for targs:
// f.tmap, f.sig and f.info, the generic function's type information with
// every type parameter replaced.
func (u *unit) instantiate(f *fn, targs []types.Type) {
	f.targs = targs
	orig := f.src.pkg.TypesInfo
	f.sig = f.obj.Signature()
	f.info = orig
	tps := f.obj.Signature().TypeParams()
	if len(targs) == 0 || tps == nil || tps.Len() != len(targs) {
		return
	}
	s := &subster{m: map[*types.TypeParam]types.Type{}, ctxt: u.prog.ctxt}
	for i := range targs {
		s.m[tps.At(i)] = targs[i]
	}
	f.subst = s
	info := &types.Info{
		Types:      map[ast.Expr]types.TypeAndValue{},
		Defs:       map[*ast.Ident]types.Object{},
		Uses:       map[*ast.Ident]types.Object{},
		Implicits:  map[ast.Node]types.Object{},
		Selections: map[*ast.SelectorExpr]*types.Selection{},
		// Shared with the generic function's: readers substitute (see
		// fn.typeArgsOf).
		Instances: orig.Instances,
	}
	vars := map[types.Object]types.Object{}
	newVar := func(o types.Object) types.Object {
		if n, ok := vars[o]; ok {
			return n
		}
		v, ok := o.(*types.Var)
		if !ok {
			return o
		}
		nt := s.typ(v.Type())
		if nt == v.Type() {
			vars[o] = o
			return o
		}
		var n *types.Var
		if v.IsField() {
			n = types.NewField(v.Pos(), v.Pkg(), v.Name(), nt, v.Embedded())
		} else {
			n = types.NewParam(v.Pos(), v.Pkg(), v.Name(), nt)
		}
		vars[o] = n
		return n
	}
	ast.Inspect(f.src.decl, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.Ident:
			if o := orig.Defs[n]; o != nil {
				info.Defs[n] = newVar(o)
			} else if _, ok := orig.Defs[n]; ok {
				info.Defs[n] = nil
			}
			if o := orig.Uses[n]; o != nil {
				info.Uses[n] = newVar(o)
			}
		case *ast.SelectorExpr:
			if sel, ok := orig.Selections[n]; ok {
				info.Selections[n] = sel
			}
		}
		if n != nil {
			if o, ok := orig.Implicits[n]; ok {
				info.Implicits[n] = newVar(o)
			}
		}
		if e, ok := n.(ast.Expr); ok {
			if tv, ok := orig.Types[e]; ok {
				tv.Type = s.typ(tv.Type)
				info.Types[e] = tv
			}
		}
		return true
	})
	tuple := func(t *types.Tuple) *types.Tuple {
		vs := make([]*types.Var, t.Len())
		for i := range vs {
			vs[i] = newVar(t.At(i)).(*types.Var)
		}
		return types.NewTuple(vs...)
	}
	sig := f.obj.Signature()
	f.sig = types.NewSignatureType(nil, nil, nil, tuple(sig.Params()), tuple(sig.Results()), sig.Variadic())
	f.info = info
}

// typeArgsOf returns the type arguments of the instantiation named by id
// (a call of a generic function), in f's instance.
func (f *fn) typeArgsOf(id *ast.Ident) ([]types.Type, *types.Signature) {
	in, ok := f.info.Instances[id]
	if !ok {
		return nil, nil
	}
	ts := make([]types.Type, in.TypeArgs.Len())
	for i := range ts {
		ts[i] = f.subst.typ(in.TypeArgs.At(i))
	}
	sig, _ := f.subst.typ(in.Type).(*types.Signature)
	return ts, sig
}

// typeSet lists the types a constraint allows, by their underlying
// types, when they are finitely many basic types; ok is false otherwise
// (any, comparable, a constraint with methods, or with other terms).
func typeSet(constraint types.Type) (ts []types.Type, ok bool) {
	iface, isIface := constraint.Underlying().(*types.Interface)
	if !isIface || iface.NumMethods() > 0 || iface.NumEmbeddeds() == 0 {
		return nil, false
	}
	for i := 0; i < iface.NumEmbeddeds(); i++ {
		terms, ok := termSet(iface.EmbeddedType(i), 0)
		if !ok {
			return nil, false
		}
		if i == 0 {
			ts = terms
			continue
		}
		var both []types.Type
		for _, t := range ts {
			for _, o := range terms {
				if types.Identical(t, o) {
					both = append(both, t)
					break
				}
			}
		}
		ts = both
	}
	return ts, len(ts) > 0
}

func termSet(t types.Type, depth int) ([]types.Type, bool) {
	if depth > 10 {
		return nil, false
	}
	switch u := t.(type) {
	case *types.Union:
		var ts []types.Type
		for i := 0; i < u.Len(); i++ {
			sub, ok := termSet(u.Term(i).Type(), depth+1)
			if !ok {
				return nil, false
			}
		next:
			for _, s := range sub {
				for _, have := range ts {
					if types.Identical(have, s) {
						continue next
					}
				}
				ts = append(ts, s)
			}
		}
		return ts, true
	}
	if _, isIface := t.Underlying().(*types.Interface); isIface {
		return typeSet(t)
	}
	if b, ok := t.Underlying().(*types.Basic); ok && b.Info()&(types.IsNumeric|types.IsBoolean) != 0 && b.Info()&types.IsComplex == 0 && b.Kind() != types.Uintptr {
		return []types.Type{b}, true
	}
	return nil, false
}

// kernelInstances returns the type argument lists a kernel is
// instantiated with: one empty list for a plain kernel.
func (u *unit) kernelInstances(src *funcSrc, obj *types.Func) ([][]types.Type, bool) {
	tps := obj.Signature().TypeParams()
	var dirs []directive
	for _, d := range u.prog.funcDirectives(src.decl) {
		if d.name == "instantiate" {
			u.used[d.pos] = true
			dirs = append(dirs, d)
		}
	}
	if tps == nil || tps.Len() == 0 {
		for _, d := range dirs {
			u.errorf(d.pos, "//gocu:instantiate applies to generic kernels, and %s has no type parameters", obj.Name())
		}
		return [][]types.Type{nil}, len(dirs) == 0
	}
	if len(dirs) > 0 {
		return u.listedInstances(src, obj, dirs)
	}
	per := make([][]types.Type, tps.Len())
	for i := range per {
		tp := tps.At(i)
		ts, ok := typeSet(tp.Constraint())
		if !ok {
			u.unsupported(tp.Obj().Pos(), fmt.Sprintf("the type parameter %s %s of a kernel", tp.Obj().Name(), types.TypeString(tp.Constraint(), types.RelativeTo(u.pkg.Types))),
				fmt.Sprintf("constrain it to number types, such as kernel.Float, kernel.Integer, kernel.Number or interface{ ~int32 | ~float32 }, whose every type gocu gen compiles; or name the instantiations: //gocu:instantiate %s[float32]", obj.Name()))
			return nil, false
		}
		per[i] = ts
	}
	insts := [][]types.Type{nil}
	for _, ts := range per {
		var next [][]types.Type
		for _, prefix := range insts {
			for _, t := range ts {
				next = append(next, append(append([]types.Type(nil), prefix...), t))
			}
		}
		insts = next
	}
	if len(insts) > maxInstances {
		u.unsupported(src.decl.Name.Pos(), fmt.Sprintf("a generic kernel with %d instantiations (every combination its constraints allow)", len(insts)),
			fmt.Sprintf("name the ones you launch, at most %d, such as //gocu:instantiate %s[%s]", maxInstances, obj.Name(), typeList(insts[0])))
		return nil, false
	}
	return insts, true
}

// listedInstances parses //gocu:instantiate K[float32] K[float64, int32].
func (u *unit) listedInstances(src *funcSrc, obj *types.Func, dirs []directive) ([][]types.Type, bool) {
	tps := obj.Signature().TypeParams()
	var insts [][]types.Type
	ok := true
	usage := fmt.Sprintf("such as //gocu:instantiate %s[float32] %s[float64]", obj.Name(), obj.Name())
	for _, d := range dirs {
		items := splitTop(strings.Join(d.args, " "))
		if len(items) == 0 {
			u.errorf(d.pos, "//gocu:instantiate names the instantiations of %s, %s", obj.Name(), usage)
			ok = false
		}
		for _, item := range items {
			e, err := parser.ParseExpr(item)
			var x ast.Expr
			var idx []ast.Expr
			switch e := e.(type) {
			case *ast.IndexExpr:
				x, idx = e.X, []ast.Expr{e.Index}
			case *ast.IndexListExpr:
				x, idx = e.X, e.Indices
			}
			id, isID := x.(*ast.Ident)
			if err != nil || !isID || id.Name != obj.Name() {
				u.errorf(d.pos, "//gocu:instantiate: %q is not an instantiation of %s, %s", item, obj.Name(), usage)
				ok = false
				continue
			}
			if len(idx) != tps.Len() {
				u.errorf(d.pos, "//gocu:instantiate: %s has %d type parameters, and %s gives %d", obj.Name(), tps.Len(), item, len(idx))
				ok = false
				continue
			}
			var targs []types.Type
			for _, ix := range idx {
				tv, err := types.Eval(u.prog.fset, src.pkg.Types, src.decl.Pos(), types.ExprString(ix))
				if err != nil || !tv.IsType() {
					u.errorf(d.pos, "//gocu:instantiate: %s in %s is not a type of package %s", types.ExprString(ix), item, src.pkg.Name)
					ok = false
					targs = nil
					break
				}
				targs = append(targs, tv.Type)
			}
			if targs == nil {
				continue
			}
			if _, err := types.Instantiate(u.prog.ctxt, obj.Type(), targs, true); err != nil {
				u.errorf(d.pos, "//gocu:instantiate: %s: %v", item, err)
				ok = false
				continue
			}
			for _, t := range targs {
				if b, isBasic := t.Underlying().(*types.Basic); !isBasic || b.Info()&(types.IsNumeric|types.IsBoolean) == 0 || b.Info()&types.IsComplex != 0 {
					u.unsupported(d.pos, "instantiating the kernel "+obj.Name()+" with "+types.TypeString(t, byName),
						"a generic kernel's type arguments are numbers or bools (its launcher picks the instance by their underlying type); pass other values as parameters of a plain kernel")
					ok = false
					targs = nil
					break
				}
			}
			if targs == nil {
				continue
			}
			// Instances are told apart by the underlying types of their
			// type arguments: K[Celsius] is K[float32] on the GPU.
			for i, t := range targs {
				targs[i] = t.Underlying()
			}
			dup := false
			for _, have := range insts {
				dup = dup || typeList(have) == typeList(targs)
			}
			if !dup {
				insts = append(insts, targs)
			}
		}
	}
	if len(insts) > maxInstances {
		u.errorf(dirs[0].pos, "//gocu:instantiate names %d instantiations of %s; at most %d are compiled", len(insts), obj.Name(), maxInstances)
		ok = false
	}
	return insts, ok && len(insts) > 0
}

// splitTop splits s at spaces outside brackets.
func splitTop(s string) []string {
	var out []string
	depth, start := 0, -1
	for i, r := range s {
		switch {
		case r == '[':
			depth++
		case r == ']':
			depth--
		case (r == ' ' || r == '\t') && depth == 0:
			if start >= 0 {
				out = append(out, s[start:i])
				start = -1
			}
			continue
		}
		if start < 0 {
			start = i
		}
	}
	if start >= 0 {
		out = append(out, s[start:])
	}
	return out
}

// instancesOf returns the kernels that are instances of the generic
// kernel obj, in module order.
func (u *unit) instancesOf(obj *types.Func) []*fn {
	var out []*fn
	for _, k := range u.kernels {
		if k.obj == obj {
			out = append(out, k)
		}
	}
	return out
}

// origins returns the distinct kernel functions, in source order.
func (u *unit) origins() []*fn {
	var out []*fn
	seen := map[*types.Func]bool{}
	for _, k := range u.kernels {
		if !seen[k.obj] {
			seen[k.obj] = true
			out = append(out, k)
		}
	}
	return out
}

var _ = token.NoPos
