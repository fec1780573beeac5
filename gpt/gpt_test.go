package gpt

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/gocu-dev/gocu/array"
	"github.com/gocu-dev/gocu/grad"
	"github.com/gocu-dev/gocu/nn"
)

// small is a model small enough for float64 references and finite
// differences, with every kind of parameter.
var small = Config{Layers: 2, Heads: 2, Dim: 8, Context: 6, Vocab: 11, Bias: true}

// randomize sets every parameter to normal values of deviation sd, so
// that biases and layer norms are exercised too (GPT-2's init makes them
// zeros and ones).
func randomize(t testing.TB, m *Model, seed uint64, sd float64) {
	t.Helper()
	rng := array.On(m.WTE.Weight.Value().Device()).NewRNG(seed)
	for _, n := range m.Named() {
		if err := n.Var.Value().Assign(rng.Normal(n.Var.DType(), 0, sd, n.Var.Shape()...)); err != nil {
			t.Fatal(err)
		}
	}
}

// tokens returns (b, t) random tokens in [0, vocab) as int64.
func tokens(dev *array.Maker, seed uint64, vocab, b, t int) *array.Array {
	return dev.NewRNG(seed).Integers(array.Int64, 0, int64(vocab), b, t).Eval()
}

func params64(t testing.TB, m *Model) map[string][]float64 {
	t.Helper()
	p := map[string][]float64{}
	for _, n := range m.Named() {
		v, err := n.Var.Value().AsType(array.Float64).Float64s()
		if err != nil {
			t.Fatal(err)
		}
		p[n.Name] = v
	}
	return p
}

// refLogits is the model's forward pass written out in float64 loops,
// after train_gpt.py's PyTorch model: the reference for Forward.
func refLogits(c Config, p map[string][]float64, ids [][]int64) [][][]float64 {
	d, dh := c.Dim, c.Dim/c.Heads
	get := func(name string) []float64 {
		if v, ok := p[name]; ok {
			return v
		}
		return nil // no bias
	}
	linear := func(x []float64, w, b []float64, out int) []float64 {
		in := len(x)
		y := make([]float64, out)
		for o := range out {
			s := 0.0
			if b != nil {
				s = b[o]
			}
			for i := range in {
				s += x[i] * w[o*in+i]
			}
			y[o] = s
		}
		return y
	}
	ln := func(x, w, b []float64) []float64 {
		mean, v := 0.0, 0.0
		for _, e := range x {
			mean += e
		}
		mean /= float64(len(x))
		for _, e := range x {
			v += (e - mean) * (e - mean)
		}
		v /= float64(len(x))
		y := make([]float64, len(x))
		for i, e := range x {
			y[i] = (e - mean) / math.Sqrt(v+1e-5) * w[i]
			if b != nil {
				y[i] += b[i]
			}
		}
		return y
	}
	gelu := func(x float64) float64 {
		return 0.5 * x * (1 + math.Tanh(math.Sqrt(2/math.Pi)*(x+0.044715*x*x*x)))
	}
	var out [][][]float64
	for _, seq := range ids {
		T := len(seq)
		x := make([][]float64, T)
		for t, id := range seq {
			x[t] = make([]float64, d)
			for i := range d {
				x[t][i] = p["wte.weight"][int(id)*d+i] + p["wpe.weight"][t*d+i]
			}
		}
		for l := range c.Layers {
			pre := fmt.Sprintf("blocks.%d.", l)
			qkv := make([][]float64, T)
			for t := range T {
				h := ln(x[t], get(pre+"ln1.weight"), get(pre+"ln1.bias"))
				qkv[t] = linear(h, get(pre+"qkv.weight"), get(pre+"qkv.bias"), 3*d)
			}
			for t := range T {
				y := make([]float64, d)
				for hd := range c.Heads {
					q := qkv[t][hd*dh : (hd+1)*dh]
					att := make([]float64, t+1)
					hi := math.Inf(-1)
					for s := 0; s <= t; s++ {
						k := qkv[s][d+hd*dh : d+(hd+1)*dh]
						for i := range dh {
							att[s] += q[i] * k[i]
						}
						att[s] /= math.Sqrt(float64(dh))
						hi = max(hi, att[s])
					}
					sum := 0.0
					for s := range att {
						att[s] = math.Exp(att[s] - hi)
						sum += att[s]
					}
					for s := range att {
						v := qkv[s][2*d+hd*dh : 2*d+(hd+1)*dh]
						for i := range dh {
							y[hd*dh+i] += att[s] / sum * v[i]
						}
					}
				}
				qkv[t] = append(qkv[t], y...) // y rides along: x changes only after all positions
			}
			for t := range T {
				a := linear(qkv[t][3*d:], get(pre+"proj.weight"), get(pre+"proj.bias"), d)
				for i := range d {
					x[t][i] += a[i]
				}
				h := ln(x[t], get(pre+"ln2.weight"), get(pre+"ln2.bias"))
				f := linear(h, get(pre+"fc.weight"), get(pre+"fc.bias"), 4*d)
				for i := range f {
					f[i] = gelu(f[i])
				}
				o := linear(f, get(pre+"out.weight"), get(pre+"out.bias"), d)
				for i := range d {
					x[t][i] += o[i]
				}
			}
		}
		logits := make([][]float64, T)
		for t := range T {
			h := ln(x[t], get("lnf.weight"), get("lnf.bias"))
			logits[t] = linear(h, p["wte.weight"], nil, c.Vocab)
		}
		out = append(out, logits)
	}
	return out
}

