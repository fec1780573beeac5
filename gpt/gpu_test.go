package gpt

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/gocu-dev/gocu"
	"github.com/gocu-dev/gocu/array"
	"github.com/gocu-dev/gocu/grad"
	"github.com/gocu-dev/gocu/internal/gputest"
	"github.com/gocu-dev/gocu/nn"
)

// The GPU tests and benchmarks skip without a GPU:
//
//	go test -run GPU -bench GPTStepGPU -benchtime 20x ./gpt

func gpu(t testing.TB) *array.Maker {
	gputest.Need(t, gocu.GPUUsable())
	g, err := array.GPU(0)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// goText is a deterministic stand-in for Go source, learnable in a few
// hundred steps (the GPU machine has no Go tree to pack).
func goText(n int) []byte {
	var b strings.Builder
	for i := 0; b.Len() < n; i++ {
		fmt.Fprintf(&b, "func f%d(x int) int {\n\treturn x*%d + %d\n}\n\n", i%97, i%13, i%7)
	}
	return []byte(b.String()[:n])
}

// windows returns rows of t+1 tokens at pseudo-random offsets of text.
func windows(text []byte, b, t int, seed uint64) []byte {
	rows := make([]byte, 0, b*(t+1))
	x := seed*2654435761 + 1
	for range b {
		x = x*6364136223846793005 + 1442695040888963407
		o := int(x>>33) % (len(text) - t - 1)
		rows = append(rows, text[o:o+t+1]...)
	}
	return rows
}

// step is one training step as gocu gpt train takes it, on rows of b
// windows of t+1 tokens, or on x and y (B, T) when rows is nil.
func step(dev *array.Maker, m *Model, opt *nn.Adam, rows []byte, b, t int, xy ...*array.Array) (*array.Array, error) {
	s := dev.NewScope()
	defer s.Close()
	var x, y *array.Array
	if rows != nil {
		x, y = batch(dev, rows, b, t)
	} else {
		x, y = xy[0], xy[1]
	}
	loss := m.Loss(x, y)
	if err := loss.Backward(); err != nil {
		return nil, err
	}
	if _, err := nn.ClipGradNorm(m.Params(), 1, nil); err != nil {
		return nil, err
	}
	if err := opt.Step(); err != nil {
		return nil, err
	}
	opt.ZeroGrad()
	l := loss.Value()
	s.Keep(l)
	return l, nil
}

// TestGPUMatchesCPU builds one model on both devices from one seed and
// compares the loss, every gradient and the losses of three AdamW steps.
func TestGPUMatchesCPU(t *testing.T) {
	g := gpu(t)
	cfg := Config{Layers: 2, Heads: 4, Dim: 64, Context: 32, Vocab: 256, Bias: true}
	text := goText(20000)
	const B = 8
	var losses [2][]float64
	var grads [2][][]float64
	for k, dev := range []*array.Maker{array.CPU(), g} {
		m, err := New(dev.NewRNG(1), cfg)
		if err != nil {
			t.Fatal(err)
		}
		x, y := batch(dev, windows(text, B, cfg.Context, 1), B, cfg.Context)
		loss := m.Loss(x, y)
		if err := loss.Backward(); err != nil {
			t.Fatal(err)
		}
		l, err := loss.Item()
		if err != nil {
			t.Fatal(err)
		}
		losses[k] = append(losses[k], l)
		for _, n := range m.Named() {
			v, err := n.Var.Grad().AsType(array.Float64).Float64s()
			if err != nil {
				t.Fatalf("%s: %v", n.Name, err)
			}
			grads[k] = append(grads[k], v)
		}
		opt := nn.NewAdamW(m.Params(), 1e-3, 0.1)
		opt.ZeroGrad()
		for i := range 3 {
			l, err := step(dev, m, opt, windows(text, B, cfg.Context, uint64(i+2)), B, cfg.Context)
			if err != nil {
				t.Fatal(err)
			}
			v, err := l.Item()
			if err != nil {
				t.Fatal(err)
			}
			losses[k] = append(losses[k], v)
		}
	}
	for i := range losses[0] {
		if math.Abs(losses[0][i]-losses[1][i]) > 1e-4*math.Abs(losses[0][i]) {
			t.Errorf("loss %d: %.7f on the CPU, %.7f on the GPU", i, losses[0][i], losses[1][i])
		}
	}
	names := []string{}
	m, _ := New(array.CPU().NewRNG(1), cfg)
	for _, n := range m.Named() {
		names = append(names, n.Name)
	}
	for p := range grads[0] {
		scale := 0.0
		for _, v := range grads[0][p] {
			scale = max(scale, math.Abs(v))
		}
		for i, v := range grads[0][p] {
			if math.Abs(v-grads[1][p][i]) > 1e-3*scale+1e-7 {
				t.Errorf("%s[%d]: gradient %g on the CPU, %g on the GPU", names[p], i, v, grads[1][p][i])
				break
			}
		}
	}
}

// TestGPUBF16Trains trains a small model with bfloat16 products: its loss
// starts near float32's and falls.
func TestGPUBF16Trains(t *testing.T) {
	g := gpu(t)
	cfg := Config{Layers: 2, Heads: 4, Dim: 128, Context: 64, Vocab: 256, Bias: true}
	text := goText(100000)
	const B = 16
	m32, _ := New(g.NewRNG(1), cfg)
	m, err := New(g.NewRNG(1), cfg)
	if err != nil {
		t.Fatal(err)
	}
	m.Compute = array.BFloat16
	rows := windows(text, B, cfg.Context, 1)
	var l32, l16 float64
	grad.NoGrad(func() {
		x, y := batch(g, rows, B, cfg.Context)
		l32, err = m32.Loss(x, y).Item()
		if err == nil {
			l16, err = m.Loss(x, y).Item()
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(l32-l16) > 0.02 {
		t.Errorf("loss at the start: %.4f in float32, %.4f with bfloat16 products", l32, l16)
	}
	opt := nn.NewAdamW(m.Params(), 3e-3, 0.1)
	var last float64
	for i := range 100 {
		l, err := step(g, m, opt, windows(text, B, cfg.Context, uint64(i+2)), B, cfg.Context)
		if err != nil {
			t.Fatal(err)
		}
		if i == 99 {
			if last, err = l.Item(); err != nil {
				t.Fatal(err)
			}
		}
	}
	if m.WTE.Weight.DType() != array.Float32 {
		t.Errorf("master weights of dtype %v", m.WTE.Weight.DType())
	}
	// The text has few distinct lines: 100 steps learn most of it (0.36 on
	// the CPU with bfloat16 products, from 5.55).
	if !(last < 1.0) {
		t.Errorf("bfloat16 training: loss %.4f after 100 steps (from %.4f), want < 1", last, l16)
	}
}

// TestGPUGenerate checks on the GPU that the cache gives the tokens of
// recomputing, and that the logits match the CPU's.
func TestGPUGenerate(t *testing.T) {
	g := gpu(t)
	cpu := randomModel(t, small)
	m, err := New(g.NewRNG(1), small)
	if err != nil {
		t.Fatal(err)
	}
	for i, n := range cpu.Named() {
		if err := m.Named()[i].Var.Value().Assign(array.FromSliceOn(g.Device(), must(n.Var.Value().Float32s()), n.Var.Shape()...)); err != nil {
			t.Fatal(err)
		}
	}
	ids := tokens(array.CPU(), 3, small.Vocab, 2, small.Context)
	a := logits(t, cpu, ids)
	b := logits(t, m, array.FromSliceOn(g.Device(), must(ids.Int64s()), ids.Shape()...))
	for i := range a {
		if math.Abs(a[i]-b[i]) > 1e-4*max(1, math.Abs(a[i])) {
			t.Fatalf("logit %d: %g on the CPU, %g on the GPU", i, a[i], b[i])
		}
	}
	o := GenerateOptions{Tokens: 20, Temperature: 1, Seed: 5}
	x, err := m.Generate([]int{1, 2}, o)
	if err != nil {
		t.Fatal(err)
	}
	o.NoCache = true
	y, err := m.Generate([]int{1, 2}, o)
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(x) != fmt.Sprint(y) {
		t.Errorf("GPU: with the cache %v, recomputed %v", x, y)
	}
}

// TestGPUGraphStep captures a bfloat16 training step as a CUDA graph and
// checks that replays, fed new batches through static inputs, give the
// losses of direct steps.
func TestGPUGraphStep(t *testing.T) {
	g := gpu(t)
	cfg := Config{Layers: 2, Heads: 2, Dim: 128, Context: 64, Vocab: 256, Bias: true}
	text := goText(50000)
	const B, n = 8, 4
	var losses [2][]float64
	for k, graph := range []bool{false, true} {
		m, err := New(g.NewRNG(1), cfg)
		if err != nil {
			t.Fatal(err)
		}
		m.Compute = array.BFloat16
		opt := nn.NewAdamW(m.Params(), 1e-3, 0.1)
		xs, ys := g.Zeros(array.Int64, B, cfg.Context).Copy(), g.Zeros(array.Int64, B, cfg.Context).Copy()
		loss := g.Zeros(array.Float32).Copy()
		run := func() error {
			l, err := step(g, m, opt, nil, 0, 0, xs, ys)
			if err != nil {
				return err
			}
			return loss.Assign(l)
		}
		var gr *array.Graph
		for i := range n {
			x, y := batch(g, windows(text, B, cfg.Context, uint64(i)), B, cfg.Context)
			if err := xs.Assign(x); err != nil {
				t.Fatal(err)
			}
			if err := ys.Assign(y); err != nil {
				t.Fatal(err)
			}
			switch {
			case !graph:
				err = run()
			case gr == nil:
				gr, err = g.Capture(run)
			default:
				err = gr.Replay()
			}
			if err != nil {
				t.Fatalf("graph %v, step %d: %v", graph, i, err)
			}
			l, err := loss.Item()
			if err != nil {
				t.Fatal(err)
			}
			losses[k] = append(losses[k], l)
		}
		if gr != nil {
			gr.Close()
		}
	}
	for i := range losses[0] {
		if math.Abs(losses[0][i]-losses[1][i]) > 1e-3*losses[0][i] {
			t.Errorf("step %d: loss %.6f direct, %.6f replayed", i, losses[0][i], losses[1][i])
		}
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// BenchmarkGPTStepGPU is one training step (forward, backward, clipping,
// AdamW, as gocu gpt train) on random tokens, as train_gpt.py measures:
// the byte model at batch 64, context 256, and GPT-2 124M at batch 16,
// context 1024, each also replayed as a CUDA graph (gocu gpt train
// --graph). It reports ms/step, tokens/s and the model TFLOP/s counted as
// train_gpt.py counts them.
func BenchmarkGPTStepGPU(b *testing.B) {
	for _, c := range []struct {
		name        string
		cfg         Config
		batch       int
		bf16, graph bool
	}{
		{"bytes/b64/f32", Bytes(), 64, false, false},
		{"bytes/b64/bf16", Bytes(), 64, true, false},
		{"bytes/b64/bf16-graph", Bytes(), 64, true, true},
		{"gpt2/b16/bf16", GPT2(), 16, true, false},
		{"gpt2/b16/bf16-graph", GPT2(), 16, true, true},
	} {
		b.Run(c.name, func(b *testing.B) {
			benchStep(b, gpu(b), c.cfg, c.batch, c.bf16, c.graph)
		})
	}
}

// BenchmarkGPTStepCPU is the tiny model's step on the CPU.
func BenchmarkGPTStepCPU(b *testing.B) {
	benchStep(b, array.CPU(), Tiny(), 8, false, false)
}

func benchStep(b *testing.B, dev *array.Maker, cfg Config, B int, bf16, graph bool) {
	m, err := New(dev.NewRNG(0), cfg)
	if err != nil {
		b.Fatal(err)
	}
	if bf16 {
		m.Compute = array.BFloat16
	}
	opt := nn.NewAdamW(m.Params(), 6e-4, 0.1)
	T := cfg.Context
	r := dev.NewRNG(1)
	all := r.Integers(array.Int64, 0, int64(cfg.Vocab), B, T+1).Copy()
	x, y := all.Slice(array.All, array.S(0, T)).Copy(), all.Slice(array.All, array.S(1, T+1)).Copy()
	run := func() error {
		s := dev.NewScope()
		defer s.Close()
		if err := m.Loss(x, y).Backward(); err != nil {
			return err
		}
		if _, err := nn.ClipGradNorm(m.Params(), 1, nil); err != nil {
			return err
		}
		if err := opt.Step(); err != nil {
			return err
		}
		opt.ZeroGrad()
		return nil
	}
	for range 3 {
		if err := run(); err != nil {
			b.Fatal(err)
		}
	}
	if graph {
		g, err := dev.Capture(run)
		if err != nil {
			b.Fatal(err)
		}
		defer g.Close()
		run = g.Replay
	}
	if err := dev.Sync(); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for range b.N {
		if err := run(); err != nil {
			b.Fatal(err)
		}
	}
	if err := dev.Sync(); err != nil {
		b.Fatal(err)
	}
	sec := b.Elapsed().Seconds() / float64(b.N)
	tps := float64(B*T) / sec
	b.ReportMetric(sec*1e3, "ms/step")
	b.ReportMetric(tps, "tokens/s")
	b.ReportMetric(tps*cfg.FLOPsPerToken()/1e12, "TFLOP/s")
}

// TestGPUFusedMatchesComposed trains one bfloat16 model 20 steps with nn's
// fused kernels (LayerNorm, GELU, the classifier, half activations) and
// once with the composed operations (GOCU_NOFUSE): the losses agree
// within bfloat16's tolerance.
func TestGPUFusedMatchesComposed(t *testing.T) {
	g := gpu(t)
	if !nn.Fused(g.Device()) {
		t.Skip("GOCU_NOFUSE is set")
	}
	cfg := Config{Layers: 2, Heads: 4, Dim: 128, Context: 64, Vocab: 256, Bias: true}
	text := goText(100000)
	const B, steps = 16, 20
	var losses [2][]float64
	for k, off := range []string{"", "1"} {
		t.Setenv("GOCU_NOFUSE", off)
		m, err := New(g.NewRNG(1), cfg)
		if err != nil {
			t.Fatal(err)
		}
		m.Compute = array.BFloat16
		if m.fused() != (off == "") {
			t.Fatalf("GOCU_NOFUSE=%q: fused %v", off, m.fused())
		}
		opt := nn.NewAdamW(m.Params(), 3e-3, 0.1)
		for i := range steps {
			l, err := step(g, m, opt, windows(text, B, cfg.Context, uint64(i+2)), B, cfg.Context)
			if err != nil {
				t.Fatal(err)
			}
			v, err := l.Item()
			if err != nil {
				t.Fatal(err)
			}
			losses[k] = append(losses[k], v)
		}
	}
	for i := range losses[0] {
		f, c := losses[0][i], losses[1][i]
		if math.IsNaN(f) || math.Abs(f-c) > 0.02*math.Max(1, math.Abs(c)) {
			t.Errorf("step %d: loss %.5f fused, %.5f composed", i, f, c)
		}
	}
	if !(losses[0][steps-1] < losses[0][0]-0.3) {
		t.Errorf("fused: loss %.4f after %d steps, from %.4f: want a fall of 0.3", losses[0][steps-1], steps, losses[0][0])
	}
	t.Logf("fused %.4f, composed %.4f", losses[0], losses[1])
}
