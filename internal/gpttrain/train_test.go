package gpttrain

import (
	"bytes"
	"errors"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gocu-dev/gocu"
	"github.com/gocu-dev/gocu/array"
	"github.com/gocu-dev/gocu/datasets/gosrc"
	"github.com/gocu-dev/gocu/gpt"
)

// corpus packs $(go env GOROOT)/src/go/ast and go/token, or skips without
// the go command.
func corpus(t testing.TB) *gosrc.Corpus {
	t.Helper()
	out, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		t.Skipf("needs the go command for its source tree: %v", err)
	}
	c, err := gosrc.Pack(filepath.Join(strings.TrimSpace(string(out)), "src", "go", "ast"), &gosrc.Options{ValFraction: 0.3})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

var micro = gpt.Config{Layers: 1, Heads: 2, Dim: 16, Context: 16, Vocab: 256, Bias: true}

func base(c *gosrc.Corpus) Config {
	return Config{Device: gocu.MustOpen("cpu"), Corpus: c, Model: micro, Batch: 4, Steps: 30, LR: 1e-2, MinLR: 1e-3,
		Warmup: 5, Decay: 0.1, Beta2: 0.99, Clip: 1, Seed: 1, Report: 10, Eval: 15, EvalN: 2}
}

func TestRun(t *testing.T) {
	c := corpus(t)
	dir := t.TempDir()
	cfg := base(c)
	cfg.Save = filepath.Join(dir, "m.safetensors")
	cfg.Plot = filepath.Join(dir, "loss.png")
	cfg.Sample = 40
	cfg.Peak = 1e9 // a made-up peak, to print the utilisation on the CPU
	var out bytes.Buffer
	cfg.Out = &out
	r, err := Run(cfg)
	if err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	if r.Steps != 30 || r.Tokens != 30*4*16 || len(r.Train) != 3 || len(r.Val) != 2 || r.Val[0].Step != 15 || r.Val[1].Step != 30 {
		t.Fatalf("steps %d, tokens %d, %d training points, validation %v", r.Steps, r.Tokens, len(r.Train), r.Val)
	}
	if !(r.Train[2].Loss < r.Train[0].Loss-0.5) || !(r.Val[1].Loss < math.Log(256)-0.5) {
		t.Errorf("the loss did not fall: training %v, validation %v", r.Train, r.Val)
	}
	if !(r.TokensPS > 0) || !(r.MFU > 0) || math.Abs(r.MFU-r.TokensPS*micro.FLOPsPerToken()/1e9) > 1e-9*r.MFU {
		t.Errorf("tokens/s %v, utilisation %v", r.TokensPS, r.MFU)
	}
	s := out.String()
	for _, want := range []string{"training a GPT of 1 layers, 2 heads, 16 wide, context 16", "step     10/30", "tok/s", "MFU", "validation loss", "checkpoint " + cfg.Save, "loss curve: " + cfg.Plot, "sample (temperature 0.8, top-k 40):\npackage "} {
		if !strings.Contains(s, want) {
			t.Errorf("the output lacks %q:\n%s", want, s)
		}
	}
	for _, f := range []string{cfg.Save, cfg.Plot} {
		if st, err := os.Stat(f); err != nil || st.Size() == 0 {
			t.Errorf("%s: %v", f, err)
		}
	}
	m, meta, err := gpt.Load(cfg.Save, nil)
	if err != nil || m.Config != micro || meta["step"] != "30" {
		t.Errorf("the checkpoint: %v, %+v, %v", err, m, meta)
	}
	// One seed, one run: the same losses again, from the checkpoint too.
	cfg.Out, cfg.Save, cfg.Plot, cfg.Sample = nil, "", "", 0
	r2, err := Run(cfg)
	if err != nil {
		t.Fatal(err)
	}
	for i := range r.Train {
		if r.Train[i] != r2.Train[i] {
			t.Fatalf("two runs of one seed: %v and %v", r.Train, r2.Train)
		}
	}
}

