package cudagen

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/gocu-dev/gocu/array/internal/backend"
	"github.com/gocu-dev/gocu/array/internal/cpu"
	"github.com/gocu-dev/gocu/internal/clangtest"
)

// fastDiv is the kernels' division by the DivMagic of d.
func fastDiv(t *testing.T, n uint32, m, s uint32) uint32 {
	sum := uint64(uint32(uint64(n)*uint64(m)>>32)) + uint64(n)
	if sum>>32 != 0 {
		t.Fatalf("n %d, m %d: umulhi(n, m) + n overflows 32 bits", n, m)
	}
	return uint32(sum) >> s
}

func TestDivMagic(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	const top = 1<<31 - 1
	ds := []int64{1, 2, 3, 5, 6, 7, 10, 12, 64, 641, 1000, 1024, 65535, 65536, 65537, 1<<30 - 1, 1 << 30, 1<<30 + 1, 1<<31 - 2, top, 1 << 31}
	for k := 0; k < 31; k++ {
		ds = append(ds, 1<<k-1, 1<<k, 1<<k+1)
	}
	for range 2000 {
		ds = append(ds, 1+r.Int64N(top))
		ds = append(ds, 1+r.Int64N(1<<uint(1+r.IntN(30))))
	}
	for _, d := range ds {
		if d < 1 {
			continue
		}
		m, s := DivMagic(d)
		ns := []int64{0, 1, d - 1, d, d + 1, 2*d - 1, 2 * d, top, top - 1, top - d, 1 << 30, 1<<30 - 1}
		for q := top / d; len(ns) < 40 && q > 0; q /= 3 {
			ns = append(ns, q*d-1, q*d, q*d+d-1)
		}
		for range 200 {
			ns = append(ns, r.Int64N(top+1))
		}
		for _, n := range ns {
			if n < 0 || n > top {
				continue
			}
			if got, want := int64(fastDiv(t, uint32(n), m, s)), n/d; got != want {
				t.Fatalf("%d / %d: magic %d shift %d gives %d, want %d", n, d, m, s, got, want)
			}
		}
		a := DivArg(int(d))
		if a.Type != U64 || uint32(a.Bits) != m || uint32(a.Bits>>32) != s {
			t.Fatalf("DivArg(%d) = %#x, want magic %d shift %d", d, a.Bits, m, s)
		}
	}
	// Every n for a few divisors near the edges.
	for _, d := range []int64{1, 3, 7, 1000, 65537, top} {
		m, s := DivMagic(d)
		for n := int64(0); n <= top; n += 1 + n/4096 {
			if got := int64(fastDiv(t, uint32(n), m, s)); got != n/d {
				t.Fatalf("%d / %d: got %d", n, d, got)
			}
		}
	}
	for _, d := range []int64{0, -1, 1<<31 + 1} {
		if m, s := DivMagic(d); m != 0 || s != 0 {
			t.Errorf("DivMagic(%d) = %d, %d, want zeros", d, m, s)
		}
	}
}

// view is a layout over a contiguous buffer of shape base: its dims are
// base's permuted by perm, those in rev reversed, and a dim of size bc
// (stride 0) inserted at position at when bc > 0.
type view struct {
	base, perm, rev []int
	at, bc          int
}

func (v view) layout() (backend.Layout, int) {
	st := backend.ContiguousStrides(v.base)
	var l backend.Layout
	for _, p := range v.perm {
		l.Shape = append(l.Shape, v.base[p])
		l.Strides = append(l.Strides, st[p])
	}
	for _, a := range v.rev {
		l.Offset += (l.Shape[a] - 1) * l.Strides[a]
		l.Strides[a] = -l.Strides[a]
	}
	if v.bc > 0 {
		l.Shape = append(l.Shape[:v.at], append([]int{v.bc}, l.Shape[v.at:]...)...)
		l.Strides = append(l.Strides[:v.at], append([]int{0}, l.Strides[v.at:]...)...)
	}
	return l, backend.Size(v.base)
}

