package gen

import (
	"fmt"
	"go/ast"
	"go/token"
	"go/types"
	"sort"
	"strings"

	"github.com/gocu-dev/gocu/kernel"
	"golang.org/x/tools/go/packages"
	"golang.org/x/tools/go/types/typeutil"
)

// unit translates the kernels of one Go package, with every function they
// reach, into one CUDA source and one generated Go file.
type unit struct {
	prog    *program
	pkg     *packages.Package
	diags   []Diagnostic
	globals *names

	fns     map[fnKey]*fn
	byObj   map[*types.Func]*fn // the first instance of each function
	kernels []*fn
	order   []*fn // device functions, callees first

	structs     map[*types.Named]*cstruct
	structOrder []*cstruct
	tuples      map[string]*tuple
	tupleOrder  []*tuple

	sites  []*site
	siteOf map[ast.Node]int

	hugeArrays map[string]bool // array types reported as too long

	tables     map[*types.Var]*table // package-level arrays read: nil if rejected
	tableOrder []*table

	kernelObjs map[*types.Func]bool // the kernel functions (generic ones once)
	visiting   map[*types.Func]int  // instances of a function being reached

	dynShared bool
	tensor    bool // uses low-precision types or tensor cores: emit tensorHeader
	wgmma     bool // uses warpgroup MMAs: emit wgmmaHeader, align dynamic shared memory to 1024, ask for sm_90a
	named     bool // uses named barriers or SetMaxNReg: emit namedHeader
	mbar      bool // uses memory barriers or bulk copies: emit mbarHeader
	bulk      int8 // usesBulk's answer, once known: 1 no, 2 yes
	sinkBytes int
	imp       *imports
	used      map[token.Pos]bool // directives consumed
}

// fn is a kernel or a device function.
type fn struct {
	src    *funcSrc
	obj    *types.Func // the function; for an instance, the generic one
	kernel bool
	// An instance of a generic function: its type arguments, the
	// substitution, its signature and the type information of its body
	// with the type arguments in place (generic.go). For any other
	// function sig and info are its own and subst is nil.
	targs []types.Type
	subst *subster
	sig   *types.Signature
	info  *types.Info
	// bad marks a function whose signature or body was rejected: it is not
	// translated, and calls of it are not reported again.
	bad bool
	// quiet marks a function whose signature was rejected: it is
	// translated, but calls of it are not reported again.
	quiet  bool
	cname  string
	thread *types.Var // the *kernel.Thread parameter, nil if none

	callees []*fn
	eff     effects

	sharedBytes           int
	dynShared             bool
	noalias               bool
	maxThreads, minBlocks int

	code     string // CUDA C++
	twin     string // Go
	twinName string

	visiting, reached bool
}

// effects says what running a function may do beyond computing its result.
type effects struct {
	barrier bool // SyncThreads and variants
	warp    bool // shuffles, votes, SyncWarp
	atomic  bool
	writes  bool // stores to global or shared memory (atomics included)
	reads   bool // loads from global or shared memory
	shared  bool // static or dynamic shared memory
	sm90a   bool // warpgroup MMAs (wgmma), which only sm_90a has
	// fmtPrint: prints with package fmt, which the simulator orders only
	// through the twin (meta.Kernel.Prints).
	fmtPrint bool
}

func (e *effects) or(o effects) {
	e.barrier = e.barrier || o.barrier
	e.warp = e.warp || o.warp
	e.atomic = e.atomic || o.atomic
	e.writes = e.writes || o.writes
	e.reads = e.reads || o.reads
	e.shared = e.shared || o.shared
	e.sm90a = e.sm90a || o.sm90a
	e.fmtPrint = e.fmtPrint || o.fmtPrint
}

// site is a source position that a checked access or a debug-mode check
// reports.
type site struct {
	file string // base name, or import path/base name for another package
	line int
	col  int
	expr string
}

func newUnit(p *program, pkg *packages.Package) *unit {
	return &unit{
		prog:    p,
		pkg:     pkg,
		globals: newNames(nil),
		fns:     map[fnKey]*fn{},
		byObj:   map[*types.Func]*fn{},
		structs: map[*types.Named]*cstruct{},
		tuples:  map[string]*tuple{},
		siteOf:  map[ast.Node]int{},

		hugeArrays: map[string]bool{},
		kernelObjs: map[*types.Func]bool{},
		tables:     map[*types.Var]*table{},
		visiting:   map[*types.Func]int{},
		used:       map[token.Pos]bool{},
	}
}