// TestRunForATime fits the steps to a duration, on a clock that advances
// 10 ms at each reading.
func TestRunForATime(t *testing.T) {
	cfg := base(corpus(t))
	cfg.Steps, cfg.Time = 0, 300*time.Millisecond
	var clock time.Time
	cfg.Now = func() time.Time { clock = clock.Add(10 * time.Millisecond); return clock }
	var out bytes.Buffer
	cfg.Out = &out
	r, err := Run(cfg)
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`ms per step: (\d+) steps fit in 300ms`).FindStringSubmatch(out.String())
	if m == nil {
		t.Fatalf("no fitted steps in:\n%s", out.String())
	}
	if n, _ := strconv.Atoi(m[1]); r.Steps != n || n <= 10 {
		t.Errorf("fitted %s steps, ran %d", m[1], r.Steps)
	}
}

func TestConfigErrors(t *testing.T) {
	c := &gosrc.Corpus{Train: bytes.Repeat([]byte("x"), 100), Val: bytes.Repeat([]byte("y"), 100), TrainFiles: 1, ValFiles: 1}
	for _, e := range []struct {
		f    func(*Config)
		want string
	}{
		{func(c *Config) { c.Corpus = nil }, "no corpus"},
		{func(c *Config) { c.Model.Vocab = 100 }, "vocabulary 100"},
		{func(c *Config) { c.Model.Heads = 3 }, "3 heads"},
		{func(c *Config) { c.Batch = 0 }, "batch 0"},
		{func(c *Config) { c.Steps = 0 }, "give steps or a duration"},
		{func(c *Config) { c.LR = math.NaN() }, "learning rate NaN"},
		{func(c *Config) { c.MinLR = 1 }, "minimum learning rate 1"},
		{func(c *Config) { c.Warmup = -1 }, "warm-up -1"},
		{func(c *Config) { c.Decay = -1 }, "weight decay -1"},
		{func(c *Config) { c.Beta2 = 1 }, "beta2 1"},
		{func(c *Config) { c.Clip = -1 }, "clip -1"},
		{func(c *Config) { c.Eval = -1 }, "negative"},
		{func(c *Config) { c.Plot = "loss.txt" }, "want a name ending in .png"},
		{func(c *Config) { c.Model.Context = 200 }, "fewer than a window of 201"},
	} {
		cfg := base(c)
		e.f(&cfg)
		_, err := Run(cfg)
		if err == nil || !strings.Contains(err.Error(), e.want) {
			t.Errorf("%s: %v", e.want, err)
		}
	}
	cfg := base(c)
	cfg.Plot = "nowhere/loss.png"
	if _, err := Run(cfg); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a plot in a missing folder: %v", err)
	}
}

func TestPeakFLOPS(t *testing.T) {
	for _, c := range []struct {
		name       string
		bf16, tf32 bool
		want       float64
	}{
		{"NVIDIA H200", true, false, 989.4e12},
		{"NVIDIA H100 80GB HBM3", false, false, 66.9e12},
		{"NVIDIA H100 PCIe", true, false, 756e12},
		{"NVIDIA A100-SXM4-80GB", false, true, 156e12},
		{"NVIDIA GeForce RTX 4090", true, false, 0},
		{"cpu", false, false, 0},
	} {
		if got := PeakFLOPS(c.name, c.bf16, c.tf32); got != c.want {
			t.Errorf("PeakFLOPS(%q, %v, %v) = %g, want %g", c.name, c.bf16, c.tf32, got, c.want)
		}
	}
}

