package gpttrain

import (
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gocu-dev/gocu"
	"github.com/gocu-dev/gocu/dist"
)

// dpBase is base with a loss at every step and no evaluation but the
// last.
func dpBase(t *testing.T) Config {
	cfg := base(corpus(t))
	cfg.Steps, cfg.Report, cfg.Eval = 8, 1, 0
	return cfg
}

// sameCurve reports whether two runs' training and validation losses
// agree within tol, and their final weights within wtol of each
// parameter's largest magnitude.
func sameCurve(a, b *Result, tol, wtol float64) error {
	if len(a.Train) != len(b.Train) || len(a.Val) != len(b.Val) {
		return fmt.Errorf("%d and %d training points, %d and %d validation points", len(a.Train), len(b.Train), len(a.Val), len(b.Val))
	}
	for i := range a.Train {
		if a.Train[i].Step != b.Train[i].Step || math.Abs(a.Train[i].Loss-b.Train[i].Loss) > tol {
			return fmt.Errorf("training loss %v, want %v", b.Train, a.Train)
		}
	}
	for i := range a.Val {
		if math.Abs(a.Val[i].Loss-b.Val[i].Loss) > tol {
			return fmt.Errorf("validation loss %v, want %v", b.Val, a.Val)
		}
	}
	pa, pb := a.Model.Params(), b.Model.Params()
	for j := range pa {
		x, err1 := pa[j].Value().Float32s()
		y, err2 := pb[j].Value().Float32s()
		if err := errors.Join(err1, err2); err != nil {
			return err
		}
		scale := 0.0
		for _, v := range x {
			scale = max(scale, math.Abs(float64(v)))
		}
		for k := range x {
			if d := math.Abs(float64(x[k] - y[k])); d > wtol*scale {
				return fmt.Errorf("parameter %d, element %d: %v, want %v", j, k, y[k], x[k])
			}
		}
	}
	return nil
}

func cpus(n int) []*gocu.Device {
	devs := make([]*gocu.Device, n)
	for i := range devs {
		devs[i] = gocu.MustOpen("cpu")
	}
	return devs
}

// TestDataParallel trains on 2 and 3 ranks of the host stand-in, with
// the gradients reduced during the backward pass or the optimiser state
// sharded, and checks that the loss curve of one device at the same
// global batch comes back within float rounding: 3 ranks split the 4
// windows 2, 1, 1. Clipping is on and active (the first steps' norm is
// above 1).
func TestDataParallel(t *testing.T) {
	cfg := dpBase(t)
	one, err := Run(cfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		ranks int
		zero  bool
	}{{2, false}, {3, false}, {2, true}, {3, true}} {
		dp := cfg
		dp.Device, dp.Devices, dp.ZeRO = nil, cpus(c.ranks), c.zero
		var out strings.Builder
		dp.Out = &out
		r, err := Run(dp)
		if err != nil {
			t.Fatalf("%d ranks, ZeRO %v: %v", c.ranks, c.zero, err)
		}
		if err := sameCurve(one, r, 2e-5, 2e-4); err != nil {
			t.Errorf("%d ranks, ZeRO %v: %v", c.ranks, c.zero, err)
		}
		want := fmt.Sprintf("on %d ranks, data-parallel (host; this process: ranks 0-%d on cpu", c.ranks, c.ranks-1)
		if r.Ranks != c.ranks || !strings.Contains(out.String(), want) || (c.zero && !strings.Contains(out.String(), "ZeRO-1")) {
			t.Errorf("%d ranks in the result; the output lacks %q:\n%s", r.Ranks, want, out.String())
		}
	}
}

// TestDataParallelSame checks one rank of a communicator against the
// plain trainer: the same losses but for float rounding (the reduction of
// one rank leaves the gradients as they are).
func TestDataParallelOneRank(t *testing.T) {
	cfg := dpBase(t)
	one, err := Run(cfg)
	if err != nil {
		t.Fatal(err)
	}
	dp := cfg
	dp.Device, dp.Devices = nil, cpus(1)
	r, err := Run(dp)
	if err != nil {
		t.Fatal(err)
	}
	if err := sameCurve(one, r, 0, 0); err != nil {
		t.Error(err)
	}
}

