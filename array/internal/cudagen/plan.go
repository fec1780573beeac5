package cudagen

import (
	"errors"
	"fmt"
	"math"

	"github.com/gocu-dev/gocu/array/internal/backend"
)

// Planning turns a backend request into kernel launches: it picks the
// specialisation, generates (or finds in the cache) the kernel, sizes the
// grid and binds every parameter to a value. The GPU backend only resolves
// pointers and launches; the package tests execute the same launches on
// the host, so the binding logic is tested without a GPU.

// Arg is one kernel argument. Ptr arguments name an operand of the launch
// (Operand >= 0) or a scratch buffer (Operand < 0: Scratch[-1-Operand]),
// plus an element offset; other arguments carry their bits (int32 values in
// the low 32 bits, doubles as IEEE bits).
type Arg struct {
	Type    Type
	Bits    uint64
	Operand int
	Offset  int
}

// Scratch is a temporary device buffer a launch sequence needs. A Zero
// scratch must hold zeros when the plan starts, and the plan leaves it
// zero (a ticket counter), so a backend may keep one zeroed buffer for
// every plan on a stream instead of clearing one per launch.
type Scratch struct {
	DType backend.DType
	Len   int
	Zero  bool
}

// Launch is one kernel launch.
type Launch struct {
	Kernel   *Kernel
	Grid     [3]int
	Block    int
	Operands []backend.Operand // buffers the Ptr arguments refer to
	Args     []Arg
	// Scalars are the scalars RoleScalar parameters index: the request's
	// program's (the same slice), or those of a program the planner made
	// (an identity fill), whose values are part of the plan.
	Scalars []backend.Scalar
}

// Plan is a sequence of launches sharing scratch buffers.
type Plan struct {
	Launches []Launch
	Scratch  []Scratch
}

// Options are what planning needs to know about the device.
type Options struct {
	// SMs is the multiprocessor count; grid-stride kernels launch a few
	// blocks per SM.
	SMs int
	// Aligned reports whether an operand's first element is aligned to a
	// number of bytes (device address plus offset).
	Aligned func(o backend.Operand, bytes int) bool
	// Cache, if set, memoises generated kernels by specialisation key.
	Cache *Cache[any]
	// MaxBlocks, if positive, caps every grid (kernels loop over the rest).
	MaxBlocks int
	// BlocksPerSM, if set, returns how many blocks of a kernel can be
	// resident on one multiprocessor (the occupancy calculator's answer);
	// grid-stride kernels launch that many per SM, one full wave, so that
	// no block waits for a second wave. Without it planners assume 8.
	BlocksPerSM func(k *Kernel) int
}

// perSM is the number of resident blocks per SM of kernel k.
func (o Options) perSM(k *Kernel) int {
	if o.BlocksPerSM != nil {
		if b := o.BlocksPerSM(k); b > 0 {
			return b
		}
	}
	return 8
}

// tiles is the grid of a tiled kernel (Unroll vectors per thread per
// tile): one tile per block, so that the hardware scheduler balances the
// last wave, up to a cap past which blocks loop.
func (o Options) tiles(vectors, block int) int {
	b := (vectors + block*Unroll - 1) / (block * Unroll)
	lim := 2048 * max(o.SMs, 1)
	if o.MaxBlocks > 0 {
		lim = o.MaxBlocks
	}
	return max(1, min(b, lim))
}

// ErrMaterialize is returned for a program that reads the flat index
// (Arange, Eye) when a reduction or softmax would visit it in another
// order: the backend evaluates the program into a buffer first and plans
// again with a program that reads that buffer.
var ErrMaterialize = errors.New("cudagen: evaluate the index program first")

func (o Options) blocks(work, perBlock int) int {
	return o.capped((work+perBlock-1)/perBlock, 8)
}

// capped limits a block count to perSM blocks per multiprocessor (or MaxBlocks).
func (o Options) capped(b, perSM int) int {
	lim := perSM * max(o.SMs, 1)
	if o.MaxBlocks > 0 {
		lim = o.MaxBlocks
	}
	return max(1, min(b, lim))
}