func ids2D(t testing.TB, a *array.Array) [][]int64 {
	t.Helper()
	v, err := a.AsType(array.Int64).Int64s()
	if err != nil {
		t.Fatal(err)
	}
	s := a.Shape()
	var out [][]int64
	for i := range s[0] {
		out = append(out, v[i*s[1]:(i+1)*s[1]])
	}
	return out
}

// TestForwardMatchesReference checks the logits, in float32 and float64,
// with and without biases, against the float64 loops of refLogits.
func TestForwardMatchesReference(t *testing.T) {
	dev := array.CPU()
	for _, bias := range []bool{true, false} {
		for _, dt := range []array.DType{array.Float32, array.Float64} {
			cfg := small
			cfg.Bias = bias
			m, err := New(dev.NewRNG(1), cfg)
			if err != nil {
				t.Fatal(err)
			}
			if err := nn.Cast(m, dt); err != nil {
				t.Fatal(err)
			}
			randomize(t, m, 2, 0.5)
			ids := tokens(dev, 3, cfg.Vocab, 3, cfg.Context)
			want := refLogits(cfg, params64(t, m), ids2D(t, ids))
			var got *grad.Var
			grad.NoGrad(func() { got = m.Forward(grad.Const(ids)) })
			if !slices.Equal(got.Shape(), []int{3, cfg.Context, cfg.Vocab}) || got.DType() != dt {
				t.Fatalf("logits of shape %v and dtype %v", got.Shape(), got.DType())
			}
			g, err := got.Value().AsType(array.Float64).Float64s()
			if err != nil {
				t.Fatal(err)
			}
			tol := 1e-12
			if dt == array.Float32 {
				tol = 2e-5
			}
			worst := 0.0
			for b, seq := range want {
				for p, row := range seq {
					for v, w := range row {
						e := math.Abs(g[(b*cfg.Context+p)*cfg.Vocab+v]-w) / max(1, math.Abs(w))
						worst = max(worst, e)
					}
				}
			}
			if !(worst <= tol) {
				t.Errorf("bias %v, %v: logits differ from the float64 reference by %.3g (tolerance %.3g)", bias, dt, worst, tol)
			}
		}
	}
}

