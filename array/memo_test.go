package array

import (
	"fmt"
	"math"
	"slices"
	"sync/atomic"
	"testing"

	"github.com/gocu-dev/gocu/array/internal/backend"
)

// preparingBackend is the CPU backend with backend.Preparer: its handle
// is a copy of the program without buffers and scalar values, which
// EvalPrepared fills with the ones it is given, so that a wrong input or
// scalar, or one in the wrong order, gives wrong values.
type preparingBackend struct {
	backend.Backend
	prepares, hits atomic.Int64
}

type preparedProgram struct {
	p   backend.Program
	out backend.Layout
}

func (b *preparingBackend) EvalPrepare(p *backend.Program, out backend.Operand) (backend.Prepared, error) {
	if err := b.Eval(p, out); err != nil {
		return nil, err
	}
	b.prepares.Add(1)
	h := &preparedProgram{out: out.Layout}
	h.p.Shape = slices.Clone(p.Shape)
	h.p.Nodes = slices.Clone(p.Nodes)
	h.p.Scalars = slices.Clone(p.Scalars)
	for i := range h.p.Scalars {
		h.p.Scalars[i].F, h.p.Scalars[i].I = math.NaN(), -12345 // values come with each call
	}
	for _, in := range p.Inputs {
		h.p.Inputs = append(h.p.Inputs, backend.Operand{Layout: in.Layout})
	}
	return h, nil
}

func (b *preparingBackend) EvalPrepared(hp backend.Prepared, ins []backend.Buffer, scalars []backend.Scalar, out backend.Buffer) (bool, error) {
	h := hp.(*preparedProgram)
	if len(ins) != len(h.p.Inputs) || len(scalars) != len(h.p.Scalars) {
		return true, fmt.Errorf("prepared program of %d inputs and %d scalars given %d and %d",
			len(h.p.Inputs), len(h.p.Scalars), len(ins), len(scalars))
	}
	q := h.p
	q.Inputs = slices.Clone(q.Inputs)
	for i := range q.Inputs {
		q.Inputs[i].Buf = ins[i]
	}
	for i, s := range scalars {
		if s.DType != q.Scalars[i].DType {
			return true, fmt.Errorf("scalar %d is %v, the program's %v", i, s.DType, q.Scalars[i].DType)
		}
	}
	q.Scalars = scalars
	b.hits.Add(1)
	return true, b.Eval(&q, backend.Operand{Buf: out, Layout: h.out})
}