func cached[T any](o Options, key string, make func() (T, error)) (T, error) {
	if o.Cache == nil {
		return make()
	}
	v, err := o.Cache.Get(key, func() (any, error) { return make() })
	if err != nil {
		var zero T
		return zero, err
	}
	return v.(T), nil
}

func i64(v int) Arg       { return Arg{Type: I64, Bits: uint64(int64(v))} }
func u64(v uint64) Arg    { return Arg{Type: U64, Bits: v} }
func f64(v float64) Arg   { return Arg{Type: F64, Bits: math.Float64bits(v)} }
func ptr(op, off int) Arg { return Arg{Type: Ptr, Operand: op, Offset: off} }

func scalarArg(s backend.Scalar) Arg {
	if s.DType.IsFloating() {
		return f64(s.F)
	}
	return i64(int(s.I))
}

func hasIota(p *backend.Program) bool {
	for _, n := range p.Nodes {
		if n.Op == backend.OpIota {
			return true
		}
	}
	return false
}

func classOf(l backend.Layout) Class {
	switch {
	case l.IsConstant():
		return Const
	case l.IsContiguous():
		return Contig
	}
	return Strided
}

// PlanEval plans an elementwise evaluation (package array has collapsed the
// program and its output).
func PlanEval(p *backend.Program, out backend.Operand, o Options) (*Plan, error) {
	n := p.Size()
	if n == 0 {
		return &Plan{}, nil
	}
	spec := SpecFor(p, out, o.Aligned)
	k, err := cached(o, ElemKey(p.Key(), spec), func() (*Kernel, error) { return Elementwise(p, spec) })
	if err != nil {
		return nil, err
	}
	l := Launch{Kernel: k, Block: k.Block, Scalars: p.Scalars}
	if spec.Tiled() {
		l.Grid = [3]int{o.tiles(n/spec.Vec, k.Block), 1, 1}
	} else {
		nv := n / spec.Vec
		l.Grid = [3]int{o.capped((nv+k.Block-1)/k.Block, o.perSM(k)), 1, 1}
	}
	l.Operands = append(append(l.Operands, p.Inputs...), out)
	outIdx := len(p.Inputs)
	for _, prm := range k.Params {
		var a Arg
		switch prm.Role {
		case RoleOut:
			a = ptr(outIdx, out.Layout.Offset)
		case RoleIn:
			a = ptr(prm.Index, p.Inputs[prm.Index].Layout.Offset)
		case RoleScalar:
			a = scalarArg(p.Scalars[prm.Index])
		case RoleCount:
			a = i64(n)
		case RoleDim:
			a = i64(spec.stridedDim(p.Shape, prm.Dim))
		case RoleDimDiv:
			a = DivArg(spec.stridedDim(p.Shape, prm.Dim))
		case RoleStride:
			if prm.Index < 0 {
				a = i64(spec.stridedStride(out.Layout, prm.Dim))
			} else {
				a = i64(spec.stridedStride(p.Inputs[prm.Index].Layout, prm.Dim))
			}
		default:
			return nil, fmt.Errorf("cudagen: elementwise parameter role %d", prm.Role)
		}
		l.Args = append(l.Args, a)
	}
	return &Plan{Launches: []Launch{l}}, nil
}

// split returns the layouts restricted to the given dimensions.
func split(ls []backend.Layout, dims []int) []backend.Layout {
	out := make([]backend.Layout, len(ls))
	for i, l := range ls {
		s := backend.Layout{Shape: make([]int, len(dims)), Strides: make([]int, len(dims)), Offset: l.Offset}
		for j, d := range dims {
			s.Shape[j], s.Strides[j] = l.Shape[d], l.Strides[d]
		}
		out[i] = s
	}
	return out
}

