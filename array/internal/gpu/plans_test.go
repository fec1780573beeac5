package gpu

import (
	"bytes"
	"fmt"
	"math"
	"testing"

	"github.com/gocu-dev/gocu/array/internal/backend"
	"github.com/gocu-dev/gocu/array/internal/cudagen"
)

// These tests run without a GPU: they check that a plan made for one
// request and cached under its key computes, for any other request with
// the same key, exactly the launches cudagen plans for that request (same
// kernels, grids and argument values), and that keys tell apart requests
// whose plans differ.

func testBackend() *Backend {
	b := &Backend{name: "cuda:test"}
	b.plans.init(planLimit)
	return b
}

// fakeLoad stands in for loading a kernel on a device.
func fakeLoad(k *cudagen.Kernel) (*kfunc, error) {
	return &kfunc{mod: &module{}, perSM: 8}, nil
}

func testOptions() cudagen.Options {
	return cudagen.Options{SMs: 132, Aligned: func(o backend.Operand, n int) bool {
		g := o.Buf.(*Buffer)
		return (g.ptr+uint64(o.Layout.Offset*g.dt.Size()))%uint64(n) == 0
	}}
}

// world is a set of fake device buffers; shift moves every address by a
// multiple of 512 bytes (alignments unchanged).
type world struct {
	b    *Backend
	next uint64
}

func (w *world) buf(dt backend.DType, n int) *Buffer {
	w.next += 1 << 20
	return &Buffer{ptr: w.next, dt: dt, n: n, be: w.b}
}

// expectArgs resolves a cudagen launch's arguments against the request's
// buffers, with scratch buffers at the compiled plan's offsets.
func expectArgs(l cudagen.Launch, p *plan, arena, zero uint64) []uint64 {
	var out []uint64
	for _, a := range l.Args {
		switch {
		case a.Type == cudagen.Ptr && a.Operand < 0:
			s := -1 - a.Operand
			base := arena
			if p.zero[s] {
				base = zero
			}
			// The scratch dtype size is not in the Arg; offsets are 0 in
			// every plan cudagen makes.
			out = append(out, base+uint64(p.scratch[s])+uint64(a.Offset))
		case a.Type == cudagen.Ptr:
			g := l.Operands[a.Operand].Buf.(*Buffer)
			out = append(out, g.ptr+uint64(a.Offset*g.dt.Size()))
		default:
			out = append(out, a.Bits)
		}
	}
	return out
}

// checkRebind plans req1, then binds the plan for req2 and compares with
// cudagen's own plan for req2.
func checkRebind(t *testing.T, what string, key1, key2 []byte, plan1, plan2 func() (*cudagen.Plan, error), c1, c2 *call) {
	t.Helper()
	if !bytes.Equal(key1, key2) {
		t.Fatalf("%s: keys differ for requests that differ only in buffers and values:\n%x\n%x", what, key1, key2)
	}
	cp1, err := plan1()
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	p, err := compilePlan(cp1, c1, nil, fakeLoad)
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	cp2, err := plan2()
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	if len(cp2.Launches) != len(p.launches) {
		t.Fatalf("%s: %d launches cached, %d planned", what, len(p.launches), len(cp2.Launches))
	}
	const arena, zero = 0xa000000, 0xb000000
	for i, l := range cp2.Launches {
		pl := &p.launches[i]
		grid := [3]int{int(pl.cfg.Grid.X), int(pl.cfg.Grid.Y), int(pl.cfg.Grid.Z)}
		if grid != [3]int{l.Grid[0], max(l.Grid[1], 1), max(l.Grid[2], 1)} || int(pl.cfg.Block.X) != l.Block {
			t.Errorf("%s: launch %d: cached grid %v block %d, planned %v block %d", what, i, grid, pl.cfg.Block.X, l.Grid, l.Block)
		}
		got := make([]uint64, len(pl.args))
		p.bind(pl, c2, arena, zero, got)
		want := expectArgs(l, p, arena, zero)
		for j := range want {
			if got[j] != want[j] {
				t.Errorf("%s: launch %d (%s) argument %d (%v): bound %#x, planned %#x", what, i, l.Kernel.Name, j, l.Kernel.Params[j], got[j], want[j])
			}
		}
	}
}