// TestRunGraph checks that the graph path (on the CPU, Capture runs the
// step and Replay runs it again) trains as the direct one.
func TestRunGraph(t *testing.T) {
	c := corpus(t)
	cfg := base(c)
	cfg.Eval = 0
	a, err := Run(cfg)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Graph = true
	b, err := Run(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if len(a.Train) != len(b.Train) || len(a.Val) != 1 || a.Val[0] != b.Val[0] {
		t.Fatalf("direct %v %v, graph %v %v", a.Train, a.Val, b.Train, b.Val)
	}
	for i := range a.Train {
		if a.Train[i] != b.Train[i] {
			t.Fatalf("direct %v, graph %v", a.Train, b.Train)
		}
	}
}

// TestResume checks that a run stopped and resumed from its checkpoint
// continues exactly: the same losses as the run that went straight on.
func TestResume(t *testing.T) {
	c := corpus(t)
	dir := t.TempDir()
	cfg := base(c)
	cfg.MinLR = cfg.LR // a schedule that does not depend on the end
	cfg.Warmup = 0
	cfg.Report, cfg.Eval = 5, 15
	straight, err := Run(cfg)
	if err != nil {
		t.Fatal(err)
	}
	first := cfg
	first.Steps = 15
	first.Save = filepath.Join(dir, "run.safetensors")
	if _, err := Run(first); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "run.opt.safetensors")); err != nil {
		t.Fatalf("no optimiser state beside the checkpoint: %v", err)
	}
	var out bytes.Buffer
	second := Config{Device: cfg.Device, Corpus: c, Resume: first.Save, Steps: 30, Beta2: 0.99, Decay: 0.1, Report: 5, Eval: 15, EvalN: 2, Out: &out}
	resumed, err := Run(second)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "resuming at step 15 of 30") {
		t.Errorf("output:\n%s", out.String())
	}
	// The resumed run's curves start with the first run's points.
	want := straight.Train
	if len(resumed.Train) != len(want) || len(resumed.Val) != len(straight.Val) {
		t.Fatalf("resumed %v %v, straight %v %v", resumed.Train, resumed.Val, straight.Train, straight.Val)
	}
	for i := range want {
		if resumed.Train[i] != want[i] {
			t.Errorf("step %d: loss %v resumed, %v straight on", want[i].Step, resumed.Train[i].Loss, want[i].Loss)
		}
	}
	for i := range straight.Val {
		if resumed.Val[i] != straight.Val[i] {
			t.Errorf("validation: %v resumed, %v straight on", resumed.Val, straight.Val)
		}
	}
	// Stop: end after the first step, then resume to the end.
	stop := base(c)
	stop.Save = filepath.Join(dir, "stop.safetensors")
	stop.Stop = time.Nanosecond
	out.Reset()
	stop.Out = &out
	r, err := Run(stop)
	if err != nil {
		t.Fatal(err)
	}
	if r.Steps != 1 || !strings.Contains(out.String(), "stopped after 1ns at step 1 of 30: continue with --resume "+stop.Save) {
		t.Errorf("%d steps; output:\n%s", r.Steps, out.String())
	}
	r, err = Run(Config{Device: cfg.Device, Corpus: c, Resume: stop.Save, Beta2: 0.99, EvalN: 1})
	if err != nil || r.Steps != 30 {
		t.Errorf("resumed after the stop: %v steps, %v", r, err)
	}
	// A checkpoint of the last step: nothing to do without more steps.
	if _, err := Run(Config{Device: cfg.Device, Corpus: c, Resume: filepath.Join(dir, "run.safetensors"), Steps: 15, Beta2: 0.99}); !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), "give --steps beyond it") {
		t.Errorf("resume at the end: %v", err)
	}
	// A model saved by package gpt alone has no run to resume.
	m, _ := gpt.New(array.CPU().NewRNG(1), micro)
	plain := filepath.Join(dir, "plain.safetensors")
	if err := m.Save(plain, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := Run(Config{Device: cfg.Device, Corpus: c, Resume: plain, Beta2: 0.99}); !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), "not a checkpoint of gocu gpt train") {
		t.Errorf("resume from a plain model: %v", err)
	}
	bad := base(c)
	bad.Stop = time.Minute
	if _, err := Run(bad); !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), "checkpoint file to resume from") {
		t.Errorf("Stop without Save: %v", err)
	}
}
