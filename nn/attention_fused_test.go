package nn

import (
	"errors"
	"math"
	"testing"

	"github.com/gocu-dev/gocu"
	"github.com/gocu-dev/gocu/array"
	"github.com/gocu-dev/gocu/grad"
	"github.com/gocu-dev/gocu/internal/attn"
)

// fakeFlash is FlashAttention's maths with array operations in float32,
// standing in for the GPU kernels: it records its calls.
func fakeFlash(calls *int, fail error) flashKernels {
	f32, bf := array.Float32, array.BFloat16
	probs := func(q, k *array.Array, scale float64, causal bool) (p, lse *array.Array) {
		s := q.AsType(f32).MatMul(k.AsType(f32).SwapAxes(-1, -2)).Mul(scale)
		if causal {
			n := s.Shape()[2]
			m := array.On(q.Device())
			rows := m.Arange(array.Int64, float64(n)).Reshape(n, 1)
			s = array.Where(m.Arange(array.Int64, float64(n)).Reshape(1, n).Gt(rows), math.Inf(-1), s)
		}
		lse = s.LogSumExp(-1)
		return s.Sub(lse.ExpandDims(-1)).Exp(), lse
	}
	return flashKernels{
		dt: bf, dims: []int{8, 16}, device: func(*gocu.Device) bool { return true },
		forward: func(q, k, v *array.Array, scale float64, causal bool) (*array.Array, *array.Array, error) {
			*calls++
			p, lse := probs(q, k, scale, causal)
			return p.MatMul(v.AsType(f32)).AsType(bf).Copy(), lse.Copy(), nil
		},
		backward: func(q, k, v, o, lse, do *array.Array, scale float64, causal bool) (*array.Array, *array.Array, *array.Array, error) {
			*calls++
			if fail != nil {
				return nil, nil, nil, fail
			}
			p, _ := probs(q, k, scale, causal)
			g := do.AsType(f32)
			dv := p.SwapAxes(-1, -2).MatMul(g)
			dp := g.MatMul(v.AsType(f32).SwapAxes(-1, -2))
			d := g.Mul(o.AsType(f32)).Sum(-1).ExpandDims(-1)
			ds := p.Mul(dp.Sub(d)).Mul(scale)
			dq := ds.MatMul(k.AsType(f32))
			dk := ds.SwapAxes(-1, -2).MatMul(q.AsType(f32))
			return dq.AsType(bf).Copy(), dk.AsType(bf).Copy(), dv.AsType(bf).Copy(), nil
		},
	}
}

func relDiff(t *testing.T, got, want *array.Array) float64 {
	t.Helper()
	g, err := got.AsType(array.Float64).Float64s()
	if err != nil {
		t.Fatal(err)
	}
	w, err := want.AsType(array.Float64).Float64s()
	if err != nil {
		t.Fatal(err)
	}
	var num, den float64
	for i := range w {
		num += (g[i] - w[i]) * (g[i] - w[i])
		den += w[i] * w[i]
	}
	return math.Sqrt(num / den)
}

// attend runs f on fresh copies of q, k, v and returns the output and
// the gradients of sum(y·c).
func attend(t *testing.T, f func(q, k, v *grad.Var) *grad.Var, xs []*array.Array, c *array.Array) []*array.Array {
	t.Helper()
	var vs []*grad.Var
	for _, x := range xs {
		vs = append(vs, grad.Param(x.Copy()))
	}
	y := f(vs[0], vs[1], vs[2])
	if err := y.AsType(array.Float32).Mul(c).Sum().Backward(); err != nil {
		t.Fatal(err)
	}
	return []*array.Array{y.Value(), vs[0].Grad(), vs[1].Grad(), vs[2].Grad()}
}