// collapseGroup collapses layouts that share a shape, keeping rank 0 for
// one element and rank 1 for none.
func collapseGroup(ls []backend.Layout) []backend.Layout {
	if len(ls) == 0 {
		return nil
	}
	return backend.Collapse(ls)
}

func index64(p *backend.Program, extra ...backend.Operand) bool {
	const lim = 1<<31 - 1
	if p.Size() > maxIndex32 {
		return true
	}
	for _, o := range append(append([]backend.Operand{}, p.Inputs...), extra...) {
		lo, hi := o.Layout.Extent()
		if lo < -lim || hi > lim {
			return true
		}
	}
	return false
}

func identityScalar(op backend.ReduceOp, dt backend.DType) backend.Scalar {
	s := backend.Scalar{DType: dt}
	switch op {
	case backend.Prod, backend.All:
		s.F, s.I = 1, 1
	case backend.Mean:
		s.F = math.NaN()
	}
	return s
}

// PlanReduce plans a reduction: one element per output through the ReduceAll
// kernels when everything reduces to one value, else the Rows kernel (a
// warp or a block per output) or, when the kept dimensions vary fastest in
// memory and there are many outputs or rows to split, the Cols kernel (a
// thread per output).
func PlanReduce(r *backend.Reduction, o Options) (*Plan, error) {
	p := r.In
	outDT := r.Out.Buf.DType()
	if !r.Out.Layout.IsContiguous() {
		return nil, fmt.Errorf("cudagen: reduction output must be contiguous")
	}
	red := make([]bool, len(p.Shape))
	for _, a := range r.Axes {
		red[a] = true
	}
	var kept, rdims []int
	nK, nR := 1, 1
	for d, n := range p.Shape {
		if red[d] {
			rdims = append(rdims, d)
			nR *= n
		} else {
			kept = append(kept, d)
			nK *= n
		}
	}
	if nK == 0 {
		return &Plan{}, nil
	}
	if nR == 0 {
		// Nothing to reduce: fill the outputs with the identity.
		fill := &backend.Program{Shape: []int{nK}, Scalars: []backend.Scalar{identityScalar(r.Op, outDT)},
			Nodes: []backend.Node{{Op: backend.OpScalar, DType: outDT}}}
		out := r.Out
		out.Layout = backend.Layout{Shape: []int{nK}, Strides: []int{1}, Offset: r.Out.Layout.Offset}
		return PlanEval(fill, out, o)
	}
	ls := make([]backend.Layout, len(p.Inputs))
	for i, in := range p.Inputs {
		ls[i] = in.Layout
	}
	if nK == 1 {
		q := *p
		cl := collapseGroup(ls)
		q.Inputs = make([]backend.Operand, len(p.Inputs))
		shape := p.Shape
		for i := range cl {
			q.Inputs[i] = backend.Operand{Buf: p.Inputs[i].Buf, Layout: cl[i]}
			shape = cl[i].Shape
		}
		// The flat index is the same over the collapsed shape, so index
		// programs need no special care here.
		q.Shape = shape
		return planReduceAll(r, &q, outDT, o)
	}
	if hasIota(p) {
		return nil, ErrMaterialize
	}
	kl := collapseGroup(append(split(ls, kept), r.Out.Layout))
	rl := collapseGroup(split(ls, rdims))
	kRank, rRank := len(kl[len(kl)-1].Shape), 0
	if len(rl) > 0 {
		rRank = len(rl[0].Shape)
	}
	spec := ReduceSpec{Kept: kRank, Red: rRank, Index64: index64(p, r.Out)}
	fastest := -1
	for _, in := range p.Inputs {
		best := 0
		for d, n := range in.Layout.Shape {
			s := in.Layout.Strides[d]
			if s < 0 {
				s = -s
			}
			if n > 1 && s != 0 && (fastest < 0 || s < best) {
				fastest, best = d, s
			}
		}
		if fastest >= 0 {
			break
		}
	}
	for _, in := range p.Inputs {
		c := Strided
		if in.Layout.IsConstant() {
			c = Const
		}
		spec.In = append(spec.In, c)
	}
	// Fewer outputs than a block of threads still take the Cols kernel
	// when its grid splits the rows: a block per output walking a strided
	// column (a bias's gradient, 16384x768) read 325 GB/s on an H200.
	keptFast := fastest >= 0 && !red[fastest]
	switch {
	case keptFast && (nK >= 1024 || nK >= 32 && o.SMs > 0 && nR >= 128):
		spec.Mode = ReduceCols
	case nR <= 512:
		spec.Mode, spec.Group = ReduceRows, 32
	default:
		spec.Mode, spec.Group = ReduceRows, 256
	}
	rd, err := cached(o, ReduceKey(r.Op.String(), p.Key(), outDT.String(), spec), func() (*Reduction, error) {
		return Reduce(r.Op, p, outDT, spec)
	})
	if err != nil {
		return nil, err
	}
	k := rd.Kernels[0]
	l := Launch{Kernel: k, Block: k.Block, Scalars: p.Scalars}
	plan := &Plan{}
	if spec.Mode == ReduceCols {
		l.Grid = [3]int{o.blocks(nK, k.Block), 1, 1}
		cols, chunks := colsSplit(nK, nR, k.Block, o)
		pvLen, piLen := 1, 1
		if chunks > 1 {
			l.Grid = [3]int{cols, chunks, 1}
			pvLen = chunks * nK
			if rd.Indexed {
				piLen = pvLen
			}
		}
		plan.Scratch = []Scratch{{DType: rd.AccType, Len: pvLen}, {DType: backend.Int64, Len: piLen}, {DType: backend.Int32, Len: max(cols, 1), Zero: true}}
		if chunks <= 1 {
			plan.Scratch[2].Len = 1
		}
	} else {
		// The kernel loops over outputs, so the grid can stop at a few
		// waves of blocks.
		per := blockSize / max(spec.Group, 1)
		l.Grid = [3]int{o.capped((nK+per-1)/per, 32), 1, 1}
	}
	l.Operands = append(append(l.Operands, p.Inputs...), r.Out)
	outIdx := len(p.Inputs)
	for _, prm := range k.Params {
		var a Arg
		switch prm.Role {
		case RoleOut:
			a = ptr(outIdx, r.Out.Layout.Offset)
		case RoleIn:
			if spec.In[prm.Index] == Const {
				a = ptr(prm.Index, p.Inputs[prm.Index].Layout.Offset)
			} else {
				a = ptr(prm.Index, kl[prm.Index].Offset)
			}
		case RoleScalar:
			a = scalarArg(p.Scalars[prm.Index])
		case RoleRows:
			a = i64(nK)
		case RoleRedCount:
			a = i64(nR)
		case RoleDim:
			a = i64(kl[len(kl)-1].Shape[prm.Dim])
		case RoleRedDim:
			a = i64(rl[0].Shape[prm.Dim])
		case RoleDimDiv:
			a = DivArg(kl[len(kl)-1].Shape[prm.Dim])
		case RoleRedDimDiv:
			a = DivArg(rl[0].Shape[prm.Dim])
		case RoleStride:
			a = i64(kl[prm.Index].Strides[prm.Dim])
		case RoleRedStride:
			a = i64(rl[prm.Index].Strides[prm.Dim])
		case RolePartial:
			a = ptr(-1-prm.Index, 0)
		default:
			return nil, fmt.Errorf("cudagen: reduction parameter role %d", prm.Role)
		}
		l.Args = append(l.Args, a)
	}
	plan.Launches = []Launch{l}
	return plan, nil
}

