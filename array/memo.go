package array

import (
	"slices"
	"sync/atomic"

	"github.com/gocu-dev/gocu/array/internal/backend"
	"github.com/gocu-dev/gocu/array/internal/gpu"
)

// Evaluation memos. A repeated operation on same-shaped operands builds
// the same program every time, with other buffers and scalar values; think
// of x.Add(y).Eval() in a loop. A backend that plans programs can keep
// what it planned (backend.Preparer). The GPU's does: a request key, a
// plan cache lookup, then the launch.
//
// A Maker keeps the last programs it evaluated through such a backend in a
// small direct-mapped table. An entry is the program's structure, without
// buffers or values, and the backend's handle. Evaluation first walks the
// expression as the program's builder would, comparing instead of
// building. A match passes the inputs and scalars straight to the handle,
// with no program, key or lookup.
//
// The walk follows progBuild.visit step for step. Nodes merge by identity,
// leaves by storage and layout. So a match means the slow path's program
// equals the memo's in all that its plan depends on: shape, nodes, scalar
// dtypes, input layouts and the output layout. Plans depend on buffers'
// dtypes, alignment and aliasing too; the backend checks those.

// Bounds of the programs memoised (larger ones are planned as before),
// and of the table: memoSets sets of memoWays entries.
const (
	memoNodes   = 12
	memoInputs  = 4
	memoScalars = 4
	memoSets    = 64
	memoWays    = 2
)

// evalMemo is a program structure and its backend handle: immutable once
// published, but for used. One allocation: the program's nodes, its
// leaves' layouts (slices shared with theirs: layouts are never modified
// in place) and scalar dtypes are held in arrays.
type evalMemo struct {
	shape   []int
	out     backend.Layout
	h       backend.Prepared
	used    atomic.Bool // matched since the last replacement looked at it
	nn      int
	ni      int
	ns      int
	nodes   [memoNodes]backend.Node
	ins     [memoInputs]backend.Layout // the leaves' own layouts (before broadcasting)
	scalars [memoScalars]DType
}

type memoTable [memoSets][memoWays]atomic.Pointer[evalMemo]

// memoSet picks the set of a program's memo: from the root's operation,
// dtype and node count, the shape's rank and size.
func memoSet(e *expr, shape []int) int {
	h := uint64(e.op) | uint64(e.dt)<<8 | uint64(e.nodes)<<16 | uint64(len(shape))<<24 | uint64(backend.Size(shape))<<32
	h ^= h >> 33
	h *= 0xff51afd7ed558ccd
	h ^= h >> 33
	h *= 0xc4ceb9fe1a85ec53
	h ^= h >> 33
	return int(h % memoSets)
}

// admit returns the way of set a new memo may take, or -1. A way is free
// when empty, or when its entry was not used since admit last looked.
// Used entries get a second chance: their mark is cleared, and the new
// program is not memoised. It is memoised when seen again while the
// entries it would replace are idle. So more structures than the table
// holds, in a cycle, do not make a memo on every miss.
func (t *memoTable) admit(set int) int {
	ways := &t[set]
	for w := range ways {
		if ways[w].Load() == nil {
			return w
		}
	}
	for w := range ways {
		if old := ways[w].Load(); old != nil && !old.used.Swap(false) {
			return w
		}
	}
	return -1
}

// memoWalk is a comparing walk of an expression against a memo.
type memoWalk struct {
	m      *evalMemo
	done   [memoNodes]*expr
	nd     int
	leaves [memoInputs]*expr
	nl     int
	ins    [memoInputs]backend.Buffer
	scs    [memoScalars]backend.Scalar
	ns     int
}