func stridedViews() []view {
	return []view{
		{base: []int{7}, perm: []int{0}, rev: []int{0}},
		{base: []int{65537}, perm: []int{0}, rev: []int{0}},
		{base: []int{1000, 3}, perm: []int{1, 0}},
		{base: []int{2, 65537}, perm: []int{1, 0}},
		{base: []int{65537, 2}, perm: []int{1, 0}, rev: []int{0}},
		{base: []int{7, 1000}, perm: []int{1, 0}, rev: []int{1}},
		{base: []int{1, 7, 3}, perm: []int{2, 0, 1}},
		{base: []int{3, 7, 2}, perm: []int{1, 2, 0}, at: 1, bc: 5},
		{base: []int{7, 1000, 3}, perm: []int{2, 1, 0}},
		{base: []int{7, 3}, perm: []int{0, 1}, at: 2, bc: 1000},
		{base: []int{1000, 1}, perm: []int{1, 0}, at: 0, bc: 3},
		{base: []int{2, 5, 3, 4}, perm: []int{0, 2, 1, 3}},
		{base: []int{4, 16, 3, 8}, perm: []int{0, 2, 1, 3}, rev: []int{3}},
		{base: []int{2, 3, 7, 5}, perm: []int{3, 1, 0, 2}, rev: []int{0, 2}},
		{base: []int{2, 3, 7, 5}, perm: []int{0, 1, 3, 2}, at: 2, bc: 2},
		{base: []int{3, 1, 7, 1, 2}, perm: []int{4, 3, 2, 1, 0}},
		{base: []int{2, 2, 3, 3, 2, 7}, perm: []int{5, 0, 4, 1, 3, 2}},
		{base: []int{2, 2, 2, 3, 3, 2, 7}, perm: []int{0, 6, 1, 5, 2, 4, 3}, rev: []int{1}},
		// Contiguous innermost dims: vectors in the strided path.
		{base: []int{4, 16, 3, 8}, perm: []int{0, 2, 1, 3}},
		{base: []int{3, 16, 5, 8}, perm: []int{2, 1, 0, 3}, rev: []int{0}},
		{base: []int{2, 64, 3, 16}, perm: []int{0, 2, 1, 3}, at: 1, bc: 2},
		{base: []int{8, 100, 6}, perm: []int{1, 0, 2}},
		{base: []int{16, 7, 3, 64}, perm: []int{0, 2, 1, 3}},
	}
}