func (u *unit) errorf(pos token.Pos, format string, args ...any) {
	u.diags = append(u.diags, Diagnostic{Pos: u.prog.position(pos), Msg: fmt.Sprintf(format, args...)})
}

// unsupported reports a construct outside the kernel subset, in the form
// every such message takes.
func (u *unit) unsupported(pos token.Pos, construct, instead string) {
	u.errorf(pos, "%s is not supported in a kernel: %s", construct, instead)
}

func (u *unit) info(f *fn) *types.Info { return f.info }

// newFn makes the function (or instance) obj[targs] of source src.
func (u *unit) newFn(src *funcSrc, obj *types.Func, targs []types.Type, kernel bool) *fn {
	f := &fn{src: src, obj: obj.Origin(), kernel: kernel}
	u.instantiate(f, targs)
	u.fns[keyOf(f.obj, targs)] = f
	if u.byObj[f.obj] == nil {
		u.byObj[f.obj] = f
	}
	return f
}

// run translates the kernels and returns the package's output. It goes
// as far as it can after a problem, so that one run reports every problem
// of the package: a function whose signature or body was rejected is
// marked bad and left out of what follows, and calls of it are not
// reported again.
func (u *unit) run(kernels []*funcSrc) *Package {
	for _, k := range kernels {
		obj, _ := k.pkg.TypesInfo.Defs[k.decl.Name].(*types.Func)
		if obj == nil {
			continue
		}
		u.kernelObjs[obj] = true
		insts, ok := u.kernelInstances(k, obj)
		if !ok && len(insts) == 0 {
			// The kernel is still checked, as its generic self, for
			// problems in its body that every instance would have.
			f := &fn{src: k, obj: obj, kernel: true, sig: obj.Signature(), info: k.pkg.TypesInfo, bad: true}
			u.checkKernel(f)
			u.reach(f)
			continue
		}
		for _, targs := range insts {
			f := u.newFn(k, obj, targs, true)
			u.kernels = append(u.kernels, f)
		}
	}
	for _, k := range u.kernels {
		u.checkKernel(k)
	}
	for _, k := range u.kernels {
		u.reach(k)
	}
	u.checkTypeErrors()
	// Global C names: kernels keep their Go names, then types, then device
	// functions.
	for _, k := range u.kernels {
		name := k.obj.Name()
		if len(k.targs) > 0 {
			name += instanceSuffix(k.targs)
		}
		k.cname = u.globals.take(name)
	}
	for _, f := range append(append([]*fn(nil), u.order...), u.kernels...) {
		u.noteTypes(f) // of rejected functions too, for checkStructs
	}
	u.nameStructs()
	u.checkStructs()
	for _, f := range u.order {
		f.cname = u.globals.take(u.deviceName(f))
	}
	u.collectTables()
	clean := map[*fn]bool{}
	for _, f := range append(append([]*fn(nil), u.order...), u.kernels...) {
		if f.bad {
			continue
		}
		before := len(u.diags)
		u.translate(f)
		clean[f] = len(u.diags) == before
	}
	u.unusedLoopDirectives()
	// The checked twins, one per function (an instance's is the generic
	// function's), of the functions that translated cleanly: a rejected
	// construct would only be reported again.
	twinned := map[*types.Func]bool{}
	for _, f := range append(append([]*fn(nil), u.order...), u.kernels...) {
		if clean[f] && !twinned[f.obj] {
			twinned[f.obj] = true
			u.twin(f)
		}
	}
	u.checkLauncherNames()
	if len(u.diags) > 0 {
		return nil
	}
	src := u.cudaSource()
	goSrc := u.goFile(src)
	if len(u.diags) > 0 {
		return nil
	}
	out := &Package{Path: u.pkg.PkgPath, Name: u.pkg.Name, CUDA: src, Go: goSrc}
	for _, k := range u.kernels {
		out.Kernels = append(out.Kernels, k.displayName())
		out.Meta = append(out.Meta, u.kernelMeta(k))
	}
	for _, s := range u.sites {
		out.Sites = append(out.Sites, kernel.Site{File: s.file, Line: int32(s.line), Col: int32(s.col), Expr: s.expr})
	}
	return out
}