// visit is progBuild.visit comparing: it returns the node index e gets,
// and false at the first difference from the memo.
func (w *memoWalk) visit(e *expr) (int32, bool) {
	for i := range w.nd {
		if w.done[i] == e {
			return int32(i), true
		}
	}
	m := w.m
	n := backend.Node{Op: e.op, DType: e.dt.be()}
	switch e.op {
	case backend.OpInput:
		idx := -1
		for j := range w.nl {
			l := w.leaves[j]
			if l.st == e.st && sameLayout(&l.lay, &e.lay) {
				idx = j
				break
			}
		}
		if idx < 0 {
			idx = w.nl
			if idx >= m.ni || !sameLayout(&m.ins[idx], &e.lay) {
				return 0, false
			}
			w.leaves[idx] = e
			w.ins[idx] = e.st.buf
			w.nl++
		}
		n.Args[0] = int32(idx)
	case backend.OpScalar:
		k := w.ns
		if k >= m.ns || m.scalars[k] != DType(e.sc.DType) {
			return 0, false
		}
		w.scs[k] = e.sc
		w.ns++
		n.Args[0] = int32(k)
	case backend.OpIota:
	default:
		for i, a := range e.args() {
			j, ok := w.visit(a)
			if !ok {
				return 0, false
			}
			n.Args[i] = j
		}
	}
	k := w.nd
	if k >= m.nn || m.nodes[k] != n {
		return 0, false
	}
	w.done[k] = e
	w.nd++
	return int32(k), true
}

func sameLayout(a, b *backend.Layout) bool {
	return a.Offset == b.Offset && sameInts(a.Shape, b.Shape) && sameInts(a.Strides, b.Strides)
}

// sameInts is slices.Equal, first by identity (layouts share slices).
func sameInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	if len(a) == 0 || &a[0] == &b[0] {
		return true
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// evalMemoised evaluates e into out through a memo, and reports whether it
// did (false: no memo matches, or the backend could not use it).
func (m *Maker) evalMemoised(e *expr, shape []int, out backend.Operand) (bool, error) {
	ways := &m.memo[memoSet(e, shape)]
	for w := range ways {
		mo := ways[w].Load()
		if mo == nil || !sameInts(mo.shape, shape) || !sameLayout(&mo.out, &out.Layout) {
			continue
		}
		mw := memoWalk{m: mo}
		if _, ok := mw.visit(e); !ok || mw.nd != mo.nn || mw.nl != mo.ni || mw.ns != mo.ns {
			continue
		}
		var done bool
		var err error
		if g, ok := m.prep.(*gpu.Backend); ok {
			// The concrete call keeps mw on the stack.
			done, err = g.EvalPrepared(mo.h, mw.ins[:mw.nl], mw.scs[:mw.ns], out.Buf)
		} else {
			done, err = m.prep.EvalPrepared(mo.h, slices.Clone(mw.ins[:mw.nl]), slices.Clone(mw.scs[:mw.ns]), out.Buf)
		}
		if !done {
			// The handle cannot serve these buffers (or went stale): the
			// slow path plans them, and a new memo may take the way.
			ways[w].CompareAndSwap(mo, nil)
			return false, nil
		}
		if !mo.used.Load() {
			mo.used.Store(true)
		}
		return true, err
	}
	return false, nil
}

// memoFor returns a memo of program p, without its handle, and the table
// slot it is to take. p is as built from e before collapsing, evaluated
// into out. It returns nil if the backend keeps no handles, or if the
// table does not admit p now. It does too if p cannot be memoised: too
// large, or a plain read with no plan.
func (m *Maker) memoFor(e *expr, p *backend.Program, leaves []*expr, out backend.Operand) (*evalMemo, *atomic.Pointer[evalMemo]) {
	if m.prep == nil || e.op == backend.OpInput || len(p.Nodes) > memoNodes || len(leaves) > memoInputs || len(p.Scalars) > memoScalars {
		return nil, nil
	}
	set := memoSet(e, p.Shape)
	w := m.memo.admit(set)
	if w < 0 {
		return nil, nil
	}
	mo := &evalMemo{shape: p.Shape, out: out.Layout, nn: len(p.Nodes), ni: len(leaves), ns: len(p.Scalars)}
	copy(mo.nodes[:], p.Nodes)
	for i, l := range leaves {
		mo.ins[i] = l.lay
	}
	for i, s := range p.Scalars {
		mo.scalars[i] = DType(s.DType)
	}
	return mo, &m.memo[set][w]
}
