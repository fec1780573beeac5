package cpu

import (
	"github.com/gocu-dev/gocu/array/internal/backend"
)

// blockSize is how many elements each operation of a program processes at
// a time: large enough to amortise dispatch, small enough that a dozen
// intermediate blocks stay in L1/L2.
const blockSize = 1024

// serialBelow is the element count under which operations stay on the
// calling goroutine (starting goroutines costs more than it saves).
const serialBelow = 1 << 15

type slotKind uint8

const (
	slotScratch slotKind = iota // computed into its own block buffer
	slotAlias                   // contiguous input: a window of the buffer itself
	slotGather                  // strided input: gathered into a block buffer
	slotConst                   // scalar or broadcast value: filled once
	slotIota                    // flat index
)

type slot struct {
	kind  slotKind
	dt    backend.DType
	in    *Buffer
	lay   strided
	node  backend.Node
	argDT backend.DType
}

// plan is a program prepared for block evaluation.
type plan struct {
	p     *backend.Program
	slots []slot
	n     int
}

func newPlan(p *backend.Program) *plan {
	pl := &plan{p: p, slots: make([]slot, len(p.Nodes)), n: p.Size()}
	for i, nd := range p.Nodes {
		s := slot{dt: nd.DType, node: nd}
		switch nd.Op {
		case backend.OpInput:
			in := p.Inputs[nd.Args[0]]
			s.in = asBuffer(in.Buf)
			s.lay = strided{in.Layout.Shape, in.Layout.Strides, in.Layout.Offset}
			switch {
			case in.Layout.IsConstant():
				s.kind = slotConst
			case in.Layout.IsContiguous():
				s.kind = slotAlias
			default:
				s.kind = slotGather
			}
		case backend.OpScalar:
			s.kind = slotConst
		case backend.OpIota:
			s.kind = slotIota
		default:
			s.kind = slotScratch
			s.argDT = p.Nodes[nd.Args[0]].DType
			if nd.Op == backend.OpWhere {
				s.argDT = p.Nodes[nd.Args[1]].DType
			}
		}
		pl.slots[i] = s
	}
	return pl
}

// state is one worker's registers for a plan.
type state struct {
	pl   *plan
	regs []vec // block buffers (or the filled constant) per slot
	view []vec // the current block's values per slot
}

func (pl *plan) newState(maxBlock int) *state {
	st := &state{pl: pl, regs: make([]vec, len(pl.slots)), view: make([]vec, len(pl.slots))}
	for i := range pl.slots {
		s := &pl.slots[i]
		switch s.kind {
		case slotAlias:
			continue
		case slotConst:
			st.regs[i] = makeVec(s.dt, maxBlock)
			if s.node.Op == backend.OpScalar {
				fillScalar(st.regs[i], pl.p.Scalars[s.node.Args[0]])
			} else if pl.n > 0 {
				one := makeVec(s.dt, 1)
				gatherVec(s.dt, one, s.in, &strided{offset: s.lay.offset}, 0)
				broadcastVec(s.dt, st.regs[i], one)
			}
		default:
			if i == len(pl.slots)-1 && s.kind == slotScratch {
				// The result may be computed straight into the output;
				// allocate lazily in block() when it is not.
				continue
			}
			st.regs[i] = makeVec(s.dt, maxBlock)
		}
	}
	return st
}

func broadcastVec(dt backend.DType, d, one vec) {
	switch dt {
	case backend.Float32:
		fill(d.f32, one.f32[0])
	case backend.Float64:
		fill(d.f64, one.f64[0])
	case backend.Int32:
		fill(d.i32, one.i32[0])
	case backend.Int64:
		fill(d.i64, one.i64[0])
	case backend.Uint8:
		fill(d.u8, one.u8[0])
	case backend.Bool:
		fill(d.b, one.b[0])
	case backend.Int8:
		fill(d.i8, one.i8[0])
	case backend.Int16:
		fill(d.i16, one.i16[0])
	case backend.Uint16:
		fill(d.u16, one.u16[0])
	case backend.Uint32:
		fill(d.u32, one.u32[0])
	case backend.Uint64:
		fill(d.u64, one.u64[0])
	case backend.Float16:
		fill(d.f16, one.f16[0])
	case backend.BFloat16:
		fill(d.bf16, one.bf16[0])
	case backend.Float8E4M3:
		fill(d.e4m3, one.e4m3[0])
	case backend.Float8E5M2:
		fill(d.e5m2, one.e5m2[0])
	}
}