// deviceName is the C name wanted for a device function: package_Name,
// or package_Type_Method for a method. The package prefix keeps Go names
// such as normcdf or y0 clear of CUDA's math library.
func (u *unit) deviceName(f *fn) string {
	name := f.obj.Name()
	if n := recvNamed(f.obj); n != nil {
		name = n.Obj().Name() + "_" + name
	}
	return f.obj.Pkg().Name() + "_" + name + instanceSuffix(f.targs)
}

// recvNamed returns the named type of a method's receiver (T or *T).
func recvNamed(f *types.Func) *types.Named {
	recv := f.Signature().Recv()
	if recv == nil {
		return nil
	}
	t := types.Unalias(recv.Type())
	if p, ok := t.(*types.Pointer); ok {
		t = types.Unalias(p.Elem())
	}
	n, _ := t.(*types.Named)
	return n
}

// twinName is the Go name of a device function's checked copy.
func (u *unit) twinDeviceName(f *fn) string {
	name := f.obj.Name()
	if n := recvNamed(f.obj); n != nil {
		name = n.Obj().Name() + "_" + name
	}
	if f.obj.Pkg() != u.pkg.Types {
		name = f.obj.Pkg().Name() + "_" + name
	}
	return name
}

func isThreadPtr(t types.Type) bool {
	p, ok := types.Unalias(t).(*types.Pointer)
	if !ok {
		return false
	}
	n, ok := types.Unalias(p.Elem()).(*types.Named)
	return ok && n.Obj().Pkg() != nil && n.Obj().Pkg().Path() == kernelPath && n.Obj().Name() == "Thread"
}

// checkKernel checks a kernel's signature and directives.
func (u *unit) checkKernel(k *fn) {
	fd := k.src.decl
	sig := k.sig
	before := len(u.diags)
	switch {
	case fd.Recv != nil:
		u.unsupported(fd.Name.Pos(), "a method as a kernel", "make the kernel a plain function")
		k.bad = true
		return
	case sig.Results().Len() > 0:
		u.unsupported(fd.Type.Results.Pos(), "a kernel with results", "write results into a slice parameter")
	case sig.Variadic():
		u.unsupported(fd.Name.Pos(), "a variadic kernel", "pass a slice")
	}
	if sig.Params().Len() == 0 || !isThreadPtr(sig.Params().At(0).Type()) {
		u.errorf(fd.Name.Pos(), "kernel %s must take a *kernel.Thread as its first parameter", fd.Name.Name)
		k.bad = true
		return
	}
	k.thread = sig.Params().At(0)
	for i := 1; i < sig.Params().Len(); i++ {
		p := sig.Params().At(i)
		u.checkParamType(p.Pos(), p.Type(), true)
	}
	if len(u.diags) > before {
		k.bad = true
	}
	for _, d := range u.prog.funcDirectives(fd) {
		u.used[d.pos] = true
		switch d.name {
		case "instantiate":
			// kernelInstances
		case "kernel":
			if len(d.args) > 0 {
				u.errorf(d.pos, "//gocu:kernel takes no arguments")
			}
		case "noalias":
			k.noalias = true
		case "launch_bounds":
			if len(d.args) < 1 || len(d.args) > 2 {
				u.errorf(d.pos, "//gocu:launch_bounds takes the maximum threads per block and optionally the minimum blocks per multiprocessor, such as //gocu:launch_bounds 256 2")
				continue
			}
			n, ok := parseDirectiveInt(d.args[0])
			if !ok || n > 1024 {
				u.errorf(d.pos, "//gocu:launch_bounds: %q is not a thread count from 1 to 1024", d.args[0])
				continue
			}
			k.maxThreads = n
			if len(d.args) == 2 {
				m, ok := parseDirectiveInt(d.args[1])
				if !ok {
					u.errorf(d.pos, "//gocu:launch_bounds: %q is not a positive block count", d.args[1])
					continue
				}
				k.minBlocks = m
			}
		default:
			u.errorf(d.pos, "unknown directive //gocu:%s before a kernel (known: kernel, noalias, launch_bounds, instantiate)", d.name)
		}
	}
}