// TestFlashDispatch plugs fake kernels into the hook: attention takes
// them exactly where they apply, gives the composed operations' results
// through them, and reports their errors.
func TestFlashDispatch(t *testing.T) {
	old := fusedAttention
	defer func() { fusedAttention = old }()
	calls := 0
	rng := array.CPU().NewRNG(90)
	bf := array.BFloat16
	x := func(dt array.DType, s ...int) *array.Array {
		return rng.Normal(array.Float32, 0, 1, s...).AsType(dt).Copy()
	}
	xs := []*array.Array{x(bf, 2, 3, 16, 8), x(bf, 2, 3, 16, 8), x(bf, 2, 3, 16, 8)}
	c := rng.Normal(array.Float32, 0, 1, 2, 3, 16, 8)
	for _, causal := range []bool{false, true} {
		sdpa := func(q, k, v *grad.Var) *grad.Var {
			return ScaledDotProductAttention(q, k, v, &AttentionOptions{Causal: causal})
		}
		fusedAttention = old
		want := attend(t, sdpa, xs, c)
		useFlash(fakeFlash(&calls, nil))
		calls = 0
		got := attend(t, sdpa, xs, c)
		if calls != 2 {
			t.Fatalf("causal %v: %d kernel calls, want 2 (forward, backward)", causal, calls)
		}
		for i, what := range []string{"output", "dq", "dk", "dv"} {
			if got[i].DType() != bf {
				t.Errorf("%s is %v, want bfloat16", what, got[i].DType())
			}
			if e := relDiff(t, got[i], want[i]); e > 1e-2 {
				t.Errorf("causal %v: %s: relative difference %.3g from the composed operations", causal, what, e)
			}
		}
	}

	// Where the kernels do not apply.
	pad := array.Zeros(array.Bool, 2, 16)
	for _, c := range []struct {
		name    string
		q, k, v *array.Array
		o       *AttentionOptions
	}{
		{"float32", x(array.Float32, 2, 3, 16, 8), x(array.Float32, 2, 3, 16, 8), x(array.Float32, 2, 3, 16, 8), nil},
		{"head dimension 4", x(bf, 2, 3, 16, 4), x(bf, 2, 3, 16, 4), x(bf, 2, 3, 16, 4), nil},
		{"more keys than queries", x(bf, 2, 3, 8, 8), x(bf, 2, 3, 16, 8), x(bf, 2, 3, 16, 8), nil},
		{"broadcast batch", x(bf, 2, 3, 16, 8), x(bf, 1, 3, 16, 8), x(bf, 1, 3, 16, 8), nil},
		{"3-D", x(bf, 3, 16, 8), x(bf, 3, 16, 8), x(bf, 3, 16, 8), nil},
		{"padding", xs[0], xs[1], xs[2], &AttentionOptions{KeyPadding: pad}},
		{"dropout", xs[0], xs[1], xs[2], &AttentionOptions{Dropout: 0.1, RNG: rng}},
		{"negative scale", xs[0], xs[1], xs[2], &AttentionOptions{Scale: -1}},
	} {
		calls = 0
		y := ScaledDotProductAttention(grad.Const(c.q), grad.Const(c.k), grad.Const(c.v), c.o)
		if err := y.Err(); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if calls != 0 {
			t.Errorf("%s: the kernels ran", c.name)
		}
	}

	// MultiheadAttention computing in bfloat16 passes transposed views.
	m := NewMultiheadAttention(rng, 32, 2)
	m.Causal, m.Compute = true, bf
	in := grad.Param(rng.Normal(array.Float32, 0, 1, 2, 16, 32))
	calls = 0
	yf := m.Forward(in)
	if err := yf.Square().Mean().Backward(); err != nil {
		t.Fatal(err)
	}
	if calls != 2 {
		t.Fatalf("MultiheadAttention: %d kernel calls, want 2", calls)
	}
	gf := in.Grad()
	in.ZeroGrad()
	fusedAttention = old
	yc := m.Forward(in)
	if err := yc.Square().Mean().Backward(); err != nil {
		t.Fatal(err)
	}
	if e := relDiff(t, yf.Value(), yc.Value()); e > 1e-2 {
		t.Errorf("MultiheadAttention output: relative difference %.3g", e)
	}
	if e := relDiff(t, gf, in.Grad()); e > 2e-2 {
		t.Errorf("MultiheadAttention input gradient: relative difference %.3g", e)
	}

	// A kernel's error comes back from Backward.
	boom := errors.New("boom")
	useFlash(fakeFlash(&calls, boom))
	q := grad.Param(xs[0])
	y := ScaledDotProductAttention(q, grad.Const(xs[1]), grad.Const(xs[2]), nil)
	if err := y.AsType(array.Float32).Sum().Backward(); !errors.Is(err, boom) {
		t.Fatalf("Backward: %v, want the kernel's error", err)
	}
}