// colsTickets is the most column blocks a split column reduction takes:
// each needs one of the backend's zeroed ticket words.
const colsTickets = 512

// colsSplit sizes the grid of a column reduction of nK outputs over nR
// elements each: cols blocks across the outputs and chunks of the reduced
// elements, enough for about eight resident blocks an SM, each chunk at
// least 64 elements. One chunk means the unsplit kernel.
func colsSplit(nK, nR, block int, o Options) (cols, chunks int) {
	cols = (nK + block - 1) / block
	if cols > colsTickets || o.SMs <= 0 {
		return cols, 1
	}
	want := 8 * o.SMs
	chunks = min((want+cols-1)/cols, nR/64, 65535)
	return cols, max(chunks, 1)
}

func planReduceAll(r *backend.Reduction, q *backend.Program, outDT backend.DType, o Options) (*Plan, error) {
	n := q.Size()
	spec := ReduceSpec{Mode: ReduceAll, Red: len(q.Shape), Index64: index64(q), Vec: 1}
	allContig := true
	maxSize := 0
	for _, in := range q.Inputs {
		c := classOf(in.Layout)
		spec.In = append(spec.In, c)
		allContig = allContig && c != Strided
		if c == Contig {
			maxSize = max(maxSize, in.DType().Size())
		}
	}
	if allContig && n >= 4*blockSize && o.Aligned != nil {
		for _, w := range []int{4, 2} {
			if w == 4 && maxSize > 4 {
				continue
			}
			ok := true
			for i, in := range q.Inputs {
				if spec.In[i] == Contig {
					ok = ok && o.Aligned(in, w*in.DType().Size())
				}
			}
			if ok {
				spec.Vec = w
				break
			}
		}
	}
	rd, err := cached(o, ReduceKey(r.Op.String(), q.Key(), outDT.String(), spec), func() (*Reduction, error) {
		return Reduce(r.Op, q, outDT, spec)
	})
	if err != nil {
		return nil, err
	}
	k := rd.Kernels[0]
	// At most one wave of resident blocks (grid-stride).
	wave := o.capped(1<<30, o.perSM(k))
	var g int
	if allContig {
		g = reduceGrid(n/spec.Vec, k.Block, wave)
	} else {
		g = min((n+k.Block-1)/k.Block, wave)
	}
	plan := &Plan{Scratch: []Scratch{{DType: rd.AccType, Len: g}, {DType: backend.Int64, Len: g}, {DType: backend.Int32, Len: 1, Zero: true}}}
	l := Launch{Kernel: k, Block: k.Block, Grid: [3]int{g, 1, 1}, Operands: append(append([]backend.Operand{}, q.Inputs...), r.Out), Scalars: q.Scalars}
	outIdx := len(q.Inputs)
	for _, prm := range k.Params {
		var a Arg
		switch prm.Role {
		case RolePartial:
			a = ptr(-1-prm.Index, 0)
		case RoleOut:
			a = ptr(outIdx, r.Out.Layout.Offset)
		case RoleIn:
			a = ptr(prm.Index, q.Inputs[prm.Index].Layout.Offset)
		case RoleScalar:
			a = scalarArg(q.Scalars[prm.Index])
		case RoleCount:
			a = i64(n)
		case RoleDim:
			a = i64(q.Shape[prm.Dim])
		case RoleDimDiv:
			a = DivArg(q.Shape[prm.Dim])
		case RoleStride:
			a = i64(q.Inputs[prm.Index].Layout.Strides[prm.Dim])
		default:
			return nil, fmt.Errorf("cudagen: reduction parameter role %d", prm.Role)
		}
		l.Args = append(l.Args, a)
	}
	plan.Launches = []Launch{l}
	return plan, nil
}