// checkParamType checks the type of a kernel or device-function parameter.
func (u *unit) checkParamType(pos token.Pos, t types.Type, kernel bool) {
	if p, ok := types.Unalias(t).(*types.Pointer); ok {
		if _, isArr := p.Elem().Underlying().(*types.Array); isArr && !kernel {
			return // a shared array passed to a device function
		}
		u.unsupported(pos, "a pointer parameter", "pass a slice (or, to a device function, a pointer to a shared array)")
		return
	}
	if isThreadPtr(t) {
		return
	}
	if !u.checkValueType(pos, t) {
		return
	}
	if _, isSlice := t.Underlying().(*types.Slice); kernel && !isSlice && holdsSlice(t, 0) {
		// The launcher copies a kernel argument's bytes to the GPU: a slice
		// inside one would carry a Go heap pointer there.
		u.unsupported(pos, "a struct or array holding a slice as a kernel parameter ("+types.TypeString(t, byName)+")",
			"pass each slice as a parameter of its own")
	}
}

// holdsSlice reports whether a value of type t contains a slice.
func holdsSlice(t types.Type, depth int) bool {
	if depth > 20 {
		return false
	}
	switch t := t.Underlying().(type) {
	case *types.Slice:
		return true
	case *types.Array:
		return holdsSlice(t.Elem(), depth+1)
	case *types.Struct:
		for i := 0; i < t.NumFields(); i++ {
			if holdsSlice(t.Field(i).Type(), depth+1) {
				return true
			}
		}
	}
	return false
}

// checkValueType reports types a kernel cannot hold in a variable.
func (u *unit) checkValueType(pos token.Pos, t types.Type) bool {
	var bad string
	var instead string
	var walk func(t types.Type, depth int) bool
	walk = func(t types.Type, depth int) bool {
		if depth > 20 {
			return true
		}
		switch t := types.Unalias(t).(type) {
		case *types.Basic:
			switch {
			case t.Info()&types.IsString != 0:
				bad, instead = "a string", "pass bytes as a []uint8"
			case t.Info()&types.IsComplex != 0:
				bad, instead = "a complex number", "use pairs of floats (kernel.Float2)"
			case t.Kind() == types.Uintptr || t.Kind() == types.UnsafePointer:
				bad, instead = "uintptr and unsafe.Pointer", "use integer types and slices"
			default:
				return true
			}
			return false
		case *types.Named:
			if t.TypeArgs().Len() > 0 {
				bad, instead = "a generic type", "declare a non-generic type"
				return false
			}
			if t.Obj().Pkg() != nil && t.Obj().Pkg().Path() == kernelPath {
				if _, ok := vectorTypes[t.Obj().Name()]; ok || t.Obj().Name() == "Dim3" || tensorTypes[t.Obj().Name()] != "" || fragTypes[t.Obj().Name()] {
					return true
				}
				bad, instead = "kernel."+t.Obj().Name()+" as a value", "use it only as the kernel package documents"
				return false
			}
			return walk(t.Underlying(), depth+1)
		case *types.Slice:
			if _, ok := t.Elem().Underlying().(*types.Slice); ok {
				bad, instead = "a slice of slices", "use one flat slice and compute the index"
				return false
			}
			return walk(t.Elem(), depth+1)
		case *types.Array:
			if t.Len() == 0 {
				bad, instead = "a zero-length array", "give the array at least one element"
				return false
			}
			return walk(t.Elem(), depth+1)
		case *types.Struct:
			for i := 0; i < t.NumFields(); i++ {
				if !walk(t.Field(i).Type(), depth+1) {
					return false
				}
			}
			return true
		case *types.Pointer:
			switch t.Elem().Underlying().(type) {
			case *types.Array, *types.Struct:
				// A shared array or struct from kernel.Shared, or a
				// pointer receiver: the address of a variable.
				return walk(t.Elem(), depth+1)
			}
			bad, instead = "a pointer", "use a slice, or the address &s[i] only as an atomic's argument"
		case *types.Map:
			bad, instead = "a map", "use a slice or a fixed-size array indexed by an integer key"
		case *types.Chan:
			bad, instead = "a channel", "communicate through shared memory and SyncThreads"
		case *types.Interface:
			bad, instead = "an interface", "use concrete types"
		case *types.Signature:
			bad, instead = "a function value", "call the function directly"
		case *types.Tuple:
			return true
		case *types.TypeParam:
			return true // checked in each instance
		default:
			bad, instead = fmt.Sprintf("type %s", t), "use numbers, slices, arrays and structs of them"
		}
		return false
	}
	if !walk(t, 0) {
		u.unsupported(pos, bad, instead)
		return false
	}
	return true
}