// block evaluates flat positions f0..f0+n-1. If dst is non-nil and the
// result is a computed node, it is written into *dst (n elements);
// otherwise the returned vec holds it (valid until the next call).
func (st *state) block(f0, n int, dst *vec) vec {
	pl := st.pl
	last := len(pl.slots) - 1
	for i := range pl.slots {
		s := &pl.slots[i]
		switch s.kind {
		case slotAlias:
			o := s.lay.offset + f0
			st.view[i] = bufVec(s.in).sub(s.dt, o, o+n)
		case slotGather:
			v := st.regs[i].sub(s.dt, 0, n)
			gatherVec(s.dt, v, s.in, &s.lay, f0)
			st.view[i] = v
		case slotConst:
			st.view[i] = st.regs[i].sub(s.dt, 0, n)
		case slotIota:
			v := st.regs[i].sub(s.dt, 0, n)
			for k := range v.i64 {
				v.i64[k] = int64(f0 + k)
			}
			st.view[i] = v
		case slotScratch:
			var d vec
			if i == last && dst != nil {
				d = *dst
			} else {
				if st.regs[i].isNil(s.dt) {
					st.regs[i] = makeVec(s.dt, max(n, blockSize))
				}
				d = st.regs[i].sub(s.dt, 0, n)
			}
			var args [3]vec
			for a := 0; a < s.node.Op.Arity(); a++ {
				args[a] = st.view[s.node.Args[a]]
			}
			execNode(s.node.Op, s.dt, s.argDT, d, args)
			st.view[i] = d
		}
	}
	return st.view[last]
}

func (v vec) isNil(dt backend.DType) bool {
	switch dt {
	case backend.Float32:
		return v.f32 == nil
	case backend.Float64:
		return v.f64 == nil
	case backend.Int32:
		return v.i32 == nil
	case backend.Int64:
		return v.i64 == nil
	case backend.Uint8:
		return v.u8 == nil
	case backend.Int8:
		return v.i8 == nil
	case backend.Int16:
		return v.i16 == nil
	case backend.Uint16:
		return v.u16 == nil
	case backend.Uint32:
		return v.u32 == nil
	case backend.Uint64:
		return v.u64 == nil
	case backend.Float16:
		return v.f16 == nil
	case backend.BFloat16:
		return v.bf16 == nil
	case backend.Float8E4M3:
		return v.e4m3 == nil
	case backend.Float8E5M2:
		return v.e5m2 == nil
	}
	return v.b == nil
}

// Eval implements backend.Backend.
func (b *Backend) Eval(p *backend.Program, out backend.Operand) error {
	n := p.Size()
	if n == 0 {
		return nil
	}
	pl := newPlan(p)
	ob := asBuffer(out.Buf)
	dt := p.Result()
	contig := out.Layout.IsContiguous()
	ol := strided{out.Layout.Shape, out.Layout.Strides, out.Layout.Offset}
	grain := serialBelow
	if len(p.Nodes) > 4 {
		grain = serialBelow / 4 // heavier programs pay off sooner
	}
	b.parallel(n, grain, blockSize, func(lo, hi int) {
		st := pl.newState(min(blockSize, hi-lo))
		for f0 := lo; f0 < hi; f0 += blockSize {
			m := min(blockSize, hi-f0)
			if contig {
				o := out.Layout.Offset + f0
				d := bufVec(ob).sub(dt, o, o+m)
				if r := st.block(f0, m, &d); pl.slots[len(pl.slots)-1].kind != slotScratch {
					copyVec(dt, d, r)
				}
				continue
			}
			r := st.block(f0, m, nil)
			scatterVec(dt, ob, r, &ol, f0)
		}
	})
	return nil
}
