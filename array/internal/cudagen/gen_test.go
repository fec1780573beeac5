package cudagen

import (
	"testing"

	"github.com/gocu-dev/gocu/array/internal/backend"
)

// fakeBuf is a shape-less stand-in for a device buffer: generators only
// look at dtypes.
type fakeBuf struct{ dt backend.DType }

func (f fakeBuf) DType() backend.DType { return f.dt }
func (f fakeBuf) Len() int             { return 1 << 20 }

func in(dt backend.DType, shape []int) backend.Operand {
	return backend.Operand{Buf: fakeBuf{dt}, Layout: backend.Contiguous(shape)}
}

// progBuilder builds programs node by node.
type progBuilder struct{ p *backend.Program }

func newProg(shape ...int) *progBuilder { return &progBuilder{&backend.Program{Shape: shape}} }

func (b *progBuilder) input(dt backend.DType) int32 {
	b.p.Inputs = append(b.p.Inputs, in(dt, b.p.Shape))
	return b.node(backend.OpInput, dt, int32(len(b.p.Inputs)-1))
}

func (b *progBuilder) scalar(dt backend.DType, f float64, i int64) int32 {
	b.p.Scalars = append(b.p.Scalars, backend.Scalar{DType: dt, F: f, I: i})
	return b.node(backend.OpScalar, dt, int32(len(b.p.Scalars)-1))
}

func (b *progBuilder) node(op backend.Op, dt backend.DType, args ...int32) int32 {
	n := backend.Node{Op: op, DType: dt}
	copy(n.Args[:], args)
	b.p.Nodes = append(b.p.Nodes, n)
	return int32(len(b.p.Nodes) - 1)
}

// everyOpPrograms returns, for every node operation and every dtype it is
// defined on, a program applying it to inputs (and one scalar operand).
func everyOpPrograms() []*backend.Program {
	var ps []*backend.Program
	for _, dt := range backend.DTypes {
		for _, op := range backend.UnaryOps {
			if op == backend.OpCast {
				for _, to := range backend.DTypes {
					if !backend.CastDefined(dt, to) {
						continue
					}
					b := newProg(64)
					x := b.input(dt)
					b.node(op, to, x)
					ps = append(ps, b.p)
				}
				continue
			}
			if !backend.Supports(op, dt) {
				continue
			}
			res := dt
			if op.IsPredicate() || op == backend.OpNot {
				res = backend.Bool
			}
			b := newProg(64)
			b.node(op, res, b.input(dt))
			ps = append(ps, b.p)
		}
		for _, op := range backend.BinaryOps {
			if !backend.Supports(op, dt) {
				continue
			}
			res := dt
			if op.IsCompare() {
				res = backend.Bool
			}
			b := newProg(64)
			x := b.input(dt)
			y := b.input(dt)
			b.node(op, res, x, y)
			ps = append(ps, b.p)
			b2 := newProg(64)
			b2.node(op, res, b2.input(dt), b2.scalar(dt, 3, 3))
			ps = append(ps, b2.p)
		}
		if dt.IsStorage() {
			// Storage types only convert: a scalar of one, and a round
			// trip through the compute type mixing input and scalar.
			b := newProg(64)
			b.node(backend.OpCast, dt.Compute(), b.scalar(dt, 3, 3))
			ps = append(ps, b.p)
			b2 := newProg(64)
			x := b2.node(backend.OpCast, dt.Compute(), b2.input(dt))
			y := b2.node(backend.OpCast, dt.Compute(), b2.scalar(dt, -1.5, -1))
			b2.node(backend.OpCast, dt, b2.node(backend.OpAdd, dt.Compute(), x, y))
			ps = append(ps, b2.p)
			continue
		}
		b := newProg(64)
		c := b.input(backend.Bool)
		b.node(backend.OpWhere, dt, c, b.input(dt), b.scalar(dt, 1, 1))
		ps = append(ps, b.p)
	}
	// relu(1.5x+0.5)*2 and an iota program.
	b := newProg(64)
	x := b.input(backend.Float32)
	m := b.node(backend.OpMul, backend.Float32, x, b.scalar(backend.Float32, 1.5, 0))
	a := b.node(backend.OpAdd, backend.Float32, m, b.scalar(backend.Float32, 0.5, 0))
	r := b.node(backend.OpReLU, backend.Float32, a)
	b.node(backend.OpMul, backend.Float32, r, b.scalar(backend.Float32, 2, 0))
	ps = append(ps, b.p)
	e := newProg(64)
	i := e.node(backend.OpIota, backend.Int64)
	mod := e.node(backend.OpMod, backend.Int64, i, e.scalar(backend.Int64, 0, 9))
	eq := e.node(backend.OpEq, backend.Bool, mod, e.scalar(backend.Int64, 0, 0))
	e.node(backend.OpCast, backend.Float32, eq)
	ps = append(ps, e.p)
	return ps
}

