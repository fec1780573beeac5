package nn_test

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/gocu-dev/gocu/array"
	"github.com/gocu-dev/gocu/grad"
	"github.com/gocu-dev/gocu/nn"
)

// naiveAttention is attention in float64 loops over (B, H, S, D) slices
// laid out row-major; pad (B·Sk, or nil) marks ignored keys, keep
// (B·H·Sq·Sk, or nil) the dropout mask already scaled.
func naiveAttention(q, k, v []float64, b, h, sq, sk, d, dv int, scale float64, causal bool, pad []bool, keep []float64) []float64 {
	out := make([]float64, b*h*sq*dv)
	for bi := range b {
		for hi := range h {
			qo := (bi*h + hi) * sq * d
			ko := (bi*h + hi) * sk * d
			vo := (bi*h + hi) * sk * dv
			for i := range sq {
				s := make([]float64, sk)
				mx := math.Inf(-1)
				for j := range sk {
					if (causal && j > i) || (pad != nil && pad[bi*sk+j]) {
						s[j] = math.Inf(-1)
						continue
					}
					for c := range d {
						s[j] += q[qo+i*d+c] * k[ko+j*d+c]
					}
					s[j] *= scale
					mx = math.Max(mx, s[j])
				}
				if math.IsInf(mx, -1) {
					continue // every key masked: zeros
				}
				sum := 0.0
				for j := range sk {
					s[j] = math.Exp(s[j] - mx)
					sum += s[j]
				}
				for j := range sk {
					p := s[j] / sum
					if keep != nil {
						p *= keep[((bi*h+hi)*sq+i)*sk+j]
					}
					for c := range dv {
						out[((bi*h+hi)*sq+i)*dv+c] += p * v[vo+j*dv+c]
					}
				}
			}
		}
	}
	return out
}

func TestSDPAMatchesNaive(t *testing.T) {
	rng := array.CPU().NewRNG(21)
	const b, h, sq, sk, d, dv = 2, 3, 5, 7, 4, 6
	q := rng.Normal(array.Float64, 0, 1, b, h, sq, d)
	k := rng.Normal(array.Float64, 0, 1, b, h, sk, d)
	v := rng.Normal(array.Float64, 0, 1, b, h, sk, dv)
	padv := []bool{false, false, true, false, true, false, false, true, true, true, true, true, true, true}
	pad := array.FromSlice(padv, b, sk)
	for _, c := range []struct {
		name   string
		causal bool
		pad    bool
		scale  float64
	}{
		{"plain", false, false, 0},
		{"causal", true, false, 0},
		{"padding", false, true, 0.3},
		{"causal padding scale", true, true, -0.7},
	} {
		t.Run(c.name, func(t *testing.T) {
			o := &nn.AttentionOptions{Causal: c.causal, Scale: c.scale}
			var pv []bool
			if c.pad {
				o.KeyPadding, pv = pad, padv
			}
			got := nn.ScaledDotProductAttention(grad.Const(q), grad.Const(k), grad.Const(v), o)
			if err := got.Err(); err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got.Shape(), []int{b, h, sq, dv}) {
				t.Fatalf("shape %v", got.Shape())
			}
			scale := c.scale
			if scale == 0 {
				scale = 1 / math.Sqrt(d)
			}
			want := naiveAttention(f64(t, q), f64(t, k), f64(t, v), b, h, sq, sk, d, dv, scale, c.causal, pv, nil)
			near(t, "attention", f64(t, got.Value()), want, 1e-12)
		})
	}
}

