package cpu

import (
	"math"
	"sort"
	"sync"

	"github.com/gocu-dev/gocu/array/internal/backend"
)

// Reductions evaluate the input program in blocks, in a permuted order of
// its dimensions, and fold each block into per-output accumulators:
//
//   - "rows" order (kept axes first, reduced axes last): consecutive
//     positions belong to one output, folded by a tight loop;
//   - "columns" order (reduced axes first): consecutive positions belong to
//     consecutive outputs, folded elementwise into an accumulator row. It is
//     used when the input's fastest-varying dimension is kept (column sums),
//     so the input is still read in memory order.
//
// Accumulators are float64 for float inputs (so float32 sums and products
// round once at the end) and int64 for integers. Each worker folds its own
// contiguous range of positions into private accumulators, merged in range
// order, so argmax/argmin keep the first index on ties.

type acc struct {
	op   backend.ReduceOp
	isF  bool
	f    []float64
	i    []int64
	idx  []int64 // argmax/argmin: -1 until the first value
	base int     // output index of element 0
}

func newAcc(op backend.ReduceOp, isF bool, base, n int) *acc {
	a := &acc{op: op, isF: isF, base: base}
	if isF {
		a.f = make([]float64, n)
		fill(a.f, identityF(op))
	} else {
		a.i = make([]int64, n)
		fill(a.i, identityI(op))
	}
	if op == backend.ArgMax || op == backend.ArgMin {
		a.idx = make([]int64, n)
		fill(a.idx, -1)
	}
	return a
}

func identityF(op backend.ReduceOp) float64 {
	switch op {
	case backend.Prod, backend.All:
		return 1
	case backend.Max, backend.ArgMax:
		return math.Inf(-1)
	case backend.Min, backend.ArgMin:
		return math.Inf(1)
	}
	return 0
}

func identityI(op backend.ReduceOp) int64 {
	switch op {
	case backend.Prod, backend.All:
		return 1
	case backend.Max, backend.ArgMax:
		return math.MinInt64
	case backend.Min, backend.ArgMin:
		return math.MaxInt64
	}
	return 0
}

type accT interface{ ~float64 | ~int64 }

// foldRun folds the values of one output (positions pos0, pos0+1, ...).
func foldRun[T number, A accT](op backend.ReduceOp, v []T, acc *A, idx *int64, pos0 int64) {
	switch op {
	case backend.Sum, backend.Mean:
		// Six independent accumulators hide the add latency; more would
		// spill on amd64 (15 usable X registers).
		var s0, s1, s2, s3, s4, s5 A
		i := 0
		for ; i+6 <= len(v); i += 6 {
			w := v[i : i+6 : i+6]
			s0 += A(w[0])
			s1 += A(w[1])
			s2 += A(w[2])
			s3 += A(w[3])
			s4 += A(w[4])
			s5 += A(w[5])
		}
		for ; i < len(v); i++ {
			s0 += A(v[i])
		}
		*acc += ((s0 + s1) + (s2 + s3)) + (s4 + s5)
	case backend.Prod:
		p := *acc
		for _, x := range v {
			p *= A(x)
		}
		*acc = p
	case backend.Max:
		m := *acc
		for _, x := range v {
			if a := A(x); a > m || a != a {
				m = a
			}
		}
		if m != m || *acc == *acc {
			*acc = m
		}
	case backend.Min:
		m := *acc
		for _, x := range v {
			if a := A(x); a < m || a != a {
				m = a
			}
		}
		if m != m || *acc == *acc {
			*acc = m
		}
	case backend.ArgMax, backend.ArgMin:
		m, k := *acc, *idx
		if k >= 0 && m != m {
			return // a NaN was already found
		}
		for j, x := range v {
			a := A(x)
			if k < 0 || a != a || (op == backend.ArgMax && a > m) || (op == backend.ArgMin && a < m) {
				m, k = a, pos0+int64(j)
				if a != a {
					break
				}
			}
		}
		*acc, *idx = m, k
	case backend.Any:
		for _, x := range v {
			if x != 0 {
				*acc = 1
				return
			}
		}
	case backend.All:
		for _, x := range v {
			if x == 0 {
				*acc = 0
				return
			}
		}
	}
}

