package array

import (
	"runtime"
	"slices"

	"github.com/gocu-dev/gocu/array/internal/backend"
)

// Fusion. Elementwise operations build an expression DAG instead of
// computing; evaluation turns the DAG into one backend.Program (one
// generated kernel on a GPU, one blocked pass on the CPU). The DAG is
// bounded: when an operation would make it larger than maxExprNodes, its
// lazy operands are evaluated first.
const maxExprNodes = 48

type expr struct {
	op    backend.Op
	dt    DType
	shape []int
	args  []*expr
	st    *storage       // OpInput
	lay   backend.Layout // OpInput: the operand's own layout
	sc    backend.Scalar // OpScalar
	nodes int            // nodes in the tree, counting shared ones again
	iota  bool           // reads OpIota, so its values depend on its shape
}

func leafExpr(s snap, dt DType) *expr {
	return &expr{op: backend.OpInput, dt: dt, shape: s.lay.Shape, st: s.st, lay: s.lay, nodes: 1}
}

func scalarExpr(v backend.Scalar) *expr {
	return &expr{op: backend.OpScalar, dt: v.DType, sc: v, nodes: 1}
}

func node(op backend.Op, dt DType, shape []int, args ...*expr) *expr {
	e := &expr{op: op, dt: dt, shape: shape, args: args, nodes: 1}
	for _, a := range args {
		e.nodes += a.nodes
		e.iota = e.iota || a.iota
	}
	return e
}

func castExpr(e *expr, dt DType) *expr {
	if e.dt == dt {
		return e
	}
	if e.op == backend.OpScalar {
		return scalarExpr(convertScalar(e.sc, dt))
	}
	if via := castVia(e.dt, dt); via.Valid() {
		return castExpr(castExpr(e, via), dt)
	}
	return node(backend.OpCast, dt, e.shape, e)
}

// convertScalar casts a scalar parameter as a backend would.
func convertScalar(s backend.Scalar, dt DType) backend.Scalar {
	if s.DType.IsFloating() {
		return scalar{kind: weakFloat, f: s.F}.as(dt)
	}
	if s.DType == Bool {
		return scalar{kind: weakBool, b: s.I != 0}.as(dt)
	}
	return scalar{kind: weakInt, i: s.I}.as(dt)
}

// exprOf returns the expression for array a: its pending expression or a
// leaf reading its storage. A pending expression is inlined into the first
// operation that uses it; a second use evaluates it (once) and reads the
// result, so an expression shared by several consumers is not recomputed
// by each. The caller keeps a alive until the result is owned by a new
// array (lazy takes the references).
func (a *Array) exprOf(op string) (*expr, error) {
	s, err := a.use(op)
	if err != nil {
		return nil, err
	}
	if s.ex != nil && a.uses.Add(1) > 1 && s.ex.op != backend.OpScalar {
		s, err = a.force(op)
		if err != nil {
			return nil, err
		}
	}
	if s.ex != nil {
		return s.ex, nil
	}
	return leafExpr(s, a.dt), nil
}

// leaves lists the distinct storages an expression reads.
func (e *expr) leaves() []*storage {
	// Expressions are small (maxExprNodes): linear sets beat maps.
	w := leafWalk{seen: make([]*expr, 0, min(e.nodes, maxExprNodes+8))}
	w.visit(e)
	return w.out
}

type leafWalk struct {
	seen []*expr
	out  []*storage
}

func (w *leafWalk) visit(e *expr) {
	if slices.Contains(w.seen, e) {
		return
	}
	w.seen = append(w.seen, e)
	if e.op == backend.OpInput && !slices.Contains(w.out, e.st) {
		if w.out == nil {
			w.out = make([]*storage, 0, 4)
		}
		w.out = append(w.out, e.st)
	}
	for _, x := range e.args {
		w.visit(x)
	}
}

// lazy makes a pending array for e, taking references to every storage it
// reads and registering it with them for in-place writes.
func (d *Maker) lazy(e *expr) *Array {
	sts := e.leaves()
	for _, s := range sts {
		s.retain()
	}
	a := track(&Array{dev: d, dt: e.dt, shape: e.shape, ex: e}, sts)
	for _, s := range sts {
		s.addDep(a)
	}
	return a
}

// operandExprs returns the expressions of array operands for a new node of
// the given shape, evaluating operands first where the DAG would grow past
// maxExprNodes, or where an operand's values depend on its own shape (it
// reads OpIota) and it would be broadcast.
func operandExprs(op string, shape []int, arrs ...*Array) ([]*expr, error) {
	es := make([]*expr, len(arrs))
	total := 1
	for i, a := range arrs {
		if j := slices.Index(arrs[:i], a); j >= 0 {
			es[i] = es[j] // the same array twice in one operation is one use
			continue
		}
		e, err := a.exprOf(op)
		if err != nil {
			return nil, err
		}
		es[i] = e
		total += e.nodes
	}
	for i, a := range arrs {
		e := es[i]
		if j := slices.Index(arrs[:i], a); j >= 0 {
			es[i] = es[j]
			continue
		}
		if e.op == backend.OpInput || (total <= maxExprNodes && !(e.iota && !sameShape(e.shape, shape))) {
			continue
		}
		s, err := a.force(op)
		if err != nil {
			return nil, err
		}
		total -= e.nodes - 1
		es[i] = leafExpr(s, a.dt)
	}
	return es, nil
}