// TestFlashInPlace checks that the kernels get the transposed heads of
// MultiheadAttention, and the gradient of its output, as the views they
// are when they take them in place, and contiguous copies otherwise.
func TestFlashInPlace(t *testing.T) {
	old := fusedAttention
	defer func() { fusedAttention = old }()
	rng := array.CPU().NewRNG(91)
	in := grad.Param(rng.Normal(array.Float32, 0, 1, 2, 16, 32))
	m := NewMultiheadAttention(rng, 32, 2)
	m.Causal, m.Compute = true, array.BFloat16
	yc := m.Forward(in)
	if err := yc.Square().Mean().Backward(); err != nil {
		t.Fatal(err)
	}
	want := in.Grad().Copy()
	for _, take := range []bool{true, false} {
		calls := 0
		var views []bool // whether each operand the kernels got was strided
		k := fakeFlash(&calls, nil)
		fwd, bwd := k.forward, k.backward
		k.forward = func(q, kk, v *array.Array, scale float64, causal bool) (*array.Array, *array.Array, error) {
			views = append(views, !q.IsContiguous(), !kk.IsContiguous(), !v.IsContiguous())
			return fwd(q, kk, v, scale, causal)
		}
		k.backward = func(q, kk, v, o, lse, do *array.Array, scale float64, causal bool) (*array.Array, *array.Array, *array.Array, error) {
			views = append(views, !do.IsContiguous())
			return bwd(q, kk, v, o, lse, do, scale, causal)
		}
		k.inPlace = func(a *array.Array) error {
			if st := a.Strides(); take && st[len(st)-1] == 1 {
				return nil
			}
			return errors.New("not in place")
		}
		useFlash(k)
		in.ZeroGrad()
		y := m.Forward(in)
		if err := y.Square().Mean().Backward(); err != nil {
			t.Fatal(err)
		}
		if calls != 2 || len(views) != 4 {
			t.Fatalf("in place %v: %d kernel calls, %d operands recorded; want 2 and 4", take, calls, len(views))
		}
		for i, what := range []string{"q", "k", "v", "dO"} {
			if views[i] != take {
				t.Errorf("in place %v: %s strided %v, want %v", take, what, views[i], take)
			}
		}
		if e := relDiff(t, y.Value(), yc.Value()); !(e <= 1e-2) {
			t.Errorf("in place %v: output: relative difference %.3g", take, e)
		}
		if e := relDiff(t, in.Grad(), want); !(e <= 2e-2) {
			t.Errorf("in place %v: input gradient: relative difference %.3g", take, e)
		}
	}
}

// TestFlashSimInPlace runs the real kernels on the simulator under
// ScaledDotProductAttention, with GPT's layout: heads split from a
// (B, T, C) projection and merged back. The kernels must get the views
// (no copies), give an output whose merge is free, and match the
// composed operations, gradients included.
func TestFlashSimInPlace(t *testing.T) {
	sim, err := gocu.Open("sim")
	if err != nil {
		t.Fatal(err)
	}
	old := fusedAttention
	defer func() { fusedAttention = old }()
	const b, tt, h, d = 1, 80, 2, 64
	m := array.On(sim)
	rng := m.NewRNG(92)
	xs := []*array.Array{}
	for range 3 {
		xs = append(xs, rng.Normal(array.Float32, 0, 1, b, tt, h*d).AsType(array.BFloat16).Copy())
	}
	c := rng.Normal(array.Float32, 0, 1, b, tt, h*d)
	var strided []bool
	merged := false
	k := flashKernels{
		dt: array.BFloat16, dims: []int{64}, device: func(*gocu.Device) bool { return true }, inPlace: attn.CheckView,
		forward: func(q, kk, v *array.Array, scale float64, causal bool) (*array.Array, *array.Array, error) {
			strided = append(strided, !q.IsContiguous(), !kk.IsContiguous(), !v.IsContiguous())
			return attn.Forward(q, kk, v, scale, causal)
		},
		backward: func(q, kk, v, o, lse, do *array.Array, scale float64, causal bool) (*array.Array, *array.Array, *array.Array, error) {
			strided = append(strided, !do.IsContiguous())
			return attn.Backward(q, kk, v, o, lse, do, scale, causal)
		},
	}
	run := func() []*array.Array {
		var vs []*grad.Var
		for _, x := range xs {
			vs = append(vs, grad.Param(x.Copy()))
		}
		split := func(v *grad.Var) *grad.Var { return v.Reshape(b, tt, h, d).SwapAxes(1, 2) }
		y := ScaledDotProductAttention(split(vs[0]), split(vs[1]), split(vs[2]), &AttentionOptions{Causal: true})
		yt := y.SwapAxes(1, 2)
		merged = yt.Value().IsContiguous()
		out := yt.Reshape(b, tt, h*d)
		if err := out.AsType(array.Float32).Mul(c).Sum().Backward(); err != nil {
			t.Fatal(err)
		}
		return []*array.Array{out.Value(), vs[0].Grad(), vs[1].Grad(), vs[2].Grad()}
	}
	want := run()
	useFlash(k)
	got := run()
	if len(strided) != 4 {
		t.Fatalf("%d operands reached the kernels, want 4 (the kernels did not run?)", len(strided))
	}
	for i, what := range []string{"q", "k", "v", "dO"} {
		if !strided[i] {
			t.Errorf("%s reached the kernels contiguous: a copy was made", what)
		}
	}
	if !merged {
		t.Error("the output's heads do not merge without a copy")
	}
	for i, what := range []string{"output", "dq", "dk", "dv"} {
		e := relDiff(t, got[i], want[i])
		t.Logf("%s: relative difference %.3g", what, e)
		if !(e <= 2e-2) {
			t.Errorf("%s: relative difference %.3g from the composed operations", what, e)
		}
	}
}