// TestSDPADropout draws the mask from a generator of the same seed: the
// kept weights are scaled by 1/(1-p), the others zero.
func TestSDPADropout(t *testing.T) {
	rng := array.CPU().NewRNG(22)
	const b, h, s, d, p = 2, 2, 6, 3, 0.3
	q := rng.Normal(array.Float64, 0, 1, b, h, s, d)
	k := rng.Normal(array.Float64, 0, 1, b, h, s, d)
	v := rng.Normal(array.Float64, 0, 1, b, h, s, d)
	got := nn.ScaledDotProductAttention(grad.Const(q), grad.Const(k), grad.Const(v),
		&nn.AttentionOptions{Causal: true, Dropout: p, RNG: array.CPU().NewRNG(5)})
	u := f64(t, array.CPU().NewRNG(5).Uniform(array.Float64, 0, 1, b, h, s, s))
	keep := make([]float64, len(u))
	dropped := 0
	for i, x := range u {
		if x >= p {
			keep[i] = 1 / (1 - p)
		} else {
			dropped++
		}
	}
	if dropped == 0 || dropped == len(u) {
		t.Fatalf("%d of %d dropped", dropped, len(u))
	}
	want := naiveAttention(f64(t, q), f64(t, k), f64(t, v), b, h, s, s, d, d, 1/math.Sqrt(d), true, nil, keep)
	near(t, "attention with dropout", f64(t, got.Value()), want, 1e-12)
}