// foldCols folds v[j] into acc[j] (consecutive outputs), at reduced position pos.
func foldCols[T number, A accT](op backend.ReduceOp, v []T, acc []A, idx []int64, pos int64) {
	acc = acc[:len(v)]
	switch op {
	case backend.Sum, backend.Mean:
		for j, x := range v {
			acc[j] += A(x)
		}
	case backend.Prod:
		for j, x := range v {
			acc[j] *= A(x)
		}
	case backend.Max:
		for j, x := range v {
			if a := A(x); a > acc[j] || a != a {
				acc[j] = a
			}
		}
	case backend.Min:
		for j, x := range v {
			if a := A(x); a < acc[j] || a != a {
				acc[j] = a
			}
		}
	case backend.ArgMax, backend.ArgMin:
		idx = idx[:len(v)]
		for j, x := range v {
			a, m := A(x), acc[j]
			if idx[j] >= 0 && m != m {
				continue
			}
			if idx[j] < 0 || a != a || (op == backend.ArgMax && a > m) || (op == backend.ArgMin && a < m) {
				acc[j], idx[j] = a, pos
			}
		}
	case backend.Any:
		for j, x := range v {
			if x != 0 {
				acc[j] = 1
			}
		}
	case backend.All:
		for j, x := range v {
			if x == 0 {
				acc[j] = 0
			}
		}
	}
}

// mergeInto combines a later partial o into a (same op and output range).
func (a *acc) mergeInto(o *acc) {
	for j := range max(len(o.f), len(o.i)) {
		k := o.base + j - a.base
		if a.isF {
			mergeOne(a.op, &a.f[k], o.f[j], a.idx, o.idx, k, j)
		} else {
			mergeOne(a.op, &a.i[k], o.i[j], a.idx, o.idx, k, j)
		}
	}
}

func mergeOne[A accT](op backend.ReduceOp, d *A, s A, di, si []int64, k, j int) {
	switch op {
	case backend.Sum, backend.Mean:
		*d += s
	case backend.Prod:
		*d *= s
	case backend.Max:
		if s > *d || (s != s && *d == *d) {
			*d = s
		}
	case backend.Min:
		if s < *d || (s != s && *d == *d) {
			*d = s
		}
	case backend.ArgMax, backend.ArgMin:
		if si[j] < 0 || (di[k] >= 0 && *d != *d) {
			return
		}
		if di[k] < 0 || s != s || (op == backend.ArgMax && s > *d) || (op == backend.ArgMin && s < *d) {
			*d, di[k] = s, si[j]
		}
	case backend.Any:
		if s != 0 {
			*d = 1
		}
	case backend.All:
		if s == 0 {
			*d = 0
		}
	}
}

func (a *acc) run(dt backend.DType, v vec, k int, pos0 int64) {
	k -= a.base
	var ip *int64
	if a.idx != nil {
		ip = &a.idx[k]
	}
	if a.isF {
		if dt == backend.Float32 {
			foldRun(a.op, v.f32, &a.f[k], ip, pos0)
		} else {
			foldRun(a.op, v.f64, &a.f[k], ip, pos0)
		}
		return
	}
	switch dt {
	case backend.Int32:
		foldRun(a.op, v.i32, &a.i[k], ip, pos0)
	case backend.Int64:
		foldRun(a.op, v.i64, &a.i[k], ip, pos0)
	case backend.Uint8:
		foldRun(a.op, v.u8, &a.i[k], ip, pos0)
	}
}

func (a *acc) cols(dt backend.DType, v vec, k int, pos int64) {
	k -= a.base
	n := max(len(v.f32), len(v.f64), len(v.i32), len(v.i64), len(v.u8))
	var ip []int64
	if a.idx != nil {
		ip = a.idx[k : k+n]
	}
	if a.isF {
		if dt == backend.Float32 {
			foldCols(a.op, v.f32, a.f[k:k+n], ip, pos)
		} else {
			foldCols(a.op, v.f64, a.f[k:k+n], ip, pos)
		}
		return
	}
	switch dt {
	case backend.Int32:
		foldCols(a.op, v.i32, a.i[k:k+n], ip, pos)
	case backend.Int64:
		foldCols(a.op, v.i64, a.i[k:k+n], ip, pos)
	case backend.Uint8:
		foldCols(a.op, v.u8, a.i[k:k+n], ip, pos)
	}
}

// permuteProgram returns p with its dimensions reordered by perm.
func permuteProgram(p *backend.Program, perm []int) *backend.Program {
	q := *p
	q.Shape = make([]int, len(perm))
	for i, d := range perm {
		q.Shape[i] = p.Shape[d]
	}
	q.Inputs = make([]backend.Operand, len(p.Inputs))
	for i, in := range p.Inputs {
		q.Inputs[i] = backend.Operand{Buf: in.Buf, Layout: in.Layout.Permute(perm)}
	}
	return &q
}

func hasIota(p *backend.Program) bool {
	for _, n := range p.Nodes {
		if n.Op == backend.OpIota {
			return true
		}
	}
	return false
}

// materialize evaluates p into a fresh contiguous buffer and returns a
// program that reads it.
func (b *Backend) materialize(p *backend.Program) (*backend.Program, func(), error) {
	dt := p.Result()
	buf, err := b.Alloc(dt, p.Size())
	if err != nil {
		return nil, nil, err
	}
	l := backend.Contiguous(p.Shape)
	if err := b.Eval(p, backend.Operand{Buf: buf, Layout: l}); err != nil {
		b.Free(buf)
		return nil, nil, err
	}
	q := &backend.Program{Shape: append([]int(nil), p.Shape...), Inputs: []backend.Operand{{Buf: buf, Layout: l}},
		Nodes: []backend.Node{{Op: backend.OpInput, DType: dt}}}
	return q, func() { b.Free(buf) }, nil
}