func sameShape(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// program turns an expression into a backend program over shape: nodes in
// depth-first order (so equal structures give equal keys), identical
// leaves merged, every input's layout broadcast to shape.
func program(root *expr, shape []int) *backend.Program {
	n := min(root.nodes, maxExprNodes+8)
	p := &backend.Program{Shape: shape, Nodes: make([]backend.Node, 0, n)}
	b := progBuild{p: p, shape: shape, done: make([]*expr, 0, n)}
	b.visit(root)
	return p
}

// progBuild is program's walk: done[i] produced node i, leaves[j] input j
// (linear sets: expressions are small).
type progBuild struct {
	p      *backend.Program
	shape  []int
	done   []*expr
	leaves []*expr
}

func (b *progBuild) visit(e *expr) int32 {
	if i := slices.Index(b.done, e); i >= 0 {
		return int32(i)
	}
	p := b.p
	n := backend.Node{Op: e.op, DType: e.dt}
	switch e.op {
	case backend.OpInput:
		idx := slices.IndexFunc(b.leaves, func(l *expr) bool {
			return l.st == e.st && l.lay.Offset == e.lay.Offset && slices.Equal(l.lay.Shape, e.lay.Shape) && slices.Equal(l.lay.Strides, e.lay.Strides)
		})
		if idx < 0 {
			idx = len(b.leaves)
			b.leaves = append(b.leaves, e)
			lay := e.lay
			if !sameShape(lay.Shape, b.shape) {
				lay = lay.BroadcastTo(b.shape)
			}
			p.Inputs = append(p.Inputs, backend.Operand{Buf: e.st.buf, Layout: lay})
		}
		n.Args[0] = int32(idx)
	case backend.OpScalar:
		n.Args[0] = int32(len(p.Scalars))
		p.Scalars = append(p.Scalars, e.sc)
	case backend.OpIota:
	default:
		for i, a := range e.args {
			n.Args[i] = b.visit(a)
		}
	}
	p.Nodes = append(p.Nodes, n)
	b.done = append(b.done, e)
	return int32(len(p.Nodes) - 1)
}

// evalInto evaluates e (of the given shape) into out, after collapsing
// the dimensions that are contiguous in every operand.
func (d *Maker) evalInto(e *expr, shape []int, out backend.Operand) error {
	p := program(e, shape)
	collapse(p, &out)
	err := d.be.Eval(p, out)
	runtime.KeepAlive(e)
	return err
}

// collapse lowers the rank of a program and its output together. The
// common case, every operand C-contiguous or constant, becomes rank 1
// with shared shape and stride slices (layouts are never modified in
// place) without going through backend.Collapse.
func collapse(p *backend.Program, out *backend.Operand) {
	if backend.Size(p.Shape) == 1 && len(p.Shape) == 0 {
		return
	}
	if n := backend.Size(p.Shape); n > 0 && out.Layout.IsContiguous() {
		simple := true
		for _, in := range p.Inputs {
			if !in.Layout.IsContiguous() && !in.Layout.IsConstant() {
				simple = false
				break
			}
		}
		if simple {
			shape, one, zero := []int{n}, unitStride, zeroStride
			if n == 1 {
				shape, one, zero = nil, nil, nil
			}
			for i := range p.Inputs {
				l := &p.Inputs[i].Layout
				st := one
				if l.IsConstant() && n > 1 {
					st = zero
				}
				*l = backend.Layout{Shape: shape, Strides: st, Offset: l.Offset}
			}
			out.Layout = backend.Layout{Shape: shape, Strides: one, Offset: out.Layout.Offset}
			p.Shape = shape
			return
		}
	}
	ls := make([]backend.Layout, 0, len(p.Inputs)+1)
	for _, in := range p.Inputs {
		ls = append(ls, in.Layout)
	}
	ls = append(ls, out.Layout)
	cl := backend.Collapse(ls)
	for i := range p.Inputs {
		p.Inputs[i].Layout = cl[i]
	}
	out.Layout = cl[len(cl)-1]
	p.Shape = out.Layout.Shape
}

// Read-only stride slices shared by collapsed rank-1 layouts.
var (
	unitStride = []int{1}
	zeroStride = []int{0}
)

// readProgram returns a program that reads array a (its pending expression
// or its storage), with every leaf broadcast to a's shape.
func (a *Array) readProgram(op string) (*backend.Program, *expr, error) {
	e, err := a.exprOf(op)
	if err != nil {
		return nil, nil, err
	}
	return program(e, a.shape), e, nil
}