// reduceGrid is the grid of the contiguous full reduction over nv
// vectors (writeReduceTiles): every block gets the same number of full
// tiles, as few per block as one wave of at most wave blocks allows, so
// that no block runs a round the others do not (with the largest grid of a
// wave, 16384 tiles over 1056 blocks gives 544 blocks a 16th round while
// 512 wait). Without a full tile, one vector per thread.
func reduceGrid(nv, block, wave int) int {
	full := nv / (block * Unroll)
	if full == 0 {
		return max(1, min((nv+block-1)/block, wave))
	}
	per := (full + wave - 1) / wave
	return (full + per - 1) / per
}

// PlanAxis plans a softmax-family operation: one block per row.
func PlanAxis(a *backend.AxisOp, o Options) (*Plan, error) {
	p := a.In
	r := len(p.Shape)
	if a.Axis != r-1 && hasIota(p) {
		return nil, ErrMaterialize
	}
	var outer []int
	for d := 0; d < r; d++ {
		if d != a.Axis {
			outer = append(outer, d)
		}
	}
	L := p.Shape[a.Axis]
	rows := 1
	for _, d := range outer {
		rows *= p.Shape[d]
	}
	if rows == 0 || (L == 0 && a.Kind != backend.LogSumExp) {
		return &Plan{}, nil
	}
	if L == 0 {
		// LogSumExp over an empty axis is -Inf for every row: a fill. The
		// axis kernel must not run on an empty input: it reads a
		// broadcast (Const) input's single element before its loops, and
		// an empty buffer has no element (its device address is 0).
		dt := a.Out.Buf.DType()
		fill := &backend.Program{Shape: append([]int(nil), a.Out.Layout.Shape...),
			Scalars: []backend.Scalar{{DType: dt, F: math.Inf(-1)}},
			Nodes:   []backend.Node{{Op: backend.OpScalar, DType: dt}}}
		return PlanEval(fill, a.Out, o)
	}
	if pl, ok, err := planRows(a, rows, L, o); ok || err != nil {
		return pl, err
	}
	ls := make([]backend.Layout, 0, len(p.Inputs)+1)
	for _, in := range p.Inputs {
		ls = append(ls, in.Layout)
	}
	outOuter := a.Out.Layout
	if a.Kind != backend.LogSumExp {
		outOuter = split([]backend.Layout{a.Out.Layout}, outer)[0]
	}
	ol := collapseGroup(append(split(ls, outer), outOuter))
	spec := AxisSpec{Outer: len(ol[len(ol)-1].Shape), Index64: index64(p, a.Out)}
	if a.Kind == backend.Quantize {
		spec.Out = a.Out.Buf.DType()
	}
	for _, in := range p.Inputs {
		c := Strided
		if in.Layout.IsConstant() {
			c = Const
		}
		spec.In = append(spec.In, c)
	}
	k, err := cached(o, AxisKey(a.Kind.String(), p.Key(), spec), func() (*Kernel, error) { return AxisOp(a.Kind, p, spec) })
	if err != nil {
		return nil, err
	}
	l := Launch{Kernel: k, Block: k.Block, Grid: [3]int{o.capped(rows, 32), 1, 1}, Scalars: p.Scalars}
	l.Operands = append(append(l.Operands, p.Inputs...), a.Out)
	outIdx := len(p.Inputs)
	if a.Kind == backend.Quantize {
		l.Operands = append(l.Operands, a.Scale)
	}
	for _, prm := range k.Params {
		var arg Arg
		switch prm.Role {
		case RoleOut:
			arg = ptr(outIdx, ol[len(ol)-1].Offset)
		case RoleIn:
			arg = ptr(prm.Index, ol[prm.Index].Offset)
		case RoleScalar:
			arg = scalarArg(p.Scalars[prm.Index])
		case RoleRows:
			arg = i64(rows)
		case RoleRowLen:
			arg = i64(L)
		case RoleScale:
			arg = ptr(outIdx+1, a.Scale.Layout.Offset)
		case RoleDim:
			arg = i64(ol[len(ol)-1].Shape[prm.Dim])
		case RoleStride:
			if prm.Index < 0 {
				arg = i64(ol[len(ol)-1].Strides[prm.Dim])
			} else {
				arg = i64(ol[prm.Index].Strides[prm.Dim])
			}
		case RoleRowStride:
			if prm.Index < 0 {
				arg = i64(a.Out.Layout.Strides[a.Axis])
			} else {
				arg = i64(p.Inputs[prm.Index].Layout.Strides[a.Axis])
			}
		default:
			return nil, fmt.Errorf("cudagen: axis parameter role %d", prm.Role)
		}
		l.Args = append(l.Args, arg)
	}
	return &Plan{Launches: []Launch{l}}, nil
}