func specs(p *backend.Program) []ElemSpec {
	n := len(p.Inputs)
	all := func(c Class) []Class {
		s := make([]Class, n)
		for i := range s {
			s[i] = c
		}
		return s
	}
	mixed := all(Contig)
	if n > 1 {
		mixed[1] = Const
	}
	ss := []ElemSpec{
		{Rank: 1, In: all(Contig), OutContig: true, Vec: 1},
		{Rank: 1, In: mixed, OutContig: true, Vec: 4},
		{Rank: 3, In: all(Strided), OutContig: false, Index64: true, Vec: 1},
		{Rank: 2, In: mixed, OutContig: false, Vec: 1},
	}
	small := p.Result().Size() <= 2
	for _, in := range p.Inputs {
		small = small && in.DType().Size() <= 2
	}
	if small {
		ss = append(ss, ElemSpec{Rank: 1, In: mixed, OutContig: true, Vec: 8})
	}
	return ss
}

func TestElementwiseKernelsCompile(t *testing.T) {
	t.Parallel()
	var ks []*Kernel
	for _, p := range everyOpPrograms() {
		for _, s := range specs(p) {
			if s.Vec == 4 {
				for _, in := range p.Inputs {
					if in.DType().Size() > 4 || p.Result().Size() > 4 {
						s.Vec = 2
					}
				}
			}
			k, err := Elementwise(p, s)
			if err != nil {
				t.Fatalf("%v: %v", p, err)
			}
			ks = append(ks, k)
		}
	}
	t.Logf("%d elementwise kernels", len(ks))
	compileAll(t, ks)
}

func reducePrograms() []*backend.Program {
	var ps []*backend.Program
	for _, dt := range backend.DTypes {
		b := newProg(8, 8)
		b.input(dt)
		ps = append(ps, b.p)
	}
	// A fused prologue: sum(x*x + 1) in float32.
	b := newProg(8, 8)
	x := b.input(backend.Float32)
	sq := b.node(backend.OpMul, backend.Float32, x, x)
	b.node(backend.OpAdd, backend.Float32, sq, b.scalar(backend.Float32, 1, 0))
	ps = append(ps, b.p)
	return ps
}

var allReduceOps = []backend.ReduceOp{backend.Sum, backend.Prod, backend.Max, backend.Min, backend.Mean,
	backend.ArgMax, backend.ArgMin, backend.Any, backend.All}

// validReduce mirrors package array: which (op, dtype) reach a backend.
func validReduce(op backend.ReduceOp, dt backend.DType) (backend.DType, bool) {
	if dt.IsStorageInt() && dt != backend.Int8 {
		// Package array reduces int16, uint16, uint32 and uint64 in their
		// compute type (its program casts first); raw, they have no
		// accumulator of their own.
		return dt, false
	}
	switch op {
	case backend.Sum, backend.Prod:
		return dt, dt.IsFloat() || dt == backend.Int64
	case backend.Mean:
		return dt, dt.IsFloat()
	case backend.ArgMax, backend.ArgMin:
		return backend.Int64, true
	case backend.Any, backend.All:
		return backend.Bool, dt == backend.Bool
	}
	return dt, true
}