func contiguousOperand(g *Buffer, shape ...int) backend.Operand {
	return backend.Operand{Buf: g, Layout: backend.Contiguous(shape)}
}

// program builds in0*s0 + in1 (+ s1 * iota) over shape.
func twoInputProgram(shape []int, in0, in1 backend.Operand, s0, s1 float64, iota bool) *backend.Program {
	dt := in0.DType()
	p := &backend.Program{Shape: shape, Inputs: []backend.Operand{in0, in1},
		Scalars: []backend.Scalar{{DType: dt, F: s0}},
		Nodes: []backend.Node{{Op: backend.OpInput, DType: dt, Args: [3]int32{0}}, {Op: backend.OpScalar, DType: dt},
			{Op: backend.OpMul, DType: dt, Args: [3]int32{0, 1}}, {Op: backend.OpInput, DType: dt, Args: [3]int32{1}},
			{Op: backend.OpAdd, DType: dt, Args: [3]int32{2, 3}}}}
	if iota {
		p.Scalars = append(p.Scalars, backend.Scalar{DType: dt, F: s1})
		p.Nodes = append(p.Nodes, backend.Node{Op: backend.OpIota, DType: backend.Int64},
			backend.Node{Op: backend.OpCast, DType: dt, Args: [3]int32{5}},
			backend.Node{Op: backend.OpScalar, DType: dt, Args: [3]int32{1}},
			backend.Node{Op: backend.OpMul, DType: dt, Args: [3]int32{6, 7}},
			backend.Node{Op: backend.OpAdd, DType: dt, Args: [3]int32{4, 8}})
	}
	return p
}

func TestEvalPlansRebind(t *testing.T) {
	b := testBackend()
	o := testOptions()
	layouts := []struct {
		name  string
		shape []int
		in0   func(w *world) backend.Operand
		in1   func(w *world) backend.Operand
	}{
		{"contiguous 4099", []int{4099}, func(w *world) backend.Operand { return contiguousOperand(w.buf(backend.Float32, 4099), 4099) },
			func(w *world) backend.Operand { return contiguousOperand(w.buf(backend.Float32, 4099), 4099) }},
		{"tiny", []int{16}, func(w *world) backend.Operand { return contiguousOperand(w.buf(backend.Float32, 16), 16) },
			func(w *world) backend.Operand { return contiguousOperand(w.buf(backend.Float32, 16), 16) }},
		{"transposed and broadcast", []int{30, 70}, func(w *world) backend.Operand {
			return backend.Operand{Buf: w.buf(backend.Float64, 2100), Layout: backend.Layout{Shape: []int{30, 70}, Strides: []int{1, 30}, Offset: 0}}
		}, func(w *world) backend.Operand {
			return backend.Operand{Buf: w.buf(backend.Float64, 80), Layout: backend.Layout{Shape: []int{30, 70}, Strides: []int{0, 1}, Offset: 3}}
		}},
		{"reversed, offset", []int{1000}, func(w *world) backend.Operand {
			return backend.Operand{Buf: w.buf(backend.Float32, 1010), Layout: backend.Layout{Shape: []int{1000}, Strides: []int{-1}, Offset: 1005}}
		}, func(w *world) backend.Operand {
			return backend.Operand{Buf: w.buf(backend.Float32, 1010), Layout: backend.Layout{Shape: []int{1000}, Strides: []int{1}, Offset: 1}}
		}},
	}
	for _, lc := range layouts {
		for _, iota := range []bool{false, true} {
			w1, w2 := &world{b: b}, &world{b: b, next: 1 << 40}
			in0, in1 := lc.in0(w1), lc.in1(w1)
			out1 := contiguousOperand(w1.buf(in0.DType(), backend.Size(lc.shape)), lc.shape...)
			p1 := twoInputProgram(lc.shape, in0, in1, 1.5, 2, iota)
			j0, j1 := lc.in0(w2), lc.in1(w2)
			out2 := contiguousOperand(w2.buf(in0.DType(), backend.Size(lc.shape)), lc.shape...)
			p2 := twoInputProgram(lc.shape, j0, j1, -7.25, 1e9, iota)
			bufs1 := []*Buffer{in0.Buf.(*Buffer), in1.Buf.(*Buffer), out1.Buf.(*Buffer)}
			bufs2 := []*Buffer{j0.Buf.(*Buffer), j1.Buf.(*Buffer), out2.Buf.(*Buffer)}
			checkRebind(t, fmt.Sprintf("eval %s iota=%v", lc.name, iota),
				evalKey(nil, p1, out1, bufs1), evalKey(nil, p2, out2, bufs2),
				func() (*cudagen.Plan, error) { return cudagen.PlanEval(p1, out1, o) },
				func() (*cudagen.Plan, error) { return cudagen.PlanEval(p2, out2, o) },
				&call{bufs: bufs1, scalars: p1.Scalars}, &call{bufs: bufs2, scalars: p2.Scalars})
		}
	}
}