// PlanRandom plans a Philox fill.
func PlanRandom(rq *backend.Random, o Options) (*Plan, error) {
	n := rq.Out.Layout.Size()
	if n == 0 {
		return &Plan{}, nil
	}
	dt := rq.Out.Buf.DType()
	k, err := cached(o, fmt.Sprintf("rand|%v|%d", dt, rq.Dist), func() (*Kernel, error) { return Random(dt, rq.Dist) })
	if err != nil {
		return nil, err
	}
	per := 4
	if dt == backend.Float64 || rq.Dist == backend.Normal {
		per = 2
	}
	l := Launch{Kernel: k, Block: k.Block, Grid: [3]int{o.blocks((n+per-1)/per, k.Block), 1, 1}, Operands: []backend.Operand{rq.Out}}
	for _, prm := range k.Params {
		var a Arg
		switch prm.Role {
		case RoleOut:
			a = ptr(0, rq.Out.Layout.Offset)
		case RoleCount:
			a = i64(n)
		case RoleSeed:
			a = u64(rq.Seed)
		case RoleCounter:
			a = u64(rq.Counter)
		case RoleP0:
			a = f64(rq.P0)
		case RoleP1:
			a = f64(rq.P1)
		default:
			return nil, fmt.Errorf("cudagen: random parameter role %d", prm.Role)
		}
		l.Args = append(l.Args, a)
	}
	return &Plan{Launches: []Launch{l}}, nil
}