// reach finds the functions f calls, depth first, rejecting recursion, and
// appends them to u.order callees first.
func (u *unit) reach(f *fn) {
	if f.reached {
		return
	}
	f.reached = true
	f.visiting = true
	u.visiting[f.obj]++
	defer func() {
		f.visiting = false
		u.visiting[f.obj]--
	}()
	info := u.info(f)
	seen := map[*fn]bool{}
	ast.Inspect(f.src.decl.Body, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.FuncLit:
			return false // rejected during translation
		case *ast.CallExpr:
			callee, ok := typeutil.Callee(info, n).(*types.Func)
			if !ok || callee.Pkg() == nil {
				return true
			}
			switch callee.Pkg().Path() {
			case kernelPath, "math", "math/bits", lowpPath, "fmt":
				return true // translated where called (fmt: its print functions)
			}
			if isInterfaceMethod(callee) {
				return true // rejected during translation
			}
			if u.kernelObjs[callee.Origin()] {
				u.unsupported(n.Pos(), "calling a kernel from a kernel", "move the shared code into a function both call")
				return true
			}
			var targs []types.Type
			if id := calleeIdent(n.Fun); id != nil {
				targs, _ = f.typeArgsOf(id)
			}
			g := u.fns[keyOf(callee, targs)]
			if g == nil {
				src := u.prog.source(callee)
				if src == nil || src.decl.Body == nil {
					// A function from another package: standard library,
					// assembly, or not loaded from source.
					if !u.quietCall(callee) {
						u.unsupported(n.Pos(), "calling "+funcDisplayName(callee), "kernels can call Go functions with bodies in your module, and the kernel, math and math/bits packages")
					}
					return true
				}
				if u.visiting[callee.Origin()] > 0 {
					u.unsupported(n.Pos(), "recursion ("+funcDisplayName(callee)+" calls itself, directly or through other functions)", "rewrite it as a loop; GPU threads have tiny stacks")
					return true
				}
				g = u.newFn(src, callee, targs, false)
				if !u.checkDevice(g, n.Pos()) {
					g.quiet = true
				}
			}
			if g.visiting {
				u.unsupported(n.Pos(), "recursion ("+funcDisplayName(callee)+" calls itself, directly or through other functions)", "rewrite it as a loop; GPU threads have tiny stacks")
				return true
			}
			if !seen[g] {
				seen[g] = true
				f.callees = append(f.callees, g)
			}
			if !g.reached {
				u.reach(g)
				u.order = append(u.order, g)
			}
		}
		return true
	})
}

// quietCall reports whether a call of f needs no message: f's own
// problems were reported already.
func (u *unit) quietCall(f *types.Func) bool {
	for k, g := range u.fns {
		if k.obj == f.Origin() && (g.bad || g.quiet) {
			return true
		}
	}
	return false
}

func isInterfaceMethod(f *types.Func) bool {
	recv := f.Signature().Recv()
	return recv != nil && types.IsInterface(recv.Type())
}

func funcDisplayName(f *types.Func) string {
	name := f.Name()
	if recv := f.Signature().Recv(); recv != nil {
		t := recv.Type()
		if p, ok := t.(*types.Pointer); ok {
			t = p.Elem()
		}
		if n, ok := types.Unalias(t).(*types.Named); ok {
			name = n.Obj().Name() + "." + name
		}
	}
	if f.Pkg() != nil {
		name = f.Pkg().Name() + "." + name
	}
	return name
}

