package array

import (
	"runtime"
	"slices"
	"strings"
	"sync"

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
	iota  bool  // reads OpIota, so its values depend on its shape
	nargs uint8 // operands in argv (no operation has more than 3)
	// nodes counts the tree's nodes, shared ones again. An int32 fills
	// the padding: with it an Array takes the 352-byte size class, not
	// 384. Expressions are bounded (maxExprNodes) far below its range.
	nodes int32
	shape []int
	argv  [3]*expr
	st    *storage       // OpInput
	lay   backend.Layout // OpInput: the operand's own layout
	sc    backend.Scalar // OpScalar
}

// args returns the operands.
func (e *expr) args() []*expr { return e.argv[:e.nargs] }

func leafExpr(s snap, dt DType) *expr {
	return &expr{op: backend.OpInput, dt: dt, shape: s.lay.Shape, st: s.st, lay: s.lay, nodes: 1}
}

func scalarExpr(v backend.Scalar) *expr {
	return &expr{op: backend.OpScalar, dt: DType(v.DType), sc: v, nodes: 1}
}

func node(op backend.Op, dt DType, shape []int, args ...*expr) *expr {
	e := new(expr)
	e.init(op, dt, shape, args)
	return e
}

// init makes the zero e the node of op over args. It sets field by field:
// a struct assignment would copy all of e, through write barriers while
// the collector marks.
func (e *expr) init(op backend.Op, dt DType, shape []int, args []*expr) {
	if len(args) > len(e.argv) {
		panic("array: internal error: an expression node with more than 3 operands")
	}
	e.op, e.dt, e.shape, e.nodes = op, dt, shape, 1
	e.nargs = uint8(len(args))
	for i, a := range args {
		e.argv[i] = a // not copy: typedslicecopy is a call
		e.nodes += a.nodes
		e.iota = e.iota || a.iota
	}
}