// TestStridedPlansRunOnHost plans copies and fused programs of transposed,
// reversed and broadcast inputs (and transposed outputs), and reductions
// of such inputs, executes them on the host and compares with the CPU
// backend; every dimension but the outermost is divided by its DivArg.
func TestStridedPlansRunOnHost(t *testing.T) {
	t.Parallel()
	clangtest.Need(t, "clang++-16")
	be := cpu.New(0)
	r := rand.New(rand.NewPCG(21, 22))
	h := newHostRun(t)
	type check struct {
		name  string
		dt    backend.DType
		out   *cpu.Buffer
		exact bool
		cpu   func()
	}
	var checks []check
	fast, vec := 0, 0
	for vi, v := range stridedViews() {
		lay, n := v.layout()
		shape := lay.Shape
		for _, dt := range []backend.DType{backend.Float32, backend.BFloat16, backend.Int64} {
			src := randBuffer(be, r, dt, n)
			p := &backend.Program{Shape: shape, Inputs: []backend.Operand{{Buf: src, Layout: lay}},
				Nodes: []backend.Node{{Op: backend.OpInput, DType: dt}}}
			exact := true
			if dt == backend.Float32 && vi%2 == 0 {
				// A fused add of a contiguous input.
				other := randBuffer(be, r, dt, backend.Size(shape))
				p.Inputs = append(p.Inputs, backend.Operand{Buf: other, Layout: backend.Contiguous(shape)})
				p.Nodes = append(p.Nodes, backend.Node{Op: backend.OpInput, DType: dt, Args: [3]int32{1}},
					backend.Node{Op: backend.OpAdd, DType: dt, Args: [3]int32{0, 1}})
				exact = false
			}
			// The output: contiguous, or (every third case) a transpose.
			olay := backend.Contiguous(shape)
			if vi%3 == 1 && len(shape) > 1 {
				rev := append([]int{}, shape...)
				for i, j := 0, len(rev)-1; i < j; i, j = i+1, j-1 {
					rev[i], rev[j] = rev[j], rev[i]
				}
				st := backend.ContiguousStrides(rev)
				for i := range shape {
					olay.Strides[i] = st[len(shape)-1-i]
				}
			}
			gpuOut := randBuffer(be, r, dt, backend.Size(shape))
			cpuOut := ixClone(be, gpuOut)
			out := backend.Operand{Buf: gpuOut, Layout: olay}
			pl, err := PlanEval(p, out, hostOpts)
			if err != nil {
				t.Fatal(err)
			}
			ksrc := pl.Launches[0].Kernel.Source
			if strings.Contains(ksrc, "__umulhi((unsigned int)rem") {
				fast++
			}
			if strings.Contains(ksrc, "rem = i;") && strings.Contains(ksrc, "inv0 = reinterpret_cast") {
				vec++
			}
			name := fmt.Sprintf("eval %v %v in %s out %s", dt, shape, layoutString(lay), layoutString(olay))
			h.add(name, pl, gpuOut)
			cp, co := p, backend.Operand{Buf: cpuOut, Layout: olay}
			checks = append(checks, check{name, dt, cpuOut, exact, func() {
				if err := be.Eval(cp, co); err != nil {
					t.Fatal(err)
				}
			}})
		}
		// Reductions of the view over its last axis, its first, and all.
		dt := []backend.DType{backend.Float64, backend.Int64}[vi%2]
		src := randBuffer(be, r, dt, n)
		p := &backend.Program{Shape: shape, Inputs: []backend.Operand{{Buf: src, Layout: lay}},
			Nodes: []backend.Node{{Op: backend.OpInput, DType: dt}}}
		all := make([]int, len(shape))
		for d := range all {
			all[d] = d
		}
		axesList := [][]int{{len(shape) - 1}, all}
		if len(shape) > 1 {
			axesList = append(axesList, []int{0})
		}
		for _, axes := range axesList {
			for _, op := range []backend.ReduceOp{backend.Sum, backend.ArgMax} {
				var kshape []int
				for d, k := range shape {
					if !containsInt(axes, d) {
						kshape = append(kshape, k)
					}
				}
				outDT := dt
				if op == backend.ArgMax {
					outDT = backend.Int64
				}
				nk := max(backend.Size(kshape), 1)
				gpuOut := randBuffer(be, r, outDT, nk)
				cpuOut := ixClone(be, gpuOut)
				req := &backend.Reduction{Op: op, In: p, Axes: axes, Out: backend.Operand{Buf: gpuOut, Layout: backend.Contiguous(kshape)}}
				pl, err := PlanReduce(req, hostOpts)
				if err != nil {
					t.Fatal(err)
				}
				name := fmt.Sprintf("%v %v %v %s axes %v", op, dt, shape, layoutString(lay), axes)
				h.add(name, pl, gpuOut)
				cpuReq := *req
				cpuReq.Out.Buf = cpuOut
				checks = append(checks, check{name, outDT, cpuOut, dt != backend.Float64, func() {
					if err := be.Reduce(&cpuReq); err != nil {
						t.Fatal(err)
					}
				}})
			}
		}
	}
	if fast == 0 || vec == 0 {
		t.Fatalf("%d elementwise plans divide by magic numbers, %d move vectors: want some of each", fast, vec)
	}
	got := h.run()
	bad := 0
	for i, c := range checks {
		c.cpu()
		want := rawOf(c.out)
		ok := bytes.Equal(got[i], want)
		if !ok && !c.exact {
			ok = closeRaw(c.dt, got[i], want)
		}
		if !ok {
			bad++
			if bad <= 10 {
				t.Errorf("%s: host and CPU backend differ", c.name)
			}
		}
	}
	t.Logf("%d strided operations executed on the host (elementwise: %d divide by magic numbers, %d move vectors), %d differ", len(checks), fast, vec, bad)
}

