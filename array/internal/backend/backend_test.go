package backend

import (
	"slices"
	"testing"
)

func TestCollapse(t *testing.T) {
	cases := []struct {
		in   []Layout
		want [][2][]int // shape, strides per layout
	}{
		// Contiguous (2,3,4) collapses to (24,).
		{[]Layout{Contiguous([]int{2, 3, 4})}, [][2][]int{{{24}, {1}}}},
		// A transposed operand blocks merging; size-1 dims vanish.
		{[]Layout{Contiguous([]int{3, 1, 4}), {Shape: []int{3, 1, 4}, Strides: []int{1, 7, 3}}},
			[][2][]int{{{3, 4}, {4, 1}}, {{3, 4}, {1, 3}}}},
		// Broadcast rows: (5,4) with a (4,) bias stays 2-D.
		{[]Layout{Contiguous([]int{5, 4}), {Shape: []int{5, 4}, Strides: []int{0, 1}}},
			[][2][]int{{{5, 4}, {4, 1}}, {{5, 4}, {0, 1}}}},
		// A fully broadcast scalar merges with anything contiguous.
		{[]Layout{Contiguous([]int{2, 3}), {Shape: []int{2, 3}, Strides: []int{0, 0}}},
			[][2][]int{{{6}, {1}}, {{6}, {0}}}},
		// One element: rank 0.
		{[]Layout{Contiguous([]int{1, 1})}, [][2][]int{{{}, {}}}},
		// Empty: rank-1 size 0.
		{[]Layout{Contiguous([]int{3, 0, 2})}, [][2][]int{{{0}, {1}}}},
	}
	for i, c := range cases {
		got := Collapse(c.in)
		for j, w := range c.want {
			if !slices.Equal(got[j].Shape, w[0]) || !slices.Equal(got[j].Strides, w[1]) {
				t.Errorf("case %d operand %d: %v %v, want %v %v", i, j, got[j].Shape, got[j].Strides, w[0], w[1])
			}
		}
	}
}

func TestLayoutHelpers(t *testing.T) {
	l := Layout{Shape: []int{3, 4}, Strides: []int{-4, 1}, Offset: 8}
	if lo, hi := l.Extent(); lo != 0 || hi != 12 {
		t.Errorf("extent %d %d", lo, hi)
	}
	if l.IsContiguous() || !Contiguous([]int{3, 4}).IsContiguous() {
		t.Errorf("contiguity")
	}
	b := Layout{Shape: []int{4}, Strides: []int{1}}.BroadcastTo([]int{2, 3, 4})
	if !slices.Equal(b.Strides, []int{0, 0, 1}) || b.IsConstant() {
		t.Errorf("broadcast strides %v", b.Strides)
	}
	if !(Layout{Shape: []int{2, 3}, Strides: []int{0, 0}}).IsConstant() {
		t.Errorf("constant")
	}
	p := Contiguous([]int{2, 3, 4}).Permute([]int{2, 0, 1})
	if !slices.Equal(p.Shape, []int{4, 2, 3}) || !slices.Equal(p.Strides, []int{1, 12, 4}) {
		t.Errorf("permute %v %v", p.Shape, p.Strides)
	}
	if Size(nil) != 1 || Size([]int{2, 0}) != 0 {
		t.Errorf("size")
	}
}

type buf struct{ dt DType }

func (b buf) DType() DType { return b.dt }
func (b buf) Len() int     { return 16 }

func TestValidateAndKey(t *testing.T) {
	in := Operand{Buf: buf{Float32}, Layout: Contiguous([]int{4})}
	good := &Program{Shape: []int{4}, Inputs: []Operand{in}, Scalars: []Scalar{{DType: Float32, F: 2}},
		Nodes: []Node{{Op: OpInput, DType: Float32}, {Op: OpScalar, DType: Float32}, {Op: OpMul, DType: Float32, Args: [3]int32{0, 1}}}}
	if err := good.Validate(); err != nil {
		t.Fatal(err)
	}
	if good.Key() != "input:float32#0;scalar:float32#0;mul:float32,0,1;" {
		t.Errorf("key %q", good.Key())
	}
	if s := good.String(); s != "mul(in0:float32, s0:float32)" {
		t.Errorf("string %q", s)
	}
	bad := []*Program{
		{Shape: []int{4}, Inputs: []Operand{in}, Nodes: []Node{{Op: OpInput, DType: Float64}}},                                                   // mistyped input
		{Shape: []int{4}, Inputs: []Operand{in}, Nodes: []Node{{Op: OpInput, DType: Float32}, {Op: OpNeg, DType: Float64}}},                      // neg changes dtype
		{Shape: []int{4}, Inputs: []Operand{in}, Nodes: []Node{{Op: OpInput, DType: Float32}, {Op: OpLt, DType: Float32, Args: [3]int32{0, 0}}}}, // compare not bool
		{Shape: []int{4}, Inputs: []Operand{in}, Nodes: []Node{{Op: OpInput, DType: Float32}, {Op: OpNot, DType: Bool}}},                         // not on float
		{Shape: []int{4}, Inputs: []Operand{in}, Nodes: []Node{{Op: OpAdd, DType: Float32, Args: [3]int32{0, 0}}}},                               // forward reference
		{Shape: []int{5}, Inputs: []Operand{in}, Nodes: []Node{{Op: OpInput, DType: Float32}}},                                                   // shape mismatch
		{Shape: []int{4}},
	}
	for i, p := range bad {
		if p.Validate() == nil {
			t.Errorf("bad program %d validated", i)
		}
	}
	for _, op := range append(append([]Op{}, UnaryOps...), BinaryOps...) {
		if op.String() == "op?" || op.Arity() == 0 {
			t.Errorf("op %d has no name or arity", op)
		}
	}
}