func castExpr(e *expr, dt DType) *expr {
	if e.dt == dt {
		return e
	}
	if e.dt.IsComplex() || dt.IsComplex() {
		// Backends do not convert complex values: evaluation reports this
		// node (complex.go converts through the parts).
		return node(backend.OpCast, dt, e.shape, e)
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
	if s.DType == backend.Uint64 && s.I < 0 && !dt.IsInt() && dt != Bool {
		return scalar{kind: weakFloat, f: float64(uint64(s.I))}.as(dt) // above MaxInt64
	}
	if s.DType == backend.Bool {
		return scalar{kind: weakBool, b: s.I != 0}.as(dt)
	}
	return scalar{kind: weakInt, i: s.I}.as(dt)
}

// exprOf returns the expression for array a: its pending expression or a
// leaf reading its storage. A pending expression is inlined into the first
// operation that uses it. A second use evaluates it once and reads the
// result, so consumers that share an expression do not each recompute it.
// The caller keeps a alive until a new array owns the result; lazy takes
// the references.
//
// A pending expression's storages are pinned in pn. Another goroutine
// reading a may evaluate it meanwhile and drop a's references, perhaps
// the last ones. The caller releases the pins once it holds references of
// its own, or once its backend call was made.
func (a *Array) exprOf(op string, pn *pins) (*expr, error) {
	if a == nil || a.dev == nil && a.err == nil {
		return nil, nilArray(op, a)
	}
	if e := a.leaf.Load(); e != nil {
		return e, nil // materialised, open and not failed
	}
	a.mu.Lock()
	if err := a.err; err != nil {
		a.mu.Unlock()
		return nil, err
	}
	if a.closed {
		a.mu.Unlock()
		return nil, errorf(op, ErrClosed, "use of closed array")
	}
	if ex := a.ex; ex != nil {
		if a.uses.Add(1) == 1 || ex.op == backend.OpScalar || a.shared {
			pn.add(a.held)
			if ex == &a.node {
				ex = pn.copyNode(ex) // not a pointer into a (copied under a.mu)
			}
			a.mu.Unlock()
			return ex, nil
		}
		a.mu.Unlock()
		s, err := a.force(op)
		if err != nil {
			return nil, err
		}
		a.mu.Lock()
		if a.st != s.st {
			a.mu.Unlock()
			return leafExpr(s, a.dt), nil
		}
	}
	e := a.leafLocked()
	a.mu.Unlock()
	return e, nil
}

// pins are references an operation takes on the storages of pending
// expressions it builds on (see exprOf).
type pins struct {
	sts  [4]*storage
	n    int
	more []*storage
	// scratch says the caller uses the expressions only during its call
	// (Into): the copy of an array's node is then node, an object from
	// nodePool that release returns.
	scratch bool
	node    *expr
}

// nodePool holds the node copies of pins.scratch.
var nodePool = sync.Pool{New: func() any { return new(expr) }}

// copyNode returns a copy of e, an array's node.
func (p *pins) copyNode(e *expr) *expr {
	if p.scratch && p.node == nil {
		c := nodePool.Get().(*expr)
		*c = *e
		p.node = c
		return c
	}
	c := *e
	return &c
}

func (p *pins) add(sts []*storage) {
	for _, s := range sts {
		s.retain()
		if p.n < len(p.sts) {
			p.sts[p.n] = s
			p.n++
		} else {
			p.more = append(p.more, s)
		}
	}
}

func (p *pins) release() {
	releaseAll(p.sts[:p.n])
	releaseAll(p.more)
	if c := p.node; c != nil {
		*c = expr{}
		nodePool.Put(c)
	}
	*p = pins{}
}

// leafLocked returns the leaf expression reading a's storage. It is made
// once and published for lock-free reads; expressions are immutable, so
// every consumer can share it. a.mu is held, and a is materialised, open
// and not failed.
func (a *Array) leafLocked() *expr {
	e := a.leaf.Load()
	if e == nil {
		e = leafExpr(snap{st: a.st, lay: a.lay}, a.dt)
		a.leaf.Store(e)
	}
	return e
}

// appendLeaves appends the distinct storages e reads to dst (in no
// particular order).
func (e *expr) appendLeaves(dst []*storage) []*storage {
	if e.op == backend.OpInput {
		return append(dst, e.st)
	}
	// The usual node: its operands are leaves and scalars.
	flat := true
	for _, a := range e.args() {
		if a.nodes != 1 {
			flat = false
			break
		}
	}
	if !flat {
		return e.appendLeavesWalk(dst)
	}
	for _, a := range e.args() {
		if a.op == backend.OpInput && !slices.Contains(dst, a.st) {
			dst = append(dst, a.st)
		}
	}
	return dst
}

// appendLeavesWalk is appendLeaves of any expression.
func (e *expr) appendLeavesWalk(dst []*storage) []*storage {
	// Expressions are small (maxExprNodes): linear sets beat maps, and an
	// explicit stack keeps the walk's lists off the heap.
	var seenArr, stackArr [maxExprNodes + 8]*expr
	seen, stack := seenArr[:0], append(stackArr[:0], e)
	for len(stack) > 0 {
		x := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		switch {
		case x.op == backend.OpInput:
			if !slices.Contains(dst, x.st) {
				dst = append(dst, x.st)
			}
		case x.nodes == 1:
		case !slices.Contains(seen, x):
			seen = append(seen, x)
			stack = append(stack, x.args()...)
		}
	}
	return dst
}

// leaves lists the distinct storages an expression reads.
func (e *expr) leaves() []*storage { return e.appendLeaves(nil) }

// lazy makes a pending array for e, taking references to every storage it
// reads and registering it with them for in-place writes.
// A result whose bytes would overflow an int (a cast to a wider dtype of
// a huge array) is refused here, whichever operation built it.
func (m *Maker) lazy(e *expr) *Array {
	if _, ok := byteSize(e.dt, e.shape); !ok {
		return failed(tooBigExpr(e.op, e.dt, e.shape))
	}
	return m.pend(&Array{dev: m, dt: e.dt, shape: e.shape, ex: e})
}

// lazyNode is lazy(node(op, dt, shape, args...)) with the node held in
// the array (one allocation).
func (m *Maker) lazyNode(op backend.Op, dt DType, shape []int, args ...*expr) *Array {
	if _, ok := byteSize(dt, shape); !ok {
		return failed(tooBigExpr(op, dt, shape))
	}
	return m.pendNode(op, dt, shape, args...)
}

// pendNode is lazyNode for a result whose size is known to fit (the
// shape and dtype of an existing array).
func (m *Maker) pendNode(op backend.Op, dt DType, shape []int, args ...*expr) *Array {
	a := &Array{dev: m, dt: dt, shape: shape}
	a.node.init(op, dt, shape, args)
	a.ex = &a.node
	return m.pend(a)
}

// lazyCompute is lazy(computeNode(op, dt, res, shape, args...)).
func (m *Maker) lazyCompute(op backend.Op, dt, res DType, shape []int, args ...*expr) *Array {
	if dt.IsStorage() {
		return m.lazy(computeNode(op, dt, res, shape, args...))
	}
	return m.lazyNode(op, res, shape, args...)
}

// tooBigExpr is the error of a result of op too large for an int.
func tooBigExpr(op backend.Op, dt DType, shape []int) error {
	name := backend.Ops[op].Method
	if name == "" { // a leaf
		name = strings.ToUpper(op.String()[:1]) + op.String()[1:]
	}
	return tooBig(name, dt, shape)
}

// pend makes a, whose expression is set, pending: it takes references to
// every storage the expression reads, to be found by writes to them.
func (m *Maker) pend(a *Array) *Array {
	m.enter(a)
	e := a.ex
	a.held = e.appendLeaves(a.held0[:0])
	if len(a.held) == 0 {
		return a
	}
	for _, s := range a.held {
		s.retain()
	}
	m.makeYoung(a)
	return a
}

// A pending array must be found by in-place writes to the storages it
// reads, so it is listed with them; Assign evaluates it first. Most
// pending arrays are evaluated, or used by the next operation, before any
// other pending array is made, as in x.Add(y).Eval() or a chain. Listing
// them is work that an in-place write rarely needs.
//
// So the array made last, the Maker's young array, is not listed. It is
// listed when the next pending array replaces it, if still pending then.
// A flush looks at the young array besides the storage's list. The young
// slot holds its array. A pending array dropped while young is collected
// once a later operation replaces it; the backstop frees its memory.

// makeYoung makes the new pending array a the young one, listing the one
// it replaces.
func (m *Maker) makeYoung(a *Array) {
	if m.young.CompareAndSwap(nil, a) {
		return
	}
	m.youngMu.Lock()
	old := m.young.Swap(a)
	if old != nil {
		old.list()
	}
	m.youngMu.Unlock()
}

// list puts a, if still pending, in the dependency lists of the storages
// it reads.
func (a *Array) list() {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.ex == nil || a.closed || a.tok != nil {
		return
	}
	w := a.dev.newToken(a) // before the entries publish a
	for _, s := range a.held {
		s.addDep(w)
	}
}

// notPending drops what a held as a pending array: its token, or its
// place as the young one. a.mu is held.
func (a *Array) notPending() {
	a.dropToken()
	if d := a.dev; d.young.Load() == a {
		d.young.CompareAndSwap(a, nil)
	}
}

// youngReader returns the young array if it is a pending reader of s.
func (m *Maker) youngReader(s *storage) *Array {
	// Under the lock: a young array being replaced is listed by then.
	m.youngMu.Lock()
	y := m.young.Load()
	m.youngMu.Unlock()
	if y == nil {
		return nil
	}
	y.mu.Lock()
	reads := y.ex != nil && !y.closed && slices.Contains(y.held, s)
	y.mu.Unlock()
	if !reads {
		return nil
	}
	return y
}

// operandExprs returns the expressions of array operands for a new node of
// the given shape; es receives them, len(arrs) of them. It evaluates an
// operand first where the DAG would grow past maxExprNodes. It does so
// too where the operand reads OpIota and would be broadcast: its values
// depend on its own shape.
func operandExprs(es []*expr, pn *pins, op string, shape []int, arrs []*Array) error {
	return operandExprsUpTo(es, pn, op, shape, arrs, maxExprNodes)
}

// operandExprsUpTo is operandExprs with a bound of limit nodes.
func operandExprsUpTo(es []*expr, pn *pins, op string, shape []int, arrs []*Array, limit int) error {
	total := 1
	for i, a := range arrs {
		if j := slices.Index(arrs[:i], a); j >= 0 {
			es[i] = es[j] // the same array twice in one operation is one use
			continue
		}
		e, err := a.exprOf(op, pn)
		if err != nil {
			return err
		}
		es[i] = e
		total += int(e.nodes)
	}
	for i, a := range arrs {
		e := es[i]
		if j := slices.Index(arrs[:i], a); j >= 0 {
			es[i] = es[j]
			continue
		}
		if e.op == backend.OpInput || (total <= limit && !(e.iota && !sameShape(e.shape, shape))) {
			continue
		}
		s, err := a.force(op)
		if err != nil {
			return err
		}
		total -= int(e.nodes) - 1
		es[i] = leafExpr(s, a.dt)
	}
	return nil
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
	n := min(int(root.nodes), maxExprNodes+8)
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
	n := backend.Node{Op: e.op, DType: e.dt.be()}
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
		for i, a := range e.args() {
			n.Args[i] = b.visit(a)
		}
	}
	p.Nodes = append(p.Nodes, n)
	b.done = append(b.done, e)
	return int32(len(p.Nodes) - 1)
}