// TestDataParallelProcesses runs the ranks as a job of one process per
// rank does, each with its own Comm from dist.Join (here goroutines
// joined through the host backend's hub): rank 0's curve is one
// device's, and only rank 0 evaluates and writes the checkpoint.
func TestDataParallelProcesses(t *testing.T) {
	cfg := dpBase(t)
	one, err := Run(cfg)
	if err != nil {
		t.Fatal(err)
	}
	id, err := dist.NewID(gocu.CPU)
	if err != nil {
		t.Fatal(err)
	}
	const n = 2
	save := filepath.Join(t.TempDir(), "dp.safetensors")
	res := make([]*Result, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for rank := range n {
		wg.Go(func() {
			c, err := dist.Join(id, n, rank, gocu.MustOpen([]string{"cpu", "sim"}[rank]))
			if err != nil {
				errs[rank] = err
				return
			}
			defer c.Close()
			dp := cfg
			dp.Device, dp.Comm, dp.Save = nil, c, save
			res[rank], errs[rank] = Run(dp)
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	if err := sameCurve(one, res[0], 2e-5, 2e-4); err != nil {
		t.Error(err)
	}
	if len(res[1].Val) != 0 || len(res[1].Train) != len(one.Train) {
		t.Errorf("rank 1: %d validation points (want none), %d training points", len(res[1].Val), len(res[1].Train))
	}
	for i := range res[1].Train {
		if res[1].Train[i] != res[0].Train[i] {
			t.Errorf("rank 1's losses %v, rank 0's %v", res[1].Train, res[0].Train)
			break
		}
	}
	// The checkpoint continues on one device.
	more := cfg
	more.Resume, more.Steps = save, 10
	r, err := Run(more)
	if err != nil || r.Steps != 10 {
		t.Errorf("resume on one device: %v", err)
	}
}

// TestDataParallelResume stops a data-parallel run and resumes it on the
// same ranks: the losses of the run that went straight on, exactly.
func TestDataParallelResume(t *testing.T) {
	cfg := dpBase(t)
	cfg.Device, cfg.Devices = nil, cpus(2)
	cfg.MinLR, cfg.Warmup = cfg.LR, 0
	cfg.Eval = 4 // the first run's last evaluation is in both curves
	straight, err := Run(cfg)
	if err != nil {
		t.Fatal(err)
	}
	first := cfg
	first.Steps, first.Save = 4, filepath.Join(t.TempDir(), "dp.safetensors")
	if _, err := Run(first); err != nil {
		t.Fatal(err)
	}
	second := Config{Devices: cpus(2), Corpus: cfg.Corpus, Resume: first.Save, Steps: 8, Beta2: cfg.Beta2, Decay: cfg.Decay, Report: 1, Eval: 4, EvalN: cfg.EvalN}
	resumed, err := Run(second)
	if err != nil {
		t.Fatal(err)
	}
	if err := sameCurve(straight, resumed, 0, 0); err != nil {
		t.Error(err)
	}
}

func TestDataParallelErrors(t *testing.T) {
	c := corpus(t)
	sim, err := gocu.Open("sim")
	if err != nil {
		t.Fatal(err)
	}
	joined, err := dist.New(cpus(2)...)
	if err != nil {
		t.Fatal(err)
	}
	defer joined.Close()
	for _, e := range []struct {
		f    func(*Config)
		want string
	}{
		{func(c *Config) { c.Device, c.Devices, c.Batch = nil, cpus(3), 2 }, "batch 2 across 3 ranks: want at least one window per rank"},
		{func(c *Config) { c.Devices = cpus(2) }, "Device and Devices: give one"},
		{func(c *Config) { c.Comm = joined }, "Comm with Device or Devices: give one"},
		{func(c *Config) { c.Device, c.Devices = nil, []*gocu.Device{c.Device, sim} }, "devices cpu, sim: data-parallel replicas run on devices of one kind"},
		{func(c *Config) { c.Device, c.Devices = nil, []*gocu.Device{c.Device, nil} }, "a nil device in Devices"},
		{func(c *Config) { c.ZeRO = true }, "ZeRO-1 shards the optimiser state across data-parallel ranks: give Devices or Comm"},
		{func(c *Config) { c.Device, c.Devices, c.ZeRO, c.Stop, c.Save = nil, cpus(2), true, 1, "x.safetensors" }, "stop with ZeRO-1"},
		{func(c *Config) { c.Device, c.Devices, c.ZeRO, c.Resume = nil, cpus(2), true, "x.safetensors" }, "resume with ZeRO-1"},
	} {
		cfg := base(c)
		e.f(&cfg)
		_, err := Run(cfg)
		if !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), e.want) {
			t.Errorf("%s: %v", e.want, err)
		}
	}
}

// TestDataParallelClock fits the steps to a duration and stops early on
// two ranks: rank 0's clock decides, and a stop comes at a report.
func TestDataParallelClock(t *testing.T) {
	cfg := base(corpus(t))
	cfg.Device, cfg.Devices = nil, cpus(2)
	cfg.Steps, cfg.Time, cfg.Eval = 0, 300*time.Millisecond, 0
	var clock time.Time
	cfg.Now = func() time.Time { clock = clock.Add(10 * time.Millisecond); return clock }
	var out strings.Builder
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
	stop := base(cfg.Corpus)
	stop.Device, stop.Devices = nil, cpus(2)
	stop.Save, stop.Stop, stop.Report = filepath.Join(t.TempDir(), "s.safetensors"), time.Nanosecond, 3
	out.Reset()
	stop.Out = &out
	if r, err = Run(stop); err != nil {
		t.Fatal(err)
	}
	if r.Steps != 3 || !strings.Contains(out.String(), "stopped after 1ns at step 3 of 30") {
		t.Errorf("%d steps; output:\n%s", r.Steps, out.String())
	}
}