// TestGradientOfStep checks the gradients of one training step's loss,
// in float64, against central finite differences: along a random
// direction in all parameters at once, and element by element for a few
// elements of every parameter.
func TestGradientOfStep(t *testing.T) {
	dev := array.CPU()
	for _, bias := range []bool{true, false} {
		cfg := small
		cfg.Bias = bias
		m, err := New(dev.NewRNG(1), cfg)
		if err != nil {
			t.Fatal(err)
		}
		if err := nn.Cast(m, array.Float64); err != nil {
			t.Fatal(err)
		}
		randomize(t, m, 4, 0.4)
		all := tokens(dev, 5, cfg.Vocab, 2, cfg.Context+1)
		ids, tgt := all.Slice(array.All, array.S(0, cfg.Context)), all.Slice(array.All, array.S(1, cfg.Context+1))
		loss := m.Loss(ids, tgt)
		if err := loss.Backward(); err != nil {
			t.Fatal(err)
		}
		named := m.Named()
		vals := make([][]float64, len(named))
		grads := make([][]float64, len(named))
		for i, n := range named {
			if vals[i], err = n.Var.Value().Float64s(); err != nil {
				t.Fatal(err)
			}
			if n.Var.Grad() == nil {
				t.Fatalf("%s has no gradient", n.Name)
			}
			if grads[i], err = n.Var.Grad().Float64s(); err != nil {
				t.Fatal(err)
			}
		}
		set := func(i int, v []float64) {
			if err := named[i].Var.Value().Assign(array.FromSlice(v, named[i].Var.Shape()...)); err != nil {
				t.Fatal(err)
			}
		}
		eval := func() float64 {
			var l float64
			grad.NoGrad(func() { l, err = m.Loss(ids, tgt).Item() })
			if err != nil {
				t.Fatal(err)
			}
			return l
		}
		const h = 1e-5
		// Along a random direction d: (L(p+hd) - L(p-hd))/2h = <∇L, d>.
		r := rand.New(rand.NewPCG(6, 7))
		dirs := make([][]float64, len(named))
		want := 0.0
		for i := range named {
			dirs[i] = make([]float64, len(vals[i]))
			for j := range dirs[i] {
				dirs[i][j] = r.NormFloat64()
				want += dirs[i][j] * grads[i][j]
			}
		}
		var l [2]float64
		for s, sign := range []float64{1, -1} {
			for i := range named {
				v := slices.Clone(vals[i])
				for j := range v {
					v[j] += sign * h * dirs[i][j]
				}
				set(i, v)
			}
			l[s] = eval()
		}
		for i := range named {
			set(i, vals[i])
		}
		if num := (l[0] - l[1]) / (2 * h); math.Abs(num-want) > 1e-6*max(1, math.Abs(num)) {
			t.Errorf("bias %v: directional derivative %.12g, numeric %.12g", bias, want, num)
		}
		// Element by element, three random elements of every parameter.
		for i, n := range named {
			for range 3 {
				j := r.IntN(len(vals[i]))
				var l [2]float64
				for s, sign := range []float64{1, -1} {
					v := slices.Clone(vals[i])
					v[j] += sign * h
					set(i, v)
					l[s] = eval()
				}
				set(i, vals[i])
				num := (l[0] - l[1]) / (2 * h)
				if math.Abs(num-grads[i][j]) > 1e-6*max(1, math.Abs(num)) {
					t.Errorf("bias %v: %s[%d]: gradient %.12g, numeric %.12g", bias, n.Name, j, grads[i][j], num)
				}
			}
		}
	}
}