// evalScratch is a program and its builder's lists that evalInto reuses,
// so that evaluating an expression allocates nothing once they have grown
// to its size. A backend does not keep a program past the call.
type evalScratch struct {
	p   backend.Program
	b   progBuild
	one [1]int // the shape of a collapsed rank-1 program
}

var evalScratches = sync.Pool{New: func() any { return new(evalScratch) }}

// evalInto evaluates e (of the given shape) into out, after collapsing
// the dimensions that are contiguous in every operand.
func (m *Maker) evalInto(e *expr, shape []int, out backend.Operand) error {
	if e.dt.IsComplex() {
		// Complex operations work on the parts (complex.go): a pending
		// complex array is a pack of two real expressions.
		pk, done, err := m.packOf(e)
		if err != nil {
			return err
		}
		defer done()
		return m.evalPackInto(pk, shape, out)
	}
	if m.prep != nil && e.op != backend.OpInput {
		done, err := m.evalMemoised(e, shape, out)
		if done {
			runtime.KeepAlive(e)
			return err
		}
	}
	sc := evalScratches.Get().(*evalScratch)
	p := &sc.p
	*p = backend.Program{Shape: shape, Inputs: p.Inputs[:0], Scalars: p.Scalars[:0], Nodes: p.Nodes[:0]}
	sc.b = progBuild{p: p, shape: shape, done: sc.b.done[:0], leaves: sc.b.leaves[:0]}
	sc.b.visit(e)
	var err error
	if mo, slot := m.memoFor(e, p, sc.b.leaves, out); mo != nil {
		collapse(p, &out, sc.one[:])
		mo.h, err = m.prep.EvalPrepare(p, out)
		if mo.h != nil {
			slot.Store(mo)
		}
	} else {
		collapse(p, &out, sc.one[:])
		err = m.be.Eval(p, out)
	}
	runtime.KeepAlive(e)
	// Drop what the lists point to: buffers, expressions.
	clear(p.Inputs)
	clear(sc.b.done)
	clear(sc.b.leaves)
	p.Shape, sc.b.shape = nil, nil
	evalScratches.Put(sc)
	return err
}

