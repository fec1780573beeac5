package attn

import (
	"errors"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/gocu-dev/gocu"
	"github.com/gocu-dev/gocu/array"
	"github.com/gocu-dev/gocu/kernel"
)

// runStrided runs Forward and Backward on the heads of a projection, as
// a transformer splits them: q, k and v are (batch, heads, seq, dim)
// views of one (batch, seq, 3, heads, dim) array and dO a view of a
// (batch, seq, heads, dim+8) array, all read in place. The outputs, which
// the simulator's Empty fills with NaN, must come back as views of
// (batch, seq, heads, dim) arrays and match the reference.
func runStrided(t *testing.T, d *gocu.Device, r *rand.Rand, s shape, causal bool, heads []int) {
	p := newProblem(t, d, r, s, causal, heads)
	B, H, S, D := s.Batch, s.Heads, s.Seq, s.Dim
	qkv := make([]kernel.BFloat16, B*S*3*H*D)
	dp := D + 8
	dos := make([]kernel.BFloat16, B*S*H*dp)
	for b := range B {
		for h := range H {
			for i := range S {
				src := ((b*H+h)*S + i) * D
				for j, x := range [][]kernel.BFloat16{p.q, p.k, p.v} {
					copy(qkv[(((b*S+i)*3+j)*H+h)*D:][:D], x[src:src+D])
				}
				copy(dos[((b*S+i)*H+h)*dp:][:D], p.do[src:src+D])
			}
		}
	}
	x := array.FromSliceOn(d, qkv, B, S, 3, H, D)
	part := func(j int) *array.Array {
		return x.Slice(array.S(0, B), array.S(0, S), array.Idx(j)).SwapAxes(1, 2)
	}
	q, k, v := part(0), part(1), part(2)
	do := array.FromSliceOn(d, dos, B, S, H, dp).Slice(array.S(0, B), array.S(0, S), array.S(0, H), array.S(0, D)).SwapAxes(1, 2)
	for _, a := range []*array.Array{q, k, v, do} {
		if a.IsContiguous() {
			t.Fatal("an input is contiguous: the test reads no strided view")
		}
	}
	o, lse, err := Forward(q, k, v, p.scale, p.causal)
	must(t, err)
	dq, dk, dv, err := Backward(q, k, v, o, lse, do, p.scale, p.causal)
	must(t, err)
	p.reference()
	bf := func(what string, a *array.Array) []kernel.BFloat16 {
		if !equal(a.Shape(), s.dims()) {
			t.Fatalf("%s has shape %v, want %v", what, a.Shape(), s.dims())
		}
		if !a.SwapAxes(1, 2).IsContiguous() {
			t.Errorf("%s has strides %v, want a view of a (batch, seq, heads, dim) array", what, a.Strides())
		}
		y, err := array.ToSlice[kernel.BFloat16](a)
		must(t, err)
		return y
	}
	l, err := array.ToSlice[float32](lse)
	must(t, err)
	compare(t, "o", p, bf("o", o), func(g Result) []float64 { return g.O }, oRtol, oAtol, oFrob)
	compare(t, "lse", p, l, func(g Result) []float64 { return g.LSE }, 1e-5, 1e-5, 1e-5)
	compare(t, "dq", p, bf("dq", dq), func(g Result) []float64 { return g.DQ }, gRtol, gAtol, gFrob)
	compare(t, "dk", p, bf("dk", dk), func(g Result) []float64 { return g.DK }, gRtol, gAtol, gFrob)
	compare(t, "dv", p, bf("dv", dv), func(g Result) []float64 { return g.DV }, gRtol, gAtol, gFrob)
}

// TestSimStrided runs the kernels on strided views on the simulator, with
// a partial last tile.
func TestSimStrided(t *testing.T) {
	d := simDev(t)
	for _, dim := range []int{64, 128} {
		for _, causal := range []bool{false, true} {
			s := shape{2, 2, 80, dim}
			t.Run(name(s, causal), func(t *testing.T) {
				runStrided(t, d, newRand(t), s, causal, allHeads(s.bh()))
			})
		}
	}
}