func TestSDPAGradients(t *testing.T) {
	rng := array.CPU().NewRNG(23)
	pad := array.FromSlice([]bool{false, true, false, true, true, true, true, false, false, false}, 2, 5)
	for _, c := range []struct {
		name   string
		qs, ks []int
		o      func() *nn.AttentionOptions
	}{
		{"plain 3-D", []int{2, 4, 3}, []int{2, 5, 3}, func() *nn.AttentionOptions { return nil }},
		{"causal", []int{2, 2, 4, 3}, []int{2, 2, 4, 3}, func() *nn.AttentionOptions { return &nn.AttentionOptions{Causal: true} }},
		{"causal more keys", []int{1, 2, 3, 2}, []int{1, 2, 5, 2}, func() *nn.AttentionOptions { return &nn.AttentionOptions{Causal: true} }},
		{"padding and scale", []int{2, 2, 3, 3}, []int{2, 2, 5, 3}, func() *nn.AttentionOptions {
			return &nn.AttentionOptions{KeyPadding: pad, Scale: 0.8}
		}},
		{"causal padding dropout", []int{2, 1, 5, 3}, []int{2, 1, 5, 3}, func() *nn.AttentionOptions {
			return &nn.AttentionOptions{Causal: true, KeyPadding: pad, Dropout: 0.25, RNG: array.CPU().NewRNG(8)}
		}},
		{"broadcast batch", []int{2, 3, 4, 2}, []int{1, 3, 4, 2}, func() *nn.AttentionOptions { return nil }},
	} {
		t.Run(c.name, func(t *testing.T) {
			vs := slices.Clone(c.ks)
			vs[len(vs)-1] = 4
			xs := []*array.Array{
				rng.Normal(array.Float64, 0, 1, c.qs...),
				rng.Normal(array.Float64, 0, 1, c.ks...),
				rng.Normal(array.Float64, 0, 1, vs...),
			}
			f := func(x ...*grad.Var) *grad.Var { return nn.ScaledDotProductAttention(x[0], x[1], x[2], c.o()) }
			if err := grad.Check(f, xs, 1e-6); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestSDPAFullyMasked checks that a batch whose keys are all padded gives
// zeros and finite gradients, as torch's math backend.
func TestSDPAFullyMasked(t *testing.T) {
	rng := array.CPU().NewRNG(24)
	q := grad.Param(rng.Normal(array.Float32, 0, 1, 2, 3, 4))
	k := grad.Param(rng.Normal(array.Float32, 0, 1, 2, 5, 4))
	v := grad.Param(rng.Normal(array.Float32, 0, 1, 2, 5, 4))
	pad := array.FromSlice([]bool{true, true, true, true, true, false, true, false, true, false}, 2, 5)
	y := nn.ScaledDotProductAttention(q, k, v, &nn.AttentionOptions{KeyPadding: pad})
	if err := y.Square().Sum().Backward(); err != nil {
		t.Fatal(err)
	}
	out := f64(t, y.Value())
	for i, x := range out {
		if (i < 12) != (x == 0) {
			t.Fatalf("output element %d is %v: want zeros exactly in batch 0", i, x)
		}
	}
	for _, p := range []*grad.Var{q, k, v} {
		for i, g := range f64(t, p.Grad()) {
			if math.IsNaN(g) || math.IsInf(g, 0) {
				t.Fatalf("gradient element %d is %v", i, g)
			}
		}
	}
}

func TestSDPAErrors(t *testing.T) {
	rng := array.CPU().NewRNG(25)
	x := grad.Const(rng.Normal(array.Float32, 0, 1, 2, 3, 4))
	k5 := grad.Const(rng.Normal(array.Float32, 0, 1, 2, 3, 5))
	v2 := grad.Const(rng.Normal(array.Float32, 0, 1, 2, 2, 4))
	sdpa := nn.ScaledDotProductAttention
	for _, c := range []struct {
		name     string
		y        *grad.Var
		sentinel error
	}{
		{"1-D query", sdpa(grad.Const(array.FromSlice([]float32{1, 2})), x, x, nil), array.ErrShape},
		{"head sizes differ", sdpa(x, k5, x, nil), array.ErrShape},
		{"key and value counts differ", sdpa(x, x, v2, nil), array.ErrShape},
		{"dropout 1", sdpa(x, x, x, &nn.AttentionOptions{Dropout: 1, RNG: rng}), nn.ErrHyper},
		{"dropout -0.1", sdpa(x, x, x, &nn.AttentionOptions{Dropout: -0.1, RNG: rng}), nn.ErrHyper},
		{"dropout NaN", sdpa(x, x, x, &nn.AttentionOptions{Dropout: math.NaN(), RNG: rng}), nn.ErrHyper},
		{"dropout without RNG", sdpa(x, x, x, &nn.AttentionOptions{Dropout: 0.1}), nn.ErrHyper},
		{"scale Inf", sdpa(x, x, x, &nn.AttentionOptions{Scale: math.Inf(1)}), nn.ErrHyper},
		{"float padding", sdpa(x, x, x, &nn.AttentionOptions{KeyPadding: array.Zeros(array.Float32, 2, 3)}), array.ErrDType},
		{"padding shape", sdpa(x, x, x, &nn.AttentionOptions{KeyPadding: array.Zeros(array.Bool, 3, 3)}), array.ErrShape},
		{"nil query", sdpa(nil, x, x, nil), grad.ErrNilVar},
		{"batch axes that do not broadcast", sdpa(x, grad.Const(rng.Normal(array.Float32, 0, 1, 3, 3, 4)), x, nil), array.ErrShape},
	} {
		if err := c.y.Err(); !errors.Is(err, c.sentinel) {
			t.Errorf("%s: error %v, want %v", c.name, err, c.sentinel)
		}
	}
}

func TestEmbedding(t *testing.T) {
	rng := array.CPU().NewRNG(26)
	e := nn.NewEmbedding(rng, 6, 3)
	if e.PaddingIdx != -1 {
		t.Fatalf("PaddingIdx %d, want -1", e.PaddingIdx)
	}
	w := f64(t, e.Weight.Value())
	ids := []int64{4, 0, 4, 5, 1, 4}
	y := e.Forward(grad.Const(array.FromSlice(ids, 2, 3)))
	if err := y.Err(); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(y.Shape(), []int{2, 3, 3}) {
		t.Fatalf("shape %v, want [2 3 3]", y.Shape())
	}
	var want []float64
	for _, id := range ids {
		want = append(want, w[id*3:id*3+3]...)
	}
	near(t, "embedding", f64(t, y.Value()), want, 0)

	// The gradient of sum(y·c) adds c's rows into the rows of their ids.
	c := rng.Normal(array.Float32, 0, 1, 2, 3, 3)
	if err := y.Mul(c).Sum().Backward(); err != nil {
		t.Fatal(err)
	}
	cv := f64(t, c)
	wantG := make([]float64, 18)
	for i, id := range ids {
		for j := range 3 {
			wantG[int(id)*3+j] += cv[i*3+j]
		}
	}
	near(t, "embedding gradient", f64(t, e.Weight.Grad()), wantG, 1e-6)

	// grad.Check in float64, with int32 ids and a duplicate.
	idx := grad.Const(array.FromSlice([]int32{2, 2, 0, 3}, 4))
	f := func(x ...*grad.Var) *grad.Var { return (&nn.Embedding{Weight: x[0], PaddingIdx: -1}).Forward(idx) }
	if err := grad.Check(f, []*array.Array{rng.Normal(array.Float64, 0, 1, 5, 2)}, 1e-6); err != nil {
		t.Fatal(err)
	}
}

func TestEmbeddingPadding(t *testing.T) {
	rng := array.CPU().NewRNG(27)
	e := nn.NewEmbeddingPadding(rng, 5, 4, 2)
	w := f64(t, e.Weight.Value())
	if !slices.Equal(w[8:12], []float64{0, 0, 0, 0}) {
		t.Fatalf("padding row %v, want zeros", w[8:12])
	}
	if slices.Equal(w[4:8], []float64{0, 0, 0, 0}) {
		t.Fatal("row 1 is zero too")
	}
	ids := array.FromSlice([]int64{2, 1, 2, 3})
	y := e.Forward(grad.Const(ids))
	c := rng.Normal(array.Float32, 0, 1, 4, 4)
	if err := y.Mul(c).Sum().Backward(); err != nil {
		t.Fatal(err)
	}
	g, cv := f64(t, e.Weight.Grad()), f64(t, c)
	for j := range 4 {
		if g[8+j] != 0 {
			t.Fatalf("padding row gradient %v, want zeros", g[8:12])
		}
		if want := cv[4+j]; g[4+j] != want {
			t.Fatalf("row 1 gradient %v, want %v", g[4+j], want)
		}
	}
}

func TestEmbeddingErrors(t *testing.T) {
	rng := array.CPU().NewRNG(28)
	e := nn.NewEmbedding(rng, 5, 2)
	for _, c := range []struct {
		name     string
		ids      *array.Array
		sentinel error
	}{
		{"id = num", array.FromSlice([]int64{0, 5}), array.ErrIndex},
		{"negative id", array.FromSlice([]int32{-1, 2}), array.ErrIndex},
		{"float ids", array.FromSlice([]float32{1, 2}), array.ErrDType},
	} {
		if err := e.Forward(grad.Const(c.ids)).Err(); !errors.Is(err, c.sentinel) {
			t.Errorf("%s: error %v, want %v", c.name, err, c.sentinel)
		}
	}
	var nilEmb *nn.Embedding
	for name, e := range map[string]*nn.Embedding{"nil Embedding": nilEmb, "nil weight": {}} {
		if err := e.Forward(grad.Const(array.FromSlice([]int64{1}))).Err(); !errors.Is(err, nn.ErrHyper) {
			t.Errorf("%s: error %v, want ErrHyper", name, err)
		}
	}
	if err := e.Forward(nil).Err(); !errors.Is(err, grad.ErrNilVar) {
		t.Errorf("nil ids: error %v, want ErrNilVar", err)
	}
	e.PaddingIdx = 7
	if err := e.Forward(grad.Const(array.FromSlice([]int64{1}))).Err(); !errors.Is(err, array.ErrValue) {
		t.Errorf("padding index 7 of 5: error %v, want ErrValue", err)
	}
	if err := (&nn.Embedding{Weight: grad.Param(array.Zeros(array.Float32, 4))}).Forward(grad.Const(array.FromSlice([]int64{1}))).Err(); !errors.Is(err, array.ErrShape) {
		t.Errorf("1-D weight: error %v, want ErrShape", err)
	}
}

// mhaReference computes MultiheadAttention in float64 loops from the
// layer's parameters.
func mhaReference(t *testing.T, m *nn.MultiheadAttention, q, k, v []float64, b, sq, sk int, causal bool, pad []bool) []float64 {
	dim, h := m.Dim, m.Heads
	hd := dim / h
	w, bias := f64(t, m.InProjWeight.Value()), f64(t, m.InProjBias.Value())
	proj := func(x []float64, s, part int) []float64 { // (B, H, S, hd)
		out := make([]float64, b*h*s*hd)
		for bi := range b {
			for si := range s {
				for o := range dim {
					acc := bias[part*dim+o]
					for i := range dim {
						acc += x[(bi*s+si)*dim+i] * w[(part*dim+o)*dim+i]
					}
					out[((bi*h+o/hd)*s+si)*hd+o%hd] = acc
				}
			}
		}
		return out
	}
	a := naiveAttention(proj(q, sq, 0), proj(k, sk, 1), proj(v, sk, 2), b, h, sq, sk, hd, hd, 1/math.Sqrt(float64(hd)), causal, pad, nil)
	ow, ob := f64(t, m.OutProj.Weight.Value()), f64(t, m.OutProj.Bias.Value())
	out := make([]float64, b*sq*dim)
	for bi := range b {
		for si := range sq {
			for o := range dim {
				acc := ob[o]
				for i := range dim {
					acc += a[((bi*h+i/hd)*sq+si)*hd+i%hd] * ow[o*dim+i]
				}
				out[(bi*sq+si)*dim+o] = acc
			}
		}
	}
	return out
}

func TestMultiheadAttention(t *testing.T) {
	rng := array.CPU().NewRNG(29)
	m := nn.NewMultiheadAttention(rng, 6, 2)
	names := []string{}
	for _, n := range m.Named() {
		names = append(names, n.Name+fmt.Sprint(n.Var.Shape()))
	}
	if want := []string{"in_proj_weight[18 6]", "in_proj_bias[18]", "out_proj.weight[6 6]", "out_proj.bias[6]"}; !slices.Equal(names, want) {
		t.Fatalf("parameters %v, want %v", names, want)
	}
	if err := nn.Cast(m, array.Float64); err != nil {
		t.Fatal(err)
	}
	// Non-zero biases, so that the reference checks where they go.
	for _, p := range []*grad.Var{m.InProjBias, m.OutProj.Bias} {
		if err := p.SetValue(rng.Normal(array.Float64, 0, 1, p.Shape()...)); err != nil {
			t.Fatal(err)
		}
	}
	const b, sq, sk = 2, 4, 5
	x := rng.Normal(array.Float64, 0, 1, b, sq, 6)
	kv := rng.Normal(array.Float64, 0, 1, b, sk, 6)
	m.Causal = true
	got := m.Forward(grad.Const(x))
	want := mhaReference(t, m, f64(t, x), f64(t, x), f64(t, x), b, sq, sq, true, nil)
	near(t, "self-attention", f64(t, got.Value()), want, 1e-12)

	padv := []bool{false, true, false, false, true, true, false, true, false, false}
	got = m.Attend(grad.Const(x), grad.Const(kv), grad.Const(kv), &nn.AttentionOptions{KeyPadding: array.FromSlice(padv, b, sk)})
	want = mhaReference(t, m, f64(t, x), f64(t, kv), f64(t, kv), b, sq, sk, false, padv)
	near(t, "cross attention", f64(t, got.Value()), want, 1e-12)
}

func TestMultiheadAttentionGradients(t *testing.T) {
	rng := array.CPU().NewRNG(30)
	m := nn.NewMultiheadAttention(rng, 4, 2)
	m.Causal = true
	moduleCheck(t, m, rng.Normal(array.Float32, 0, 1, 2, 3, 4), func(y *grad.Var) *grad.Var { return y.Square().Mean() })

	// Cross attention with padding: gradients of q, k, v and the weights.
	c := nn.NewMultiheadAttention(rng, 4, 2)
	if err := nn.Cast(c, array.Float64); err != nil {
		t.Fatal(err)
	}
	pad := array.FromSlice([]bool{false, true, false, true, false, false}, 2, 3)
	f := func(x ...*grad.Var) *grad.Var {
		c.InProjWeight, c.InProjBias, c.OutProj.Weight = x[3], x[4], x[5]
		return c.Attend(x[0], x[1], x[2], &nn.AttentionOptions{KeyPadding: pad})
	}
	xs := []*array.Array{
		rng.Normal(array.Float64, 0, 1, 2, 2, 4),
		rng.Normal(array.Float64, 0, 1, 2, 3, 4),
		rng.Normal(array.Float64, 0, 1, 2, 3, 4),
		c.InProjWeight.Value(),
		rng.Normal(array.Float64, 0, 1, 12),
		c.OutProj.Weight.Value(),
	}
	if err := grad.Check(f, xs, 1e-6); err != nil {
		t.Fatal(err)
	}
}

func TestMultiheadAttentionErrors(t *testing.T) {
	rng := array.CPU().NewRNG(31)
	x := grad.Const(rng.Normal(array.Float32, 0, 1, 2, 3, 6))
	m := nn.NewMultiheadAttention(rng, 6, 4)
	if err := m.Forward(x).Err(); !errors.Is(err, nn.ErrHyper) {
		t.Errorf("4 heads for width 6: error %v, want ErrHyper", err)
	}
	m = nn.NewMultiheadAttention(rng, 6, 3)
	if err := m.Forward(grad.Const(rng.Normal(array.Float32, 0, 1, 2, 3, 5))).Err(); !errors.Is(err, array.ErrShape) {
		t.Errorf("input width 5 for 6: error %v, want ErrShape", err)
	}
	if err := m.Forward(grad.Const(rng.Normal(array.Float32, 0, 1, 3, 6))).Err(); !errors.Is(err, array.ErrShape) {
		t.Errorf("2-D input: error %v, want ErrShape", err)
	}
	kv := grad.Const(rng.Normal(array.Float32, 0, 1, 3, 4, 6))
	if err := m.Attend(x, kv, kv, nil).Err(); !errors.Is(err, array.ErrShape) {
		t.Errorf("batch 2 queries, batch 3 keys: error %v, want ErrShape", err)
	}
	for _, p := range []float64{1, -0.5, math.NaN()} {
		m.Dropout = p
		if err := m.Forward(x).Err(); !errors.Is(err, nn.ErrHyper) {
			t.Errorf("dropout %v: error %v, want ErrHyper", p, err)
		}
	}
	bad := nn.NewMultiheadAttention(rng, 6, 3)
	bad.InProjWeight = grad.Param(array.Zeros(array.Float32, 6, 6))
	if err := bad.Forward(x).Err(); !errors.Is(err, array.ErrShape) {
		t.Errorf("in_proj_weight (6, 6): error %v, want ErrShape", err)
	}
	bad = nn.NewMultiheadAttention(rng, 6, 3)
	bad.InProjBias = grad.Param(array.Zeros(array.Float32, 6))
	if err := bad.Forward(x).Err(); !errors.Is(err, array.ErrShape) {
		t.Errorf("in_proj_bias (6): error %v, want ErrShape", err)
	}
	var nilMHA *nn.MultiheadAttention
	if err := nilMHA.Forward(x).Err(); !errors.Is(err, nn.ErrHyper) {
		t.Errorf("nil layer: error %v, want ErrHyper", err)
	}
	m.Dropout = 0.2
	nn.Train(m, false)
	a := f64(t, m.Forward(x).Value())
	b := f64(t, m.Forward(x).Value())
	near(t, "evaluation is deterministic", a, b, 0)
}