func TestReductionKernelsCompile(t *testing.T) {
	t.Parallel()
	var ks []*Kernel
	for _, p := range reducePrograms() {
		for _, op := range allReduceOps {
			out, ok := validReduce(op, p.Result())
			if !ok {
				continue
			}
			n := len(p.Inputs)
			cls := func(c Class) []Class {
				s := make([]Class, n)
				for i := range s {
					s[i] = c
				}
				return s
			}
			vec := 4
			if p.Inputs[0].DType().Size() > 4 {
				vec = 2
			}
			for _, s := range []ReduceSpec{
				{Mode: ReduceAll, Red: 1, In: cls(Contig), Vec: vec},
				{Mode: ReduceAll, Red: 3, In: cls(Strided), Index64: true, Vec: 1},
				{Mode: ReduceRows, Kept: 1, Red: 1, In: cls(Strided), Group: 32},
				{Mode: ReduceRows, Kept: 2, Red: 2, In: cls(Strided), Group: 256, Index64: true},
				{Mode: ReduceCols, Kept: 1, Red: 2, In: cls(Strided)},
			} {
				r, err := Reduce(op, p, out, s)
				if err != nil {
					t.Fatalf("%v %v: %v", op, p, err)
				}
				ks = append(ks, r.Kernels...)
			}
		}
	}
	t.Logf("%d reduction kernels", len(ks))
	compileAll(t, ks)
}

func TestAxisRandomMatMulKernelsCompile(t *testing.T) {
	t.Parallel()
	var ks []*Kernel
	for _, dt := range []backend.DType{backend.Float32, backend.Float64} {
		b := newProg(4, 8)
		x := b.input(dt)
		b.node(backend.OpMul, dt, x, b.scalar(dt, 0.5, 0))
		for _, kind := range []backend.AxisKind{backend.Softmax, backend.LogSoftmax, backend.LogSumExp} {
			for _, s := range []AxisSpec{{Outer: 0, In: []Class{Strided}}, {Outer: 2, In: []Class{Strided}, Index64: true}, {Outer: 1, In: []Class{Const}}} {
				k, err := AxisOp(kind, b.p, s)
				if err != nil {
					t.Fatal(err)
				}
				ks = append(ks, k)
			}
		}
		for _, dist := range []backend.Dist{backend.Uniform, backend.Normal} {
			k, err := Random(dt, dist)
			if err != nil {
				t.Fatal(err)
			}
			ks = append(ks, k)
		}
	}
	for _, dt := range []backend.DType{backend.Bool, backend.Uint8, backend.Int32, backend.Int64} {
		for _, br := range []int{0, 1, 3} {
			k, err := IntMatMul(dt, br)
			if err != nil {
				t.Fatal(err)
			}
			ks = append(ks, k)
		}
	}
	for _, br := range []int{0, 2} {
		k, err := IntMatMulOf(backend.Int8, backend.Int32, br)
		if err != nil {
			t.Fatal(err)
		}
		ks = append(ks, k)
	}
	// Quantisation along any axis, and the row kernels.
	qb := newProg(4, 8)
	qx := qb.input(backend.Float32)
	qb.node(backend.OpMul, backend.Float32, qx, qb.scalar(backend.Float32, 0.5, 0))
	for _, out := range []backend.DType{backend.Int8, backend.Float8E4M3, backend.Float8E5M2} {
		for _, s := range []AxisSpec{{Outer: 0, In: []Class{Strided}, Out: out}, {Outer: 2, In: []Class{Strided}, Index64: true, Out: out}} {
			k, err := AxisOp(backend.Quantize, qb.p, s)
			if err != nil {
				t.Fatal(err)
			}
			ks = append(ks, k)
		}
	}
	for _, kind := range []backend.AxisKind{backend.Softmax, backend.LogSoftmax, backend.Quantize} {
		out := backend.Float32
		if kind == backend.Quantize {
			out = backend.Int8
		}
		for _, s := range []RowSpec{{W: 4, NV: 8}, {W: 1, NV: 2, Index64: true}, {W: 4, NV: 16}} {
			s.Kind, s.Out, s.In = kind, out, []Class{Contig}
			k, err := RowKernel(qb.p, s)
			if err != nil {
				t.Fatal(err)
			}
			ks = append(ks, k)
		}
	}
	if _, err := RowKernel(qb.p, RowSpec{Kind: backend.Softmax, Out: backend.Float32, In: []Class{Contig}, W: 4, NV: 32}); err == nil {
		t.Errorf("a row kernel of 128 values per thread accepted")
	}
	if _, err := IntMatMul(backend.Float32, 0); err == nil {
		t.Errorf("IntMatMul(float32) accepted")
	}
	if _, err := Random(backend.Int32, backend.Uniform); err == nil {
		t.Errorf("Random(int32) accepted")
	}
	compileAll(t, ks)
}