// TestNamesMatchTorch checks the state-dict names and shapes against
// train_gpt.py's model (its state_dict without the tied head.weight).
func TestNamesMatchTorch(t *testing.T) {
	m, err := New(array.CPU().NewRNG(1), small)
	if err != nil {
		t.Fatal(err)
	}
	d, v, c := small.Dim, small.Vocab, small.Context
	want := []string{fmt.Sprint("wte.weight", []int{v, d}), fmt.Sprint("wpe.weight", []int{c, d})}
	for l := range small.Layers {
		for _, p := range []struct {
			name  string
			shape []int
		}{
			{"ln1.weight", []int{d}}, {"ln1.bias", []int{d}}, {"ln2.weight", []int{d}}, {"ln2.bias", []int{d}},
			{"qkv.weight", []int{3 * d, d}}, {"qkv.bias", []int{3 * d}}, {"proj.weight", []int{d, d}}, {"proj.bias", []int{d}},
			{"fc.weight", []int{4 * d, d}}, {"fc.bias", []int{4 * d}}, {"out.weight", []int{d, 4 * d}}, {"out.bias", []int{d}},
		} {
			want = append(want, fmt.Sprint(fmt.Sprintf("blocks.%d.%s", l, p.name), p.shape))
		}
	}
	want = append(want, fmt.Sprint("lnf.weight", []int{d}), fmt.Sprint("lnf.bias", []int{d}))
	var got []string
	n := 0
	for _, p := range m.Named() {
		got = append(got, fmt.Sprint(p.Name, p.Var.Shape()))
		n += p.Var.Size()
	}
	if !slices.Equal(got, want) {
		t.Errorf("names:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if n != small.Params() {
		t.Errorf("%d parameters, Config.Params says %d", n, small.Params())
	}
	nb := small
	nb.Bias = false
	mb, _ := New(array.CPU().NewRNG(1), nb)
	n = 0
	for _, p := range mb.Named() {
		if strings.HasSuffix(p.Name, ".bias") {
			t.Errorf("Bias false: %s", p.Name)
		}
		n += p.Var.Size()
	}
	if n != nb.Params() {
		t.Errorf("Bias false: %d parameters, Config.Params says %d", n, nb.Params())
	}
	// GPT-2 small: 124M with the padded vocabulary, as nanoGPT counts.
	if p := GPT2().Params(); p != 124_475_904 {
		t.Errorf("GPT-2 has %d parameters, want 124,475,904", p)
	}
}

// TestInit checks GPT-2's initialisation: deviations 0.02 and
// 0.02/√(2·Layers), zero biases, unit layer-norm weights.
func TestInit(t *testing.T) {
	cfg := Config{Layers: 4, Heads: 4, Dim: 128, Context: 64, Vocab: 256, Bias: true}
	m, err := New(array.CPU().NewRNG(1), cfg)
	if err != nil {
		t.Fatal(err)
	}
	resid := 0.02 / math.Sqrt(8)
	for _, n := range m.Named() {
		v, err := n.Var.Value().AsType(array.Float64).Float64s()
		if err != nil {
			t.Fatal(err)
		}
		mean, sq := 0.0, 0.0
		for _, x := range v {
			mean += x
			sq += x * x
		}
		mean /= float64(len(v))
		sd := math.Sqrt(sq/float64(len(v)) - mean*mean)
		var wantMean, wantSD float64
		switch {
		case strings.Contains(n.Name, "ln") && strings.HasSuffix(n.Name, "weight"):
			wantMean = 1
		case strings.HasSuffix(n.Name, "bias"):
		case strings.HasSuffix(n.Name, "proj.weight") || strings.HasSuffix(n.Name, "out.weight"):
			wantSD = resid
		default:
			wantSD = 0.02
		}
		// With ≥ 8192 samples the deviation is within 5% of its value.
		if math.Abs(mean-wantMean) > 0.1*max(wantSD, 1e-9)+1e-12 || math.Abs(sd-wantSD) > 0.05*wantSD+1e-12 {
			t.Errorf("%s: mean %.4g, deviation %.4g; want %g, %g", n.Name, mean, sd, wantMean, wantSD)
		}
	}
}

func TestConfigErrors(t *testing.T) {
	for _, c := range []struct {
		cfg  Config
		want string
	}{
		{Config{Layers: 0, Heads: 1, Dim: 8, Context: 4, Vocab: 4}, "layers 0"},
		{Config{Layers: 1, Heads: 3, Dim: 8, Context: 4, Vocab: 4}, "not a multiple of the 3 heads"},
		{Config{Layers: 1, Heads: 1, Dim: 8, Context: -1, Vocab: 4}, "context -1"},
		{Config{Layers: 1, Heads: 1, Dim: 8, Context: 4, Vocab: 0}, "vocabulary 0"},
		{Config{Layers: 1, Heads: 1, Dim: 8, Context: 4, Vocab: 4, Dropout: 1}, "dropout 1"},
		{Config{Layers: 1, Heads: 1, Dim: 8, Context: 4, Vocab: 4, Dropout: math.NaN()}, "dropout NaN"},
	} {
		_, err := New(array.CPU().NewRNG(1), c.cfg)
		if !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want ErrConfig saying %q", c.cfg, err, c.want)
		}
	}
	if _, err := New(nil, small); err == nil {
		t.Error("New with a nil RNG: no error")
	}
	if _, err := Preset("gpt3"); !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), "bytes") {
		t.Errorf("Preset(gpt3): %v", err)
	}
	for _, name := range PresetNames() {
		c, err := Preset(name)
		if err != nil || c.Validate() != nil {
			t.Errorf("Preset(%s): %v %v", name, err, c.Validate())
		}
	}
	if b := Bytes(); b != (Config{Layers: 6, Heads: 6, Dim: 384, Context: 256, Vocab: 256, Bias: true}) {
		t.Errorf("Bytes() = %+v, not train_gpt.py's char_small", b)
	}
}