// TestGPUStrided is TestSimStrided on the GPU at GPT-2's shapes and
// beyond, checking the first and last heads.
func TestGPUStrided(t *testing.T) {
	d := needGPU(t)
	for _, c := range []struct {
		s      shape
		causal bool
	}{
		{shape{2, 3, 80, 64}, true}, {shape{2, 3, 1000, 128}, false},
		{shape{8, 12, 1024, 64}, true}, {shape{4, 16, 2048, 128}, true},
	} {
		t.Run(name(c.s, c.causal), func(t *testing.T) {
			runStrided(t, d, newRand(t), c.s, c.causal, []int{0, c.s.bh() - 1})
		})
	}
}

// TestStridedErrors provokes the errors of views the kernels do not take,
// and of outputs whose layout overlaps itself.
func TestStridedErrors(t *testing.T) {
	d := simDev(t)
	r := array.On(d).NewRNG(1)
	bf := func(shape ...int) *array.Array { return r.Normal(array.BFloat16, 0, 1, shape...) }
	q, k, v := bf(1, 2, 64, 64), bf(1, 2, 64, 64), bf(1, 2, 64, 64)
	for _, c := range []struct {
		name string
		x    *array.Array
		msg  string
	}{
		{"transposed dim", bf(1, 2, 64, 64).SwapAxes(2, 3), "the last axis is not contiguous"},
		{"row stride 68", bf(1, 2, 64, 68).Slice(array.S(0, 1), array.S(0, 2), array.S(0, 64), array.S(0, 64)), "multiples of 8"},
		{"flipped", bf(1, 2, 64, 64).Flip(2), "negative stride"},
		{"misaligned", bf(8193).Slice(array.S(1, 8193)).Reshape(1, 2, 64, 64), "16-byte aligned"},
	} {
		if err := CheckView(c.x); !errors.Is(err, array.ErrValue) || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("%s: CheckView: %v, want ErrValue containing %q", c.name, err, c.msg)
		}
		if _, _, err := Forward(q, c.x, v, 0.125, false); !errors.Is(err, array.ErrValue) || !strings.Contains(err.Error(), "attn: Forward: k: ") {
			t.Errorf("%s as k: Forward: %v, want ErrValue naming k", c.name, err)
		}
	}
	if err := CheckView(q); err != nil {
		t.Errorf("CheckView of a contiguous array: %v", err)
	}
	// The heads of a (batch, seq, heads·dim) projection, as GPT splits them.
	if err := CheckView(bf(2, 64, 3*64).Reshape(2, 64, 3, 64).SwapAxes(1, 2)); err != nil {
		t.Errorf("CheckView of a projection's heads: %v", err)
	}
	if err := CheckView(bf(2, 64, 64)); !errors.Is(err, array.ErrValue) {
		t.Errorf("CheckView of a 3-d array: %v, want ErrValue", err)
	}

	o, _, err := Forward(q, k, v, 0.125, true)
	must(t, err)
	lse2 := array.On(d).Empty(array.Float32, 1, 64, 2).SwapAxes(1, 2)
	if _, _, _, err := Backward(q, k, v, o, lse2, bf(1, 2, 64, 64), 0.125, true); !errors.Is(err, array.ErrValue) || !strings.Contains(err.Error(), "lse is a strided view") {
		t.Errorf("strided lse: Backward: %v, want ErrValue naming lse", err)
	}

	s := shape{1, 2, 64, 64}
	c := s.contiguous()
	n := s.size()
	buf := func() *gocu.Buffer[kernel.BFloat16] { return poisoned(t, d, n, nanBF16) }
	f32 := func() *gocu.Buffer[float32] { return poisoned(t, d, s.bh()*s.Seq, nanF32) }
	over := layout{0, 8, 64} // the two heads overlap
	err = forwardStrided(d, buf(), buf(), buf(), buf(), f32(), [4]layout{c, c, c, over}, s, 0.125, false, false)
	if !errors.Is(err, array.ErrValue) || !strings.Contains(err.Error(), "o's layout") {
		t.Errorf("overlapping o: %v, want ErrValue naming o", err)
	}
	err = backwardStrided(d, buf(), buf(), buf(), buf(), f32(), buf(), f32(), buf(), buf(), buf(), [8]layout{c, c, c, c, c, c, over, c}, s, 0.125, false, false)
	if !errors.Is(err, array.ErrValue) || !strings.Contains(err.Error(), "dk's layout") {
		t.Errorf("overlapping dk: %v, want ErrValue naming dk", err)
	}
}