// Repeated operations of one structure are evaluated through the memo
// with their own buffers and scalar values, whatever changed around them:
// values, the same array twice, shapes of one size, views with offsets,
// broadcasting, casts, low-precision dtypes, Where. Every result is
// compared with the CPU's.
func TestEvalMemo(t *testing.T) {
	pb := &preparingBackend{Backend: CPU().be}
	d := newDevice(pb, nil)
	ref := CPU()
	cases := []struct {
		name string
		op   func(d *Maker, i int) *Array
	}{
		{"add", func(d *Maker, i int) *Array {
			x := d.Arange(Float32, 16).Eval()
			y := d.Full(Float32, float64(i), 16).Eval()
			return x.Add(y)
		}},
		{"add-scalar", func(d *Maker, i int) *Array { return d.Arange(Float32, 16).Eval().Add(float64(i) + 0.5) }},
		{"two-scalars", func(d *Maker, i int) *Array {
			return d.Arange(Float32, 16).Eval().Mul(float64(i)).Add(float64(-i) * 3)
		}},
		{"x+x-or-x+y", func(d *Maker, i int) *Array {
			x := d.Arange(Float64, 8).Eval()
			if i%2 == 0 {
				return x.Add(x)
			}
			return x.Add(d.Full(Float64, 1, 8).Eval())
		}},
		{"same-size-shapes", func(d *Maker, i int) *Array {
			x := d.Arange(Float32, 16).Eval()
			shapes := [][]int{{16}, {4, 4}, {2, 8}, {16}}
			x = x.Reshape(shapes[i%len(shapes)]...)
			return x.Sub(x.Mul(float64(i)))
		}},
		{"views", func(d *Maker, i int) *Array {
			x := d.Arange(Float32, 32).Eval()
			v := x.Slice(S(i%3, i%3+16))
			w := x.Slice(S(16, 32))
			if i%4 == 3 {
				w = v
			}
			return v.Mul(w).Eval().Add(1)
		}},
		{"transposed", func(d *Maker, i int) *Array {
			x := d.Arange(Float32, 12).Reshape(3, 4).Eval()
			if i%2 == 0 {
				x = x.T()
			} else {
				x = x.Reshape(4, 3)
			}
			return x.Add(float64(i))
		}},
		{"broadcast", func(d *Maker, i int) *Array {
			x := d.Arange(Float32, 12).Reshape(3, 4).Eval()
			b := d.Arange(Float32, 4).Mul(float64(i)).Eval()
			if i%2 == 1 {
				b = d.Arange(Float32, 3).Reshape(3, 1).Eval()
			}
			return x.Add(b)
		}},
		{"casts", func(d *Maker, i int) *Array {
			x := d.Arange(Int32, 10).Eval()
			y := d.Full(Float32, 0.25*float64(i), 10).Eval()
			return x.Mul(y)
		}},
		{"float16", func(d *Maker, i int) *Array {
			x := d.Arange(Float32, 10).Mul(0.3).AsType(Float16).Eval()
			return x.Add(x.Mul(float64(i))).Exp()
		}},
		{"int8", func(d *Maker, i int) *Array {
			x := d.Arange(Int8, 10).Eval()
			return x.Mul(int8(i + 20))
		}},
		{"where", func(d *Maker, i int) *Array {
			x := d.Arange(Float32, 10).Eval()
			return Where(x.Gt(float64(i)), x, -float64(i))
		}},
		{"unary", func(d *Maker, i int) *Array { return d.Arange(Float32, 10).Add(float64(i)).Eval().Sqrt() }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h0 := pb.hits.Load()
			for i := range 8 {
				got := readHost(t, c.op(d, i))
				want := readHost(t, c.op(ref, i))
				checkHost(t, fmt.Sprintf("%s %d", c.name, i), got, want.shape, want.v, 0)
			}
			if pb.hits.Load() == h0 {
				t.Errorf("no evaluation went through the memo")
			}
		})
	}
}

// A memo made for one program never serves a different one: an operation
// that differs only in its operation, its dtype, its scalar's dtype or its
// output layout is planned again.
func TestEvalMemoMisses(t *testing.T) {
	pb := &preparingBackend{Backend: CPU().be}
	d := newDevice(pb, nil)
	x := d.Arange(Float32, 16).Eval()
	y := d.Arange(Float64, 16).Eval()
	for _, f := range []func() *Array{
		func() *Array { return x.Add(1) },
		func() *Array { return x.Sub(1) },
		func() *Array { return y.Add(1) },
		func() *Array { return x.Add(1).AsType(Float64) },
		func() *Array { return x.Add(x) },
		func() *Array { return x.Reshape(4, 4).Add(1) },
		func() *Array { return x.Reshape(4, 4).T().Add(1) },
	} {
		p0, h0 := pb.prepares.Load(), pb.hits.Load()
		if err := f().Err(); err != nil {
			t.Fatal(err)
		}
		if pb.prepares.Load() != p0+1 || pb.hits.Load() != h0 {
			t.Errorf("a new program structure was not planned (%d prepares, %d hits)", pb.prepares.Load()-p0, pb.hits.Load()-h0)
		}
		p0, h0 = pb.prepares.Load(), pb.hits.Load()
		if err := f().Err(); err != nil {
			t.Fatal(err)
		}
		if pb.prepares.Load() != p0 || pb.hits.Load() != h0+1 {
			t.Errorf("a repeated program structure was planned again (%d prepares, %d hits)", pb.prepares.Load()-p0, pb.hits.Load()-h0)
		}
	}
}