func TestInputErrors(t *testing.T) {
	dev := array.CPU()
	m, err := New(dev.NewRNG(1), small)
	if err != nil {
		t.Fatal(err)
	}
	long := tokens(dev, 1, small.Vocab, 1, small.Context+1)
	for _, c := range []struct {
		name string
		v    *grad.Var
		want string
	}{
		{"too long", m.Forward(grad.Const(long)), "the context holds 6"},
		{"floats", m.Forward(grad.Const(dev.Zeros(array.Float32, 1, 3))), "want integers (B, T)"},
		{"1-D", m.Forward(grad.Const(dev.Zeros(array.Int64, 3))), "want integers (B, T)"},
		{"nil", m.Forward(nil), "nil *Var"},
		{"out of range", m.Forward(grad.Const(array.FromSlice([]int64{0, 11}, 1, 2))), "out of"},
		{"targets", m.Loss(dev.Zeros(array.Int64, 2, 3), dev.Zeros(array.Int64, 2, 4)), "targets of shape [2 4]"},
		{"target out of range", m.Loss(dev.Zeros(array.Int64, 1, 2), array.FromSlice([]int64{0, 11}, 1, 2)), "label 11"},
	} {
		err := c.v.Err()
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error saying %q", c.name, err, c.want)
		}
	}
}

// TestByteIDs checks that uint8 ids and targets, as the corpus holds them,
// give what int64 ones give.
func TestByteIDs(t *testing.T) {
	dev := array.CPU()
	cfg := small
	cfg.Vocab = 256
	m := randomModel(t, cfg)
	all := tokens(dev, 8, 256, 2, cfg.Context+1)
	x, y := all.Slice(array.All, array.S(0, cfg.Context)), all.Slice(array.All, array.S(1, cfg.Context+1))
	var a, b float64
	var err error
	grad.NoGrad(func() {
		a, err = m.Loss(x, y).Item()
		if err == nil {
			b, err = m.Loss(x.AsType(array.Uint8), y.AsType(array.Uint8)).Item()
		}
	})
	if err != nil || a != b {
		t.Errorf("loss %v with int64 tokens, %v with uint8 (%v)", a, b, err)
	}
	if err := m.Loss(x, y.AsType(array.Float32)).Err(); err == nil {
		t.Error("float targets: no error")
	}
}

// TestDropout checks that dropout acts while training only, and that the
// gradients flow through it.
func TestDropout(t *testing.T) {
	dev := array.CPU()
	cfg := small
	cfg.Dropout = 0.5
	m := randomModel(t, cfg)
	plain := small
	ref := randomModel(t, plain) // the same weights: one seed, one randomize
	ids := tokens(dev, 3, cfg.Vocab, 2, cfg.Context)
	a, b := logits(t, m, ids), logits(t, m, ids)
	if slices.Equal(a, b) {
		t.Error("two training forwards with dropout 0.5 agree")
	}
	m.SetTraining(false)
	c, d := logits(t, m, ids), logits(t, ref, ids)
	if !slices.Equal(c, d) {
		t.Error("in evaluation, dropout changed the logits")
	}
	m.SetTraining(true)
	all := tokens(dev, 4, cfg.Vocab, 2, cfg.Context+1)
	if err := m.Loss(all.Slice(array.All, array.S(0, cfg.Context)), all.Slice(array.All, array.S(1, cfg.Context+1))).Backward(); err != nil {
		t.Fatal(err)
	}
	for _, n := range m.Named() {
		if n.Var.Grad() == nil {
			t.Errorf("%s: no gradient through dropout", n.Name)
		}
	}
}