func TestReducePlansRebind(t *testing.T) {
	b := testBackend()
	o := testOptions()
	cases := []struct {
		name  string
		op    backend.ReduceOp
		dt    backend.DType
		shape []int
		lay   func(shape []int) backend.Layout
		axes  []int
	}{
		{"sum all contiguous", backend.Sum, backend.Float32, []int{1 << 16}, backend.Contiguous, []int{0}},
		{"argmax all transposed", backend.ArgMax, backend.Float64, []int{40, 50}, func(s []int) backend.Layout {
			return backend.Layout{Shape: s, Strides: []int{1, 40}}
		}, []int{0, 1}},
		{"mean rows", backend.Mean, backend.Float32, []int{300, 700}, backend.Contiguous, []int{1}},
		{"max columns", backend.Max, backend.Int32, []int{2000, 30}, backend.Contiguous, []int{0}},
		{"empty axis", backend.Sum, backend.Float32, []int{5, 0}, backend.Contiguous, []int{1}},
	}
	for _, c := range cases {
		mk := func(w *world, scale float64) (*backend.Reduction, []*Buffer) {
			in := w.buf(c.dt, max(backend.Size(c.shape), 1))
			p := &backend.Program{Shape: c.shape, Inputs: []backend.Operand{{Buf: in, Layout: c.lay(c.shape)}},
				Nodes: []backend.Node{{Op: backend.OpInput, DType: c.dt}}}
			if c.dt.IsFloat() {
				p.Scalars = []backend.Scalar{{DType: c.dt, F: scale}}
				p.Nodes = append(p.Nodes, backend.Node{Op: backend.OpScalar, DType: c.dt}, backend.Node{Op: backend.OpMul, DType: c.dt, Args: [3]int32{0, 1}})
			}
			var kept []int
			for d, n := range c.shape {
				if !containsInt(c.axes, d) {
					kept = append(kept, n)
				}
			}
			odt := c.dt
			if c.op == backend.ArgMax {
				odt = backend.Int64
			}
			out := w.buf(odt, max(backend.Size(kept), 1))
			r := &backend.Reduction{Op: c.op, In: p, Axes: c.axes, Out: backend.Operand{Buf: out, Layout: backend.Contiguous(kept)}}
			return r, []*Buffer{in, out}
		}
		r1, bufs1 := mk(&world{b: b}, 0.5)
		r2, bufs2 := mk(&world{b: b, next: 1 << 40}, -3)
		checkRebind(t, "reduce "+c.name, reduceKey(nil, r1, bufs1), reduceKey(nil, r2, bufs2),
			func() (*cudagen.Plan, error) { return cudagen.PlanReduce(r1, o) },
			func() (*cudagen.Plan, error) { return cudagen.PlanReduce(r2, o) },
			&call{bufs: bufs1, scalars: r1.In.Scalars}, &call{bufs: bufs2, scalars: r2.In.Scalars})
	}
}