// Programs that differ only in scalar values, shapes or strides share one
// kernel; a different structure or dtype gets another.
func TestKernelNamesAreStructural(t *testing.T) {
	mk := func(shape []int, scalar float64, dt backend.DType) *backend.Program {
		b := newProg(shape...)
		x := b.input(dt)
		b.node(backend.OpAdd, dt, x, b.scalar(dt, scalar, int64(scalar)))
		return b.p
	}
	spec := ElemSpec{Rank: 1, In: []Class{Contig}, OutContig: true, Vec: 1}
	k1, _ := Elementwise(mk([]int{10}, 1.5, backend.Float32), spec)
	k2, _ := Elementwise(mk([]int{99}, -7, backend.Float32), spec)
	k3, _ := Elementwise(mk([]int{10}, 1.5, backend.Float64), spec)
	if k1.Name != k2.Name || k1.Source != k2.Source {
		t.Errorf("scalar value or size changed the kernel")
	}
	if k1.Name == k3.Name {
		t.Errorf("dtype did not change the kernel")
	}
	c := NewCache[*Kernel](2, nil)
	for i, p := range []*backend.Program{mk([]int{1}, 1, backend.Float32), mk([]int{2}, 2, backend.Float32), mk([]int{3}, 3, backend.Float64), mk([]int{4}, 4, backend.Int32)} {
		if _, err := c.Get(ElemKey(p.Key(), spec), func() (*Kernel, error) { return Elementwise(p, spec) }); err != nil {
			t.Fatal(i, err)
		}
	}
	if c.Len() != 2 {
		t.Errorf("cache holds %d kernels, limit 2", c.Len())
	}
}

// SpecFor picks vector widths from alignment and falls back to strided
// addressing.
func TestSpecFor(t *testing.T) {
	b := newProg(1 << 20)
	x := b.input(backend.Float32)
	y := b.input(backend.Float32)
	b.node(backend.OpAdd, backend.Float32, x, y)
	out := in(backend.Float32, []int{1 << 20})
	yes := func(backend.Operand, int) bool { return true }
	no16 := func(_ backend.Operand, n int) bool { return n < 16 }
	if s := SpecFor(b.p, out, yes); s.Vec != 4 || s.Index64 || !s.OutContig {
		t.Errorf("aligned contiguous: %+v", s)
	}
	if s := SpecFor(b.p, out, no16); s.Vec != 2 {
		t.Errorf("8-byte aligned: %+v", s)
	}
	b.p.Inputs[1].Layout = backend.Layout{Shape: []int{1 << 20}, Strides: []int{0}}
	if s := SpecFor(b.p, out, yes); s.In[1] != Const || s.Vec != 4 {
		t.Errorf("broadcast scalar input: %+v", s)
	}
	b.p.Inputs[1].Layout = backend.Layout{Shape: []int{1 << 20}, Strides: []int{2}}
	if s := SpecFor(b.p, out, yes); s.In[1] != Strided || s.Vec != 1 {
		t.Errorf("strided input: %+v", s)
	}
	big := backend.Layout{Shape: []int{3 << 30}, Strides: []int{1}}
	b.p.Shape = big.Shape
	b.p.Inputs[0].Layout, b.p.Inputs[1].Layout = big, big
	if s := SpecFor(b.p, backend.Operand{Buf: fakeBuf{backend.Float32}, Layout: big}, yes); !s.Index64 {
		t.Errorf("3G elements without 64-bit indexing")
	}
}