func FuzzConfigFrom(f *testing.F) {
	f.Add("2", "2", "8", "6", "11", "true", "0.1")
	f.Add("12", "12", "768", "1024", "50304", "false", "0")
	f.Add("-1", "x", "", "6", "11", "maybe", "NaN")
	f.Fuzz(func(t *testing.T, l, h, d, c, v, bias, drop string) {
		meta := map[string]string{"gpt.layers": l, "gpt.heads": h, "gpt.dim": d, "gpt.context": c, "gpt.vocab": v, "gpt.bias": bias, "gpt.dropout": drop}
		cfg, err := configFrom(meta)
		if err != nil {
			if !errors.Is(err, ErrConfig) {
				t.Fatalf("error without ErrConfig: %v", err)
			}
			return
		}
		if err := cfg.Validate(); err != nil {
			t.Fatalf("configFrom accepted %+v: %v", cfg, err)
		}
		back, err := configFrom(cfg.metadata())
		if err != nil || back != cfg {
			t.Fatalf("round trip of %+v: %+v, %v", cfg, back, err)
		}
	})
}

// TestBF16Compute checks mixed precision on the CPU: with bfloat16
// products the logits, loss and gradients stay near float32's, and the
// weights and their gradients stay float32.
func TestBF16Compute(t *testing.T) {
	dev := array.CPU()
	cfg := Config{Layers: 2, Heads: 2, Dim: 32, Context: 16, Vocab: 64, Bias: true}
	all := tokens(dev, 5, cfg.Vocab, 4, cfg.Context+1)
	x, y := all.Slice(array.All, array.S(0, cfg.Context)), all.Slice(array.All, array.S(1, cfg.Context+1))
	var loss [2]float64
	var grads [2][][]float64
	for k, c := range []array.DType{0, array.BFloat16} {
		m := randomModel(t, cfg)
		m.Compute = c
		l := m.Loss(x, y)
		if l.DType() != array.Float32 {
			t.Errorf("compute %v: loss of dtype %v", c, l.DType())
		}
		if err := l.Backward(); err != nil {
			t.Fatal(err)
		}
		if loss[k], _ = l.Item(); loss[k] == 0 {
			t.Fatal("no loss")
		}
		for _, n := range m.Named() {
			if g := n.Var.Grad(); g == nil || g.DType() != array.Float32 || n.Var.DType() != array.Float32 {
				t.Fatalf("compute %v: %s of dtype %v has gradient %v", c, n.Name, n.Var.DType(), g)
			}
			v, err := n.Var.Grad().AsType(array.Float64).Float64s()
			if err != nil {
				t.Fatal(err)
			}
			grads[k] = append(grads[k], v)
		}
	}
	// Generation in bfloat16: the cache gives the tokens of recomputing.
	m := randomModel(t, cfg)
	m.Compute = array.BFloat16
	o := GenerateOptions{Tokens: 24, Temperature: 1, Seed: 2}
	a, err := m.Generate([]int{1, 2, 3}, o)
	if err != nil {
		t.Fatal(err)
	}
	o.NoCache = true
	b, err := m.Generate([]int{1, 2, 3}, o)
	if err != nil || !slices.Equal(a, b) {
		t.Errorf("bfloat16 generation: with the cache %v, recomputed %v (%v)", a, b, err)
	}
	if math.Abs(loss[0]-loss[1]) > 0.02*loss[0] {
		t.Errorf("loss %.5f in float32, %.5f with bfloat16 products", loss[0], loss[1])
	}
	// Gradients agree to bfloat16's resolution, relative to each
	// parameter's largest (measured: up to 0.011).
	for p := range grads[0] {
		scale, diff := 0.0, 0.0
		for i, v := range grads[0][p] {
			scale = max(scale, math.Abs(v))
			diff = max(diff, math.Abs(v-grads[1][p][i]))
		}
		if diff > 0.05*scale {
			t.Errorf("parameter %d: bfloat16 gradients differ by %.3g of the largest %.3g", p, diff/scale, scale)
		}
	}
}