func TestAxisRandomMatMulPlansRebind(t *testing.T) {
	b := testBackend()
	o := testOptions()
	mkAxis := func(w *world, s float64) (*backend.AxisOp, []*Buffer) {
		in, out := w.buf(backend.Float32, 600), w.buf(backend.Float32, 600)
		p := &backend.Program{Shape: []int{20, 30}, Inputs: []backend.Operand{{Buf: in, Layout: backend.Layout{Shape: []int{20, 30}, Strides: []int{1, 20}}}},
			Scalars: []backend.Scalar{{DType: backend.Float32, F: s}},
			Nodes: []backend.Node{{Op: backend.OpInput, DType: backend.Float32}, {Op: backend.OpScalar, DType: backend.Float32},
				{Op: backend.OpSub, DType: backend.Float32, Args: [3]int32{0, 1}}}}
		return &backend.AxisOp{Kind: backend.Softmax, In: p, Axis: 1, Out: contiguousOperand(out, 20, 30)}, []*Buffer{in, out}
	}
	a1, ab1 := mkAxis(&world{b: b}, 1)
	a2, ab2 := mkAxis(&world{b: b, next: 1 << 40}, 2)
	checkRebind(t, "softmax", axisKey(nil, a1, ab1), axisKey(nil, a2, ab2),
		func() (*cudagen.Plan, error) { return cudagen.PlanAxis(a1, o) },
		func() (*cudagen.Plan, error) { return cudagen.PlanAxis(a2, o) },
		&call{bufs: ab1, scalars: a1.In.Scalars}, &call{bufs: ab2, scalars: a2.In.Scalars})

	mkRand := func(w *world, seed uint64) (*backend.Random, []*Buffer) {
		out := w.buf(backend.Float32, 1003)
		return &backend.Random{Out: backend.Operand{Buf: out, Layout: backend.Layout{Shape: []int{1000}, Strides: []int{1}, Offset: 3}},
			Dist: backend.Normal, Seed: seed, Counter: seed * 3, P0: float64(seed), P1: 2}, []*Buffer{out}
	}
	r1, rb1 := mkRand(&world{b: b}, 5)
	r2, rb2 := mkRand(&world{b: b, next: 1 << 40}, 99)
	checkRebind(t, "random", randomKey(nil, r1, rb1), randomKey(nil, r2, rb2),
		func() (*cudagen.Plan, error) { return cudagen.PlanRandom(r1, o) },
		func() (*cudagen.Plan, error) { return cudagen.PlanRandom(r2, o) },
		&call{bufs: rb1, rnd: r1}, &call{bufs: rb2, rnd: r2})

	// A product of a matrix with itself: A and B share a buffer.
	mkMM := func(w *world) (*backend.MatMul, []*Buffer) {
		a, c := w.buf(backend.Int32, 2*9*9), w.buf(backend.Int32, 2*9*9)
		m := &backend.MatMul{M: 9, N: 9, K: 9, Batch: []int{2},
			A: backend.Matrix{Buf: a, BatchStrides: []int{81}, RowStride: 9, ColStride: 1},
			B: backend.Matrix{Buf: a, BatchStrides: []int{81}, RowStride: 1, ColStride: 9},
			C: backend.Matrix{Buf: c, RowStride: 9, ColStride: 1}}
		return m, []*Buffer{a, a, c}
	}
	m1, mb1 := mkMM(&world{b: b})
	m2, mb2 := mkMM(&world{b: b, next: 1 << 40})
	checkRebind(t, "int matmul", matmulKey(nil, m1, mb1), matmulKey(nil, m2, mb2),
		func() (*cudagen.Plan, error) { return cudagen.PlanIntMatMul(m1, o) },
		func() (*cudagen.Plan, error) { return cudagen.PlanIntMatMul(m2, o) },
		&call{bufs: mb1}, &call{bufs: mb2})
}