func TestSpecForStridedVectors(t *testing.T) {
	yes := func(backend.Operand, int) bool { return true }
	byOffset := func(o backend.Operand, n int) bool { return o.Layout.Offset*o.DType().Size()%n == 0 }
	bthd := view{base: []int{2, 64, 3, 16}, perm: []int{0, 2, 1, 3}}
	cases := []struct {
		name  string
		dt    backend.DType
		v     view
		off   int
		align func(backend.Operand, int) bool
		want  int
	}{
		{"float32 head split", backend.Float32, bthd, 0, yes, 4},
		{"bfloat16 head split", backend.BFloat16, bthd, 0, yes, 8},
		{"int64 head split", backend.Int64, bthd, 0, yes, 2},
		{"offset of 2 floats", backend.Float32, bthd, 2, byOffset, 2},
		{"offset of 1 float", backend.Float32, bthd, 1, byOffset, 1},
		{"unaligned", backend.Float32, bthd, 0, func(backend.Operand, int) bool { return false }, 1},
		{"reversed innermost", backend.Float32, view{base: bthd.base, perm: bthd.perm, rev: []int{3}}, 0, yes, 1},
		{"transposed innermost", backend.Float32, view{base: []int{64, 64}, perm: []int{1, 0}}, 0, yes, 1},
		{"innermost of 6", backend.Float32, view{base: []int{8, 100, 6}, perm: []int{1, 0, 2}}, 0, yes, 2},
		{"broadcast outer", backend.BFloat16, view{base: []int{64, 16}, perm: []int{0, 1}, at: 0, bc: 3}, 0, yes, 8},
	}
	for _, c := range cases {
		lay, _ := c.v.layout()
		lay.Offset += c.off
		p := &backend.Program{Shape: lay.Shape, Inputs: []backend.Operand{{Buf: fakeBuf{c.dt}, Layout: lay}},
			Nodes: []backend.Node{{Op: backend.OpInput, DType: c.dt}}}
		out := backend.Operand{Buf: fakeBuf{c.dt}, Layout: backend.Contiguous(lay.Shape)}
		s := SpecFor(p, out, c.align)
		if s.Tiled() || s.Vec != c.want {
			t.Errorf("%s: spec %+v, want the strided path with vectors of %d", c.name, s, c.want)
		}
	}
}

// TestStridedKernelsCompile compiles strided elementwise kernels (32- and
// 64-bit, scalar and vector) and strided reductions to PTX.
func TestStridedKernelsCompile(t *testing.T) {
	var ks []*Kernel
	for _, dt := range []backend.DType{backend.Float32, backend.BFloat16, backend.Bool, backend.Float64} {
		p := &backend.Program{Shape: []int{2, 3, 4, 8}, Inputs: []backend.Operand{in(dt, []int{2, 3, 4, 8}), in(dt, []int{2, 3, 4, 8})},
			Nodes: []backend.Node{{Op: backend.OpInput, DType: dt}, {Op: backend.OpInput, DType: dt, Args: [3]int32{1}}, {Op: backend.OpMaximum, DType: dt, Args: [3]int32{0, 1}}}}
		classes := []Class{Strided, Contig}
		if dt.IsLowp() { // a storage type: a copy
			p.Inputs, p.Nodes, classes = p.Inputs[:1], p.Nodes[:1], classes[:1]
		}
		for _, w := range []int{1, 2, 4, 8} {
			if w*dt.Size() > 16 {
				continue
			}
			for _, i64 := range []bool{false, true} {
				spec := ElemSpec{Rank: 4, In: classes, OutContig: w == 2, Index64: i64, Vec: w}
				k, err := Elementwise(p, spec)
				if err != nil {
					t.Fatal(err)
				}
				ks = append(ks, k)
			}
		}
		if dt == backend.Float32 || dt == backend.Float64 {
			for _, mode := range []ReduceMode{ReduceAll, ReduceRows, ReduceCols} {
				spec := ReduceSpec{Mode: mode, Kept: 2, Red: 2, In: []Class{Strided, Strided}, Group: 32, Vec: 1}
				if mode == ReduceAll {
					spec.Kept, spec.Red = 0, 4
				}
				rd, err := Reduce(backend.Sum, p, dt, spec)
				if err != nil {
					t.Fatal(err)
				}
				ks = append(ks, rd.Kernels...)
			}
		}
	}
	compileAll(t, ks)
}