// Reduce implements backend.Backend.
func (b *Backend) Reduce(r *backend.Reduction) error {
	in := r.In
	shape := in.Shape
	reduced := make([]bool, len(shape))
	for _, a := range r.Axes {
		reduced[a] = true
	}
	var kept, red []int
	nK, nR := 1, 1
	for d := range shape {
		if reduced[d] {
			red = append(red, d)
			nR *= shape[d]
		} else {
			kept = append(kept, d)
			nK *= shape[d]
		}
	}
	dt := in.Result()
	outDT := r.Out.Buf.DType()
	if nK == 0 {
		return nil
	}
	isF := dt.IsFloat()
	if nR == 0 {
		a := newAcc(r.Op, isF, 0, nK)
		return b.store(r, a, nR, outDT)
	}
	cols := nK > 1 && fastestKept(in, reduced) && nK*b.workers*8 <= 64<<20
	var perm []int
	if cols {
		perm = append(append(perm, red...), kept...)
	} else {
		perm = append(append(perm, kept...), red...)
	}
	if !sort.IntsAreSorted(perm) && hasIota(in) {
		q, free, err := b.materialize(in)
		if err != nil {
			return err
		}
		defer free()
		in = q
	}
	pl := newPlan(permuteProgram(in, perm))
	var mu sync.Mutex
	parts := map[int]*acc{}
	b.parallel(nK*nR, serialBelow, blockSize, func(lo, hi int) {
		st := pl.newState(blockSize)
		var a *acc
		if cols {
			a = newAcc(r.Op, isF, 0, nK)
		} else {
			a = newAcc(r.Op, isF, lo/nR, (hi-1)/nR-lo/nR+1)
		}
		var tmp []uint8
		for f0 := lo; f0 < hi; f0 += blockSize {
			m := min(blockSize, hi-f0)
			v := st.block(f0, m, nil)
			vdt := dt
			if dt == backend.Bool {
				if tmp == nil {
					tmp = make([]uint8, blockSize)
				}
				castFromBool(tmp[:m], v.b)
				v, vdt = vec{u8: tmp[:m]}, backend.Uint8
			}
			for j := 0; j < m; {
				f := f0 + j
				if cols {
					k := f % nK
					run := min(nK-k, m-j)
					a.cols(vdt, v.sub(vdt, j, j+run), k, int64(f/nK))
					j += run
				} else {
					k := f / nR
					run := min((k+1)*nR-f, m-j)
					a.run(vdt, v.sub(vdt, j, j+run), k, int64(f-k*nR))
					j += run
				}
			}
		}
		mu.Lock()
		parts[lo] = a
		mu.Unlock()
	})
	los := make([]int, 0, len(parts))
	for lo := range parts {
		los = append(los, lo)
	}
	sort.Ints(los)
	total := newAcc(r.Op, isF, 0, nK)
	for _, lo := range los {
		total.mergeInto(parts[lo])
	}
	return b.store(r, total, nR, outDT)
}

// fastestKept reports whether the input with the most elements in memory
// order varies fastest along a kept dimension.
func fastestKept(p *backend.Program, reduced []bool) bool {
	for _, in := range p.Inputs {
		l := in.Layout
		best, bestSt := -1, 0
		for d, n := range l.Shape {
			if n > 1 && l.Strides[d] != 0 {
				s := l.Strides[d]
				if s < 0 {
					s = -s
				}
				if best < 0 || s < bestSt {
					best, bestSt = d, s
				}
			}
		}
		if best >= 0 {
			return !reduced[best]
		}
	}
	return false
}

// store converts the accumulators to the output dtype and writes them.
func (b *Backend) store(r *backend.Reduction, a *acc, nR int, outDT backend.DType) error {
	n := max(len(a.f), len(a.i))
	v := makeVec(outDT, n)
	switch {
	case r.Op == backend.ArgMax || r.Op == backend.ArgMin:
		copy(v.i64, a.idx)
	case a.isF:
		f := a.f
		if r.Op == backend.Mean {
			for k := range f {
				f[k] /= float64(nR)
			}
		}
		if outDT == backend.Float32 {
			castNum(v.f32, f)
		} else {
			copy(v.f64, f)
		}
	default:
		cast(backend.Int64, outDT, v, vec{i64: a.i})
	}
	ob := asBuffer(r.Out.Buf)
	l := strided{r.Out.Layout.Shape, r.Out.Layout.Strides, r.Out.Layout.Offset}
	scatterVec(outDT, ob, v, &l, 0)
	return nil
}