// PlanIntMatMul plans an integer or bool matrix product.
func PlanIntMatMul(m *backend.MatMul, o Options) (*Plan, error) {
	dt, in := m.C.Buf.DType(), m.A.Buf.DType()
	nb := backend.Size(m.Batch)
	if nb == 0 || m.M == 0 || m.N == 0 {
		return &Plan{}, nil
	}
	gy, gz := (m.M+matmulTile-1)/matmulTile, nb
	if gy > 65535 || gz > 65535 {
		return nil, fmt.Errorf("cudagen: integer matmul grid (%d, %d) exceeds 65535", gy, gz)
	}
	k, err := cached(o, fmt.Sprintf("imm|%v|%v|%d", in, dt, len(m.Batch)), func() (*Kernel, error) { return IntMatMulOf(in, dt, len(m.Batch)) })
	if err != nil {
		return nil, err
	}
	l := Launch{Kernel: k, Block: k.Block, Grid: [3]int{(m.N + matmulTile - 1) / matmulTile, gy, gz},
		Operands: []backend.Operand{{Buf: m.A.Buf}, {Buf: m.B.Buf}, {Buf: m.C.Buf}}}
	mats := []backend.Matrix{m.A, m.B}
	for _, prm := range k.Params {
		var a Arg
		switch prm.Role {
		case RoleOut:
			a = ptr(2, m.C.Offset)
		case RoleIn:
			a = ptr(prm.Index, mats[prm.Index].Offset)
		case RoleM:
			a = i64(m.M)
		case RoleN:
			a = i64(m.N)
		case RoleK:
			a = i64(m.K)
		case RoleStride:
			if prm.Dim == 0 {
				a = i64(mats[prm.Index].RowStride)
			} else {
				a = i64(mats[prm.Index].ColStride)
			}
		case RoleBatchDim:
			a = i64(m.Batch[prm.Dim])
		case RoleBatchStride:
			a = i64(mats[prm.Index].BatchStrides[prm.Dim])
		default:
			return nil, fmt.Errorf("cudagen: matmul parameter role %d", prm.Role)
		}
		l.Args = append(l.Args, a)
	}
	return &Plan{Launches: []Launch{l}}, nil
}