// Keys change with everything a plan depends on, and only with that.
func TestKeysSeparatePlans(t *testing.T) {
	b := testBackend()
	w := &world{b: b}
	x, y, out := w.buf(backend.Float32, 4096), w.buf(backend.Float32, 4096), w.buf(backend.Float32, 4096)
	key := func(xl, yl backend.Layout, s float64, xb, yb *Buffer, dt backend.DType) string {
		p := twoInputProgram([]int{4000}, backend.Operand{Buf: xb, Layout: xl}, backend.Operand{Buf: yb, Layout: yl}, s, 0, false)
		if dt != backend.Float32 {
			for i := range p.Nodes {
				p.Nodes[i].DType = dt
			}
			p.Scalars[0].DType = dt
		}
		return string(evalKey(nil, p, contiguousOperand(out, 4000), []*Buffer{xb, yb, out}))
	}
	c := backend.Contiguous([]int{4000})
	base := key(c, c, 1, x, y, backend.Float32)
	same := map[string]string{
		"another scalar value":          key(c, c, -99, x, y, backend.Float32),
		"other buffers, same alignment": key(c, c, 1, w.buf(backend.Float32, 4096), w.buf(backend.Float32, 4096), backend.Float32),
	}
	for what, k := range same {
		if k != base {
			t.Errorf("%s changed the key", what)
		}
	}
	shifted := &Buffer{ptr: x.ptr + 4, dt: backend.Float32, n: 4096, be: b}
	offset := c
	offset.Offset = 8
	differ := map[string]string{
		"a misaligned input":       key(c, c, 1, shifted, y, backend.Float32),
		"an offset":                key(offset, c, 1, x, y, backend.Float32),
		"a stride":                 key(backend.Layout{Shape: []int{4000}, Strides: []int{0}}, c, 1, x, y, backend.Float32),
		"a shared buffer":          key(c, c, 1, x, x, backend.Float32),
		"a dtype":                  key(c, c, 1, x, y, backend.Float64),
		"the other input's stride": key(c, backend.Layout{Shape: []int{4000}, Strides: []int{1}, Offset: 1}, 1, x, y, backend.Float32),
	}
	for what, k := range differ {
		if k == base {
			t.Errorf("%s did not change the key", what)
		}
	}
}

// Scalars travel as cudagen binds them: double bits for floats, int64
// for the rest.
func TestScalarBits(t *testing.T) {
	if scalarBits(backend.Scalar{DType: backend.Float32, F: 1.5}) != math.Float64bits(1.5) {
		t.Error("float scalar")
	}
	if scalarBits(backend.Scalar{DType: backend.Int32, I: -3}) != uint64(0xfffffffffffffffd) {
		t.Error("int scalar")
	}
}

// Zeroed tickets of one plan get distinct words; a plan's arena scratch
// buffers are 256-byte aligned and disjoint.
func TestScratchLayout(t *testing.T) {
	cp := &cudagen.Plan{Scratch: []cudagen.Scratch{{DType: backend.Float64, Len: 3}, {DType: backend.Int32, Len: 1, Zero: true},
		{DType: backend.Int64, Len: 100}, {DType: backend.Int32, Len: 2, Zero: true}}}
	p, err := compilePlan(cp, &call{}, nil, fakeLoad)
	if err != nil {
		t.Fatal(err)
	}
	if p.scratch[0] != 0 || p.scratch[2] != 256 || p.arena != 256+800 {
		t.Errorf("arena offsets %v, size %d", p.scratch, p.arena)
	}
	if p.scratch[1] != 0 || p.scratch[3] != 4 || !p.zero[1] || !p.zero[3] {
		t.Errorf("ticket offsets %v", p.scratch)
	}
}

func containsInt(s []int, v int) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}