// checkDevice checks the signature of a device function.
func (u *unit) checkDevice(g *fn, callPos token.Pos) bool {
	fd := g.src.decl
	sig := g.sig
	ok := true
	if recv := g.obj.Signature().Recv(); recv != nil {
		if g.obj.Signature().RecvTypeParams().Len() > 0 {
			u.unsupported(callPos, "calling a method of the generic type "+types.TypeString(recv.Type(), byName), "declare a non-generic type, or write a generic function that takes the value")
			g.bad = true
			return false
		}
		if p, isPtr := types.Unalias(recv.Type()).(*types.Pointer); isPtr {
			switch p.Elem().Underlying().(type) {
			case *types.Struct, *types.Array:
				ok = u.checkValueType(fd.Recv.Pos(), p.Elem()) && ok
			default:
				u.unsupported(callPos, "calling the pointer-receiver method "+funcDisplayName(g.obj)+" of a "+types.TypeString(p.Elem().Underlying(), byName),
					"pointer receivers are supported on struct and array types; use a value receiver and return the new value")
				g.bad = true
				return false
			}
		} else {
			ok = u.checkValueType(fd.Recv.Pos(), recv.Type()) && ok
		}
	}
	if sig.Variadic() {
		u.unsupported(fd.Name.Pos(), "a variadic function", "pass a slice or a fixed number of arguments")
		ok = false
	}
	for i := 0; i < sig.Params().Len(); i++ {
		p := sig.Params().At(i)
		if isThreadPtr(p.Type()) {
			if i != 0 {
				u.errorf(p.Pos(), "a *kernel.Thread parameter must come first")
				ok = false
			} else {
				g.thread = p
			}
			continue
		}
		before := len(u.diags)
		u.checkParamType(p.Pos(), p.Type(), false)
		ok = ok && len(u.diags) == before
	}
	for i := 0; i < sig.Results().Len(); i++ {
		r := sig.Results().At(i)
		pos := r.Pos()
		if !pos.IsValid() {
			pos = fd.Type.Results.Pos()
		}
		ok = u.checkValueType(pos, r.Type()) && ok
	}
	for _, d := range u.prog.funcDirectives(fd) {
		u.used[d.pos] = true
		u.errorf(d.pos, "//gocu:%s applies to kernels only, and %s is not marked //gocu:kernel", d.name, fd.Name.Name)
		ok = false
	}
	return ok
}

// checkTypeErrors reports the package's type errors that fall inside
// translated functions.
func (u *unit) checkTypeErrors() {
	for _, e := range u.prog.typeErrors {
		pos := parsePos(e.Pos)
		reported := false
		for _, f := range u.fns {
			start := u.prog.fset.Position(f.src.decl.Pos())
			end := u.prog.fset.Position(f.src.decl.End())
			if start.Filename == pos.Filename && pos.Line >= start.Line && pos.Line <= end.Line {
				f.bad = true // its types are incomplete: not translated
				if !reported {
					reported = true
					u.diags = append(u.diags, Diagnostic{Pos: token.Position{Filename: relPath(u.prog.dir, pos.Filename), Line: pos.Line, Column: pos.Column}, Msg: e.Msg})
				}
			}
		}
	}
}

// unusedLoopDirectives reports //gocu: comments inside translated functions
// that no statement consumed.
func (u *unit) unusedLoopDirectives() {
	var all []directive
	for _, f := range u.fns {
		dirs := u.prog.directives(f.src.file)
		start := u.prog.fset.Position(f.src.decl.Body.Pos()).Line
		end := u.prog.fset.Position(f.src.decl.Body.End()).Line
		for line, d := range dirs {
			if line > start && line < end && !u.used[d.pos] {
				all = append(all, d)
			}
		}
	}
	sort.Slice(all, func(i, j int) bool { return all[i].pos < all[j].pos })
	for _, d := range all {
		if d.name == "unroll" {
			u.errorf(d.pos, "//gocu:unroll must be on the line just before a for statement")
		} else {
			u.errorf(d.pos, "unknown directive //gocu:%s in a function body (known: unroll)", d.name)
		}
	}
}

// site returns the id of the site of node, creating it on first use.
func (u *unit) site(node ast.Node, f *fn) int {
	if id, ok := u.siteOf[node]; ok {
		return id
	}
	pos := u.prog.fset.Position(node.Pos())
	file := baseName(pos.Filename)
	if f.src.pkg != u.pkg {
		file = f.src.pkg.PkgPath + "/" + file
	}
	u.sites = append(u.sites, &site{file: file, line: pos.Line, col: pos.Column, expr: u.nodeText(node)})
	id := len(u.sites) - 1
	u.siteOf[node] = id
	return id
}

// srcPos shows a position in generated code: file:line, the file named
// as in the site table, so that the output does not depend on where gocu
// gen runs.
func (u *unit) srcPos(f *fn, pos token.Pos) string {
	p := u.prog.fset.Position(pos)
	file := baseName(p.Filename)
	if f.src.pkg != u.pkg {
		file = f.src.pkg.PkgPath + "/" + file
	}
	return fmt.Sprintf("%s:%d", file, p.Line)
}

func baseName(path string) string {
	if i := strings.LastIndexAny(path, `/\`); i >= 0 {
		return path[i+1:]
	}
	return path
}
