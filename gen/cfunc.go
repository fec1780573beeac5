package gen

import (
	"fmt"
	"go/ast"
	"go/token"
	"go/types"
	"strings"
)

// fnCtx translates one function to C.
type fnCtx struct {
	u      *unit
	f      *fn
	info   *types.Info
	names  *names
	vars   map[types.Object]string
	shared map[types.Object]bool
	b      *strings.Builder
	ind    int
	pos    token.Pos
	eff    effects

	labels      *names // goto labels are function-wide in C
	targets     []*target
	results     []string // C names of named results
	resultTypes *types.Tuple
	kernelTop   bool // translating the top-level statements of a kernel

	cur ast.Stmt              // the statement being translated
	bad map[types.Object]bool // variables whose declaration was rejected
}

// target is a statement that break or continue can leave.
type target struct {
	stmt       ast.Stmt
	label      string
	loop       bool
	postInBody bool // continue must run the post statement placed in the body
	brk, cont  string
	brkUsed    bool
	contUsed   bool
}

func newFnCtx(u *unit, f *fn) *fnCtx {
	return &fnCtx{
		u:      u,
		f:      f,
		info:   u.info(f),
		names:  newNames(u.globals),
		labels: newNames(u.globals),
		vars:   map[types.Object]string{},
		shared: map[types.Object]bool{},
		bad:    map[types.Object]bool{},
		b:      &strings.Builder{},
	}
}

func (fc *fnCtx) line(format string, args ...any) {
	fc.b.WriteString(strings.Repeat("  ", fc.ind))
	fmt.Fprintf(fc.b, format, args...)
	fc.b.WriteByte('\n')
}

// bind gives a Go variable its C name.
func (fc *fnCtx) bind(obj types.Object) string {
	name := obj.Name()
	if name == "_" || name == "" {
		n := fc.names.takeInternal("gocu_p")
		if obj != nil {
			fc.vars[obj] = n
		}
		return n
	}
	n := fc.names.take(name)
	fc.vars[obj] = n
	return n
}

// translate writes the C definition of f.
func (u *unit) translate(f *fn) {
	fc := newFnCtx(u, f)
	sig := f.sig
	fd := f.src.decl
	fc.pos = fd.Pos()
	var params, prologue []string
	if recv := sig.Recv(); recv != nil {
		params = append(params, u.ctype(recv.Type(), recv.Pos())+" "+fc.bind(recv))
	}
	for i := 0; i < sig.Params().Len(); i++ {
		p := sig.Params().At(i)
		if i == 0 && f.thread != nil {
			continue
		}
		name := fc.bind(p)
		if st, ok := p.Type().Underlying().(*types.Slice); ok && f.kernel {
			et := u.ctype(st.Elem(), p.Pos())
			pn := fc.names.takeInternal(name + "_p")
			nn := fc.names.takeInternal(name + "_n")
			restrict := ""
			if f.noalias {
				restrict = " __restrict__"
			}
			params = append(params, et+"*"+restrict+" "+pn, "long long "+nn)
			prologue = append(prologue, fmt.Sprintf("gocu_slice<%s> %s = {%s, %s};", et, name, pn, nn))
			continue
		}
		params = append(params, u.ctype(p.Type(), p.Pos())+" "+name)
	}
	res := sig.Results()
	fc.resultTypes = res
	ret := "void"
	switch {
	case res.Len() == 1:
		ret = u.ctype(res.At(0).Type(), fd.Pos())
	case res.Len() > 1:
		ret = u.tupleFor(res, fd.Pos()).name
	}
	for i := 0; i < res.Len(); i++ {
		r := res.At(i)
		if r.Name() != "" {
			name := fc.bind(r)
			fc.results = append(fc.results, name)
			prologue = append(prologue, fmt.Sprintf("%s %s = %s;", u.ctype(r.Type(), r.Pos()), name, u.zero(r.Type(), r.Pos()).s))
		}
	}
	plist := strings.Join(params, ", ")
	if f.kernel {
		bounds := ""
		if f.maxThreads > 0 {
			bounds = fmt.Sprintf("__launch_bounds__(%d) ", f.maxThreads)
			if f.minBlocks > 0 {
				bounds = fmt.Sprintf("__launch_bounds__(%d, %d) ", f.maxThreads, f.minBlocks)
			}
		}
		fc.line("// %s (%s)", f.funcDisplayName(), u.srcPos(f, fd.Pos()))
		fc.line(`extern "C" __global__ void %s%s(%s) {`, bounds, f.cname, plist)
	} else {
		fc.line("// %s (%s)", f.funcDisplayName(), u.srcPos(f, fd.Pos()))
		fc.line("static __device__ __forceinline__ %s %s(%s) {", ret, f.cname, plist)
	}
	fc.ind++
	for _, p := range prologue {
		fc.line("%s", p)
	}
	fc.kernelTop = f.kernel
	fc.stmts(fd.Body.List)
	fc.ind--
	fc.line("}")
	f.code = fc.b.String()
	f.eff.or(fc.eff)
	for _, c := range f.callees {
		f.eff.or(c.eff)
	}
}

// push opens a C scope for names: sibling blocks may reuse a name, a
// nested one may not hide one it can see.
func (fc *fnCtx) push() { fc.names = newNames(fc.names) }

func (fc *fnCtx) pop() { fc.names = fc.names.parent }

// unsupported reports a construct outside the subset, unless the statement
// uses a variable whose declaration was already rejected (one problem,
// one message).
func (fc *fnCtx) unsupported(pos token.Pos, construct, instead string) {
	if fc.cur != nil && len(fc.bad) > 0 {
		quiet := false
		ast.Inspect(fc.cur, func(n ast.Node) bool {
			if id, ok := n.(*ast.Ident); ok && fc.bad[fc.info.Uses[id]] {
				quiet = true
			}
			return !quiet
		})
		if quiet {
			return
		}
	}
	fc.u.unsupported(pos, construct, instead)
}

// reject marks the variables a rejected declaration declares.
func (fc *fnCtx) reject(objs ...types.Object) {
	for _, o := range objs {
		if o != nil {
			fc.bad[o] = true
		}
	}
}