// collapse lowers the rank of a program and its output together. In the
// common case every operand is C-contiguous or constant. That case becomes
// rank 1 without backend.Collapse, with shared shape and stride slices;
// layouts are never modified in place. one, if it has room, holds the
// rank-1 shape.
func collapse(p *backend.Program, out *backend.Operand, one []int) {
	if backend.Size(p.Shape) == 1 && len(p.Shape) == 0 {
		return
	}
	if len(p.Shape) == 1 && p.Shape[0] > 1 && isRank1(&out.Layout, p.Shape[0], false) {
		// Already rank 1 and every operand contiguous or constant: what
		// the general case would write is there.
		done := true
		for i := range p.Inputs {
			if !isRank1(&p.Inputs[i].Layout, p.Shape[0], true) {
				done = false
				break
			}
		}
		if done {
			return
		}
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
			var shape []int
			switch {
			case len(p.Shape) == 1:
				shape = p.Shape
			case len(one) == 1:
				one[0] = n
				shape = one
			default:
				shape = []int{n}
			}
			one, zero := unitStride, zeroStride
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

// isRank1 reports whether l is n elements with stride 1 (or, if constant
// is allowed, 0).
func isRank1(l *backend.Layout, n int, constant bool) bool {
	return len(l.Shape) == 1 && l.Shape[0] == n && (l.Strides[0] == 1 || constant && l.Strides[0] == 0)
}

// Read-only stride slices shared by collapsed rank-1 layouts.
var (
	unitStride = []int{1}
	zeroStride = []int{0}
)
