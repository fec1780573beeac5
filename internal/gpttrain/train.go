package gpttrain

import (
	"errors"
	"fmt"
	"io"
	"math"
	"strings"
	"time"

	"github.com/gocu-dev/gocu/internal/cli"

	"github.com/gocu-dev/gocu"
	"github.com/gocu-dev/gocu/array"
	"github.com/gocu-dev/gocu/datasets/gosrc"
	"github.com/gocu-dev/gocu/dist"
	"github.com/gocu-dev/gocu/gpt"
	"github.com/gocu-dev/gocu/grad"
	"github.com/gocu-dev/gocu/nn"
)

// Config says what to train and how.
type Config struct {
	Device *gocu.Device  // nil: array.Default()'s device (the GPU, else the CPU)
	Corpus *gosrc.Corpus // the packed Go source
	Model  gpt.Config    // the model's shape
	Batch  int           // windows per step
	Steps  int           // steps to train; 0 with Duration: as many as fit
	Time   time.Duration // train for this long (the schedule is fitted to it)
	LR     float64       // peak learning rate
	MinLR  float64       // the rate at the end of the cosine decay
	Warmup int           // steps of linear warm-up
	Decay  float64       // AdamW's weight decay of matrices and embeddings
	Beta2  float64       // AdamW's β₂ (β₁ is 0.9)
	Clip   float64       // clip the gradients' total norm to this (0: no clipping)
	BF16   bool          // products in bfloat16, float32 master weights
	Graph  bool          // capture the step as a CUDA graph and replay it
	Seed   uint64        // initial weights, batches
	Report int           // steps between progress lines
	Eval   int           // steps between validation losses (0: at the end only)
	EvalN  int           // validation batches per evaluation
	Save   string        // checkpoint path, written at every evaluation
	Plot   string        // loss-curve PNG
	Peak   float64       // the device's peak in FLOP/s for the utilisation; 0: from its name
	Sample int           // bytes to sample from the trained model (0: none)
	Out    io.Writer     // progress (nil: discarded)
	Init   *gpt.Model    // start from this model instead of a new one
	// Resume continues the run whose checkpoint (Save) this is: its
	// weights, optimiser state, step, batches and settings (shape,
	// batch, schedule, clipping, seed). Steps, when set, moves the end.
	Resume string
	// Stop ends the run after this long, with a checkpoint that Resume
	// continues from (0: never).
	Stop time.Duration
	Now  func() time.Time

	// Devices trains data-parallel in this process, one model replica per
	// device: every batch of Batch windows is split across them
	// (dist.Split), and the gradients are averaged while the backward
	// pass runs (dist.DDP; NCCL on GPUs, the host backend on cpu and sim,
	// where a device may repeat). It replaces Device.
	Devices []*gocu.Device
	// Comm trains as this process's ranks of a data-parallel job of
	// several processes (from dist.Join); it replaces Device and Devices.
	// Every process runs Run with the same Config and its own Comm; the
	// process of global rank 0 evaluates and writes Save, Plot and Sample.
	Comm *dist.Comm
	// ZeRO shards the optimiser state across the data-parallel ranks
	// (dist.ZeRO1) instead of reducing the gradients during the backward
	// pass. Its checkpoints hold no optimiser state: Resume and Stop
	// are refused.
	ZeRO bool
}

// Point is a loss at a step.
type Point struct {
	Step int
	Loss float64
}

// Result is what a run measured.
type Result struct {
	Model     *gpt.Model
	Device    string
	Steps     int
	Tokens    int64
	Train     []Point // mean training loss over each report's steps
	Val       []Point
	Elapsed   time.Duration // training time, evaluations excluded
	TokensPS  float64       // tokens per second over the whole run
	MFU       float64       // model FLOP utilisation over the whole run (0: unknown peak)
	Sample    string
	Params    int
	FLOPsTok  float64
	PeakFLOPS float64 // of all the ranks' devices
	Ranks     int     // data-parallel ranks (1: none)
}

// ErrConfig is wrapped by the errors of a Config that trains nothing.
var ErrConfig = errors.New("gpttrain: invalid configuration")

func (c *Config) check() error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%s: %w", fmt.Sprintf(format, args...), ErrConfig)
	}
	if c.Corpus == nil {
		return bad("no corpus")
	}
	if err := c.Model.Validate(); err != nil {
		return err
	}
	if c.Model.Vocab < gosrc.Vocab {
		return bad("vocabulary %d: the corpus has byte tokens (256)", c.Model.Vocab)
	}
	switch {
	case c.Batch < 1:
		return bad("batch %d: want >= 1", c.Batch)
	case c.Steps < 0 || (c.Steps == 0 && c.Time <= 0 && c.Resume == ""):
		return bad("%d steps and a duration of %v: give steps or a duration > 0", c.Steps, c.Time)
	case !(c.LR > 0) || math.IsInf(c.LR, 0):
		return bad("learning rate %v: want a finite number > 0", c.LR)
	case !(c.MinLR >= 0) || c.MinLR > c.LR:
		return bad("minimum learning rate %v: want 0 <= min <= %v", c.MinLR, c.LR)
	case c.Warmup < 0:
		return bad("warm-up %d: want >= 0", c.Warmup)
	case !(c.Decay >= 0) || math.IsInf(c.Decay, 0):
		return bad("weight decay %v: want a finite number >= 0", c.Decay)
	case !(c.Beta2 > 0 && c.Beta2 < 1):
		return bad("beta2 %v: want 0 < beta2 < 1", c.Beta2)
	case !(c.Clip >= 0) || math.IsInf(c.Clip, 0):
		return bad("clip %v: want a finite number >= 0 (0: none)", c.Clip)
	case c.Report < 0 || c.Eval < 0 || c.EvalN < 0 || c.Sample < 0:
		return bad("negative report, evaluation or sample count")
	case !(c.Peak >= 0):
		return bad("peak %v: want a number >= 0", c.Peak)
	case c.Stop < 0 || (c.Stop > 0 && c.Save == ""):
		return bad("stop after %v: want a duration >= 0, and a checkpoint file to resume from", c.Stop)
	}
	if c.Plot != "" {
		if err := checkPlotPath(c.Plot); err != nil {
			return err
		}
	}
	if c.Init != nil && c.Init.Config != c.Model {
		return bad("the initial model's shape %+v differs from %+v", c.Init.Config, c.Model)
	}
	return nil
}

// checkParallel refuses what data-parallel training of size ranks cannot
// do.
func (c *Config) checkParallel(size int) error {
	if c.Batch < size {
		return fmt.Errorf("batch %d across %d ranks: want at least one window per rank: %w", c.Batch, size, ErrConfig)
	}
	return nil
}

// comm returns the communicator of data-parallel training, nil for one
// device, and whether Run made it (and closes it).
func (c *Config) comm() (*dist.Comm, bool, error) {
	bad := func(format string, args ...any) (*dist.Comm, bool, error) {
		return nil, false, fmt.Errorf("%s: %w", fmt.Sprintf(format, args...), ErrConfig)
	}
	switch {
	case c.Comm != nil && (c.Device != nil || len(c.Devices) > 0):
		return bad("Comm with Device or Devices: give one")
	case c.Device != nil && len(c.Devices) > 0:
		return bad("Device and Devices: give one")
	case c.ZeRO && c.Resume != "":
		return bad("resume with ZeRO-1: checkpoints hold no sharded optimiser state; resume without it")
	case c.ZeRO && c.Stop > 0:
		return bad("stop with ZeRO-1: its checkpoints cannot be resumed")
	case c.Comm != nil:
		return c.Comm, false, nil
	case len(c.Devices) > 0:
		if err := sameKind(c.Devices); err != nil {
			return nil, false, err
		}
		comm, err := dist.New(c.Devices...)
		return comm, err == nil, err
	case c.ZeRO:
		return bad("ZeRO-1 shards the optimiser state across data-parallel ranks: give Devices or Comm")
	}
	return nil, false, nil
}

// PeakFLOPS returns the dense peak of a GPU by its name, in FLOP/s, for
// bfloat16 products (bf16) or float32 (TF32 tensor cores with tf32): the
// datasheet figures of the NVIDIA H100/H200 (SXM), H100 PCIe and A100,
// or 0 for another device.
func PeakFLOPS(name string, bf16, tf32 bool) float64 {
	n := strings.ToUpper(name)
	type peak struct{ bf16, tf32, fp32 float64 }
	var p peak
	switch {
	case strings.Contains(n, "H100") && strings.Contains(n, "PCIE"):
		p = peak{756e12, 378e12, 51e12}
	case strings.Contains(n, "H100") || strings.Contains(n, "H200") || strings.Contains(n, "GH200"):
		p = peak{989.4e12, 494.7e12, 66.9e12}
	case strings.Contains(n, "A100"):
		p = peak{312e12, 156e12, 19.5e12}
	default:
		return 0
	}
	switch {
	case bf16:
		return p.bf16
	case tf32:
		return p.tf32
	}
	return p.fp32
}

// Run trains as cfg says and reports progress to cfg.Out.
func Run(cfg Config) (*Result, error) {
	comm, own, err := cfg.comm()
	if err != nil {
		return nil, err
	}
	if own {
		defer comm.Close()
	}
	if comm != nil {
		cfg.Device = comm.Devices()[0] // where a checkpoint loads
	}
	var resumed *progress
	if cfg.Resume != "" {
		var err error
		if resumed, err = cfg.resume(); err != nil {
			return nil, err
		}
	}
	if err := cfg.check(); err != nil {
		return nil, err
	}
	if comm != nil {
		if err := cfg.checkParallel(comm.Size()); err != nil {
			return nil, err
		}
	}
	out := cfg.Out
	if out == nil {
		out = io.Discard
	}
	now := cfg.Now
	if now == nil {
		now = time.Now
	}
	if cfg.Report == 0 {
		cfg.Report = 10
	}
	if cfg.EvalN == 0 {
		cfg.EvalN = 10
	}
	dev := array.Default()
	if cfg.Device != nil {
		dev = array.On(cfg.Device)
	}
	if err := dev.Err(); err != nil {
		return nil, err
	}
	T := cfg.Model.Context
	train, err := cfg.Corpus.Sampler(gosrc.Train, cfg.Batch, T, cfg.Seed)
	if err != nil {
		return nil, err
	}
	valS, err := cfg.Corpus.Sampler(gosrc.Val, cfg.Batch, T, cfg.Seed+1)
	if err != nil {
		return nil, err
	}
	valRows := make([][]byte, cfg.EvalN) // the same windows at every evaluation
	for i := range valRows {
		valRows[i] = valS.Next()
	}
	var (
		m   *gpt.Model
		opt *nn.Adam  // nil with ZeRO-1
		par *replicas // data-parallel: replicas on the local ranks
		r0  = true    // this process evaluates and writes the files
	)
	if comm == nil {
		if m = cfg.Init; m == nil {
			if m, err = gpt.New(dev.NewRNG(cfg.Seed), cfg.Model); err != nil {
				return nil, err
			}
		}
		if cfg.BF16 {
			m.Compute = array.BFloat16
		}
		if opt, err = newAdamW(&cfg, m); err != nil {
			return nil, err
		}
	} else {
		if par, err = newReplicas(&cfg, comm, cfg.Init); err != nil {
			return nil, err
		}
		defer par.close()
		m, opt, r0 = par.models[0], nil, comm.Rank(0) == 0
		if !cfg.ZeRO {
			opt = par.opts[0]
		}
	}
	first := 0 // the step to start from
	if resumed != nil {
		first = resumed.step
		if err := train.SetState(resumed.sampler); err != nil {
			return nil, fmt.Errorf("resume from %s: %w", cfg.Resume, err)
		}
		opts := []*nn.Adam{opt}
		if par != nil {
			opts = par.opts
		}
		for _, o := range opts {
			if err := loadState(o, statePath(cfg.Resume)); err != nil {
				return nil, fmt.Errorf("resume from %s: %w", cfg.Resume, err)
			}
		}
	}
	res := &Result{Model: m, Device: dev.String(), Params: cfg.Model.Params(), FLOPsTok: cfg.Model.FLOPsPerToken(), Ranks: 1}
	if resumed != nil {
		res.Train, res.Val = resumed.train, resumed.vals // the curves go on
	}
	res.PeakFLOPS = cfg.Peak
	if res.PeakFLOPS == 0 && dev.IsGPU() {
		res.PeakFLOPS = PeakFLOPS(dev.Device().Name(), cfg.BF16, dev.MatMulPrecision() == array.TF32)
	}
	on := dev.String()
	if comm != nil {
		res.Ranks = comm.Size()
		res.PeakFLOPS *= float64(comm.Size())
		on = where(comm)
		res.Device = fmt.Sprintf("%d ranks of %s", comm.Size(), dev)
		if cfg.Graph {
			fmt.Fprintf(out, "data-parallel training runs each step directly: --graph is not used\n")
			cfg.Graph = false
		}
	}
	prec := "float32"
	if cfg.BF16 {
		prec = "bfloat16 products, float32 weights"
	}
	if cfg.Graph {
		prec += ", the step replayed as a CUDA graph"
	}
	if cfg.ZeRO {
		prec += ", optimiser state sharded (ZeRO-1)"
	}
	length := fmt.Sprintf("%d steps", cfg.Steps)
	if cfg.Steps == 0 {
		length = cfg.Time.String()
	}
	fmt.Fprintf(out, "training a GPT of %d layers, %d heads, %d wide, context %d (%.2fM parameters) on %s, %s\n",
		cfg.Model.Layers, cfg.Model.Heads, cfg.Model.Dim, T, float64(res.Params)/1e6, on, prec)
	fmt.Fprintf(out, "data: %.1f MB of Go for training (%d files), %.1f MB for validation (%d files); batch %d x %d tokens; %s; AdamW lr %.3g (warm-up %d, cosine to %.3g), weight decay %g, clip %g\n",
		float64(len(cfg.Corpus.Train))/1e6, cfg.Corpus.TrainFiles, float64(len(cfg.Corpus.Val))/1e6, cfg.Corpus.ValFiles,
		cfg.Batch, T, length, cfg.LR, cfg.Warmup, cfg.MinLR, cfg.Decay, cfg.Clip)

	total := cfg.Steps
	if total == 0 && resumed != nil {
		total = resumed.total
	}
	if total == 0 {
		total = math.MaxInt // until the duration is fitted
	}
	if first >= total {
		return nil, fmt.Errorf("resume from %s: it is at step %d of %d; give --steps beyond it: %w", cfg.Resume, first, total, ErrConfig)
	}
	if first > 0 {
		fmt.Fprintf(out, "resuming at step %d of %d\n", first, total)
	}
	// Until the duration is fitted, the decay is as good as not begun.
	sched := func(step int) (float64, error) {
		decay := min(total, math.MaxInt32)
		return nn.WarmupCosine{Warmup: cfg.Warmup, Decay: max(decay, cfg.Warmup+1), Min: cfg.MinLR}.LR(cfg.LR, step)
	}
	acc := dev.Zeros(array.Float64).Copy() // the losses since the last report, on the device
	st := &stepper{m: m, opt: opt, clip: cfg.Clip, acc: acc}
	if cfg.Graph {
		st.x, st.y = dev.Zeros(array.Int64, cfg.Batch, T).Copy(), dev.Zeros(array.Int64, cfg.Batch, T).Copy()
		defer st.close()
		if cfg.Model.Dropout > 0 {
			fmt.Fprintf(out, "note: a CUDA graph replays the dropout masks of its capture\n")
		}
	}
	rows := make([]byte, cfg.Batch*(T+1))
	evalLoss := func() (float64, error) {
		m.SetTraining(false)
		defer m.SetTraining(true)
		sum := 0.0
		for _, r := range valRows {
			var l float64
			var err error
			s := dev.NewScope()
			grad.NoGrad(func() {
				x, y := Batch(dev, r, cfg.Batch, T)
				l, err = m.Loss(x, y).Item()
			})
			s.Close()
			if err != nil {
				return 0, err
			}
			sum += l
		}
		return sum / float64(len(valRows)), nil
	}
	var (
		start     = now()
		evalTime  time.Duration
		lastT     = start
		lastStep  = first
		fitAt     = 0
		firstStep time.Duration
	)
	if total == math.MaxInt {
		fitAt = max(10, min(cfg.Warmup, 50))
	}
	syncAll, readLoss := dev.Sync, func() (float64, error) {
		sum, err := acc.Item()
		if err != nil {
			return 0, err
		}
		return sum, acc.Assign(0)
	}
	if par != nil {
		syncAll, readLoss = par.sync, par.lossSum
	}
	bar := newBar(out)
	for step := first; step < total; step++ {
		lr, err := sched(step)
		if err != nil {
			return nil, err
		}
		if par != nil {
			err = par.setLR(lr)
		} else {
			err = opt.SetLR(lr)
		}
		if err != nil {
			return nil, err
		}
		if err := train.Fill(rows); err != nil {
			return nil, err
		}
		if par != nil {
			err = par.step(rows)
		} else {
			x, y := Batch(dev, rows, cfg.Batch, T)
			switch {
			case !cfg.Graph:
				err = st.run(x, y)
			case st.graph == nil:
				if err = st.assign(x, y); err == nil {
					st.graph, err = dev.Capture(func() error { return st.run(st.x, st.y) })
				}
			default:
				if err = st.assign(x, y); err == nil {
					err = st.graph.Replay()
				}
			}
		}
		if err != nil {
			return nil, fmt.Errorf("step %d: %w", step+1, err)
		}
		res.Steps = step + 1
		res.Tokens += int64(cfg.Batch * T)
		if step == first {
			// The first step compiles the kernels: keep it out of the
			// fitted step time.
			if err := syncAll(); err != nil {
				return nil, err
			}
			firstStep = now().Sub(start)
		}
		if res.Steps-first == fitAt && total == math.MaxInt {
			if err := syncAll(); err != nil {
				return nil, err
			}
			el := now().Sub(start) - firstStep
			per := el / time.Duration(fitAt-1)
			left := cfg.Time - now().Sub(start)
			total = fitAt + int(left/max(per, time.Nanosecond))
			total = max(total, fitAt+1)
			if par != nil {
				// Rank 0's clock decides for all.
				t, err := par.agree(float64(total))
				if err != nil {
					return nil, err
				}
				total = int(t)
			}
			fmt.Fprintf(out, "%.1f ms per step: %d steps fit in %v\n", per.Seconds()*1e3, total, cfg.Time)
		}
		stop := cfg.Stop > 0 && now().Sub(start) >= cfg.Stop
		if par != nil && cfg.Stop > 0 {
			// Rank 0's clock decides for all, at the reports only: the
			// agreement waits for the devices.
			stop = false
			if res.Steps%cfg.Report == 0 {
				v, err := par.agree(map[bool]float64{true: 1}[now().Sub(start) >= cfg.Stop])
				if err != nil {
					return nil, err
				}
				stop = v != 0
			}
		}
		last := res.Steps == total || stop
		if res.Steps%cfg.Report == 0 || last {
			sum, err := readLoss() // waits for the device
			if err != nil {
				return nil, err
			}
			t := now()
			n := res.Steps - lastStep
			l := sum / float64(n)
			res.Train = append(res.Train, Point{res.Steps, l})
			tps := float64(n*cfg.Batch*T) / t.Sub(lastT).Seconds()
			frac := 0.0
			if total != math.MaxInt {
				frac = float64(res.Steps) / float64(total)
			}
			bar.show(res.Steps, total, frac, l, lr, tps, mfu(tps, res), t.Sub(lastT)/time.Duration(n))
			lastT, lastStep = t, res.Steps
			if math.IsNaN(l) || math.IsInf(l, 0) {
				return res, fmt.Errorf("step %d: the training loss is %v (lower the learning rate)", res.Steps, l)
			}
		}
		if ((cfg.Eval > 0 && res.Steps%cfg.Eval == 0) || last) && r0 {
			t0 := now()
			vl, err := evalLoss()
			if err != nil {
				return nil, err
			}
			res.Val = append(res.Val, Point{res.Steps, vl})
			msg := fmt.Sprintf("validation loss %.4f", vl)
			if cfg.Save != "" {
				p := progress{step: res.Steps, total: total, val: vl, train: res.Train, vals: res.Val}
				if p.sampler, err = train.State(); err != nil {
					return nil, err
				}
				if err := cfg.save(m, opt, p); err != nil {
					return nil, err
				}
				msg += ", checkpoint " + cfg.Save
			}
			bar.note(msg)
			dt := now().Sub(t0)
			evalTime += dt
			lastT = lastT.Add(dt) // the next rate counts training only
		}
		if stop && res.Steps < total {
			fmt.Fprintf(out, "stopped after %v at step %d of %d: continue with --resume %s\n", cfg.Stop, res.Steps, total, cfg.Save)
			break
		}
	}
	res.Elapsed = now().Sub(start) - evalTime
	res.TokensPS = float64(res.Tokens) / res.Elapsed.Seconds()
	res.MFU = mfu(res.TokensPS, res)
	line := fmt.Sprintf("%d steps, %d tokens in %.1fs: %.0f tokens/s", res.Steps, res.Tokens, res.Elapsed.Seconds(), res.TokensPS)
	if res.MFU > 0 {
		line += fmt.Sprintf(", %.1f%% model FLOP utilisation", 100*res.MFU)
	}
	if n := len(res.Val); n > 0 {
		line += fmt.Sprintf("; validation loss %.4f", res.Val[n-1].Loss)
	}
	fmt.Fprintln(out, line)
	if !r0 {
		return res, nil // global rank 0 writes the files and samples
	}
	if cfg.Plot != "" {
		if err := PlotLoss(cfg.Plot, res); err != nil {
			return res, err
		}
		fmt.Fprintf(out, "loss curve: %s\n", cfg.Plot)
	}
	if cfg.Sample > 0 {
		prompt := "package "
		toks, err := m.Generate(Tokens(prompt), gpt.GenerateOptions{Tokens: cfg.Sample, Temperature: 0.8, TopK: 40, Seed: cfg.Seed})
		if err != nil {
			return res, err
		}
		res.Sample = prompt + gpt.Text(toks)
		fmt.Fprintf(out, "sample (temperature 0.8, top-k 40):\n%s\n", res.Sample)
	}
	return res, nil
}

// stepper takes training steps, directly or as a replayed CUDA graph.
type stepper struct {
	m     *gpt.Model
	opt   *nn.Adam
	clip  float64
	acc   *array.Array // adds each step's loss
	x, y  *array.Array // the graph's inputs
	graph *array.Graph
}

// run takes one step on inputs x and targets y and adds its loss to acc.
func (s *stepper) run(x, y *array.Array) error {
	return Step(s.m, s.opt, s.clip, x, y, s.acc)
}

// Step takes one training step of m on inputs x and targets y (B, T):
// forward, backward, clipping to clip (none when 0), AdamW. When acc is
// not nil the step's loss is added to it. The backward pass frees the
// forward pass's memory as it goes (grad.Var.BackwardFree), and the rest
// of what the step made returns when it ends: the peak is about the live
// set (Live), as PyTorch's.
func Step(m *gpt.Model, opt *nn.Adam, clip float64, x, y, acc *array.Array) error {
	sc := array.On(x.Device()).NewScope()
	defer sc.Close()
	loss := m.Loss(x, y)
	err := loss.BackwardFree()
	if err == nil && clip > 0 {
		_, err = nn.ClipGradNorm(m.Params(), clip, nil)
	}
	if err == nil {
		err = opt.Step()
	}
	opt.ZeroGrad()
	if err == nil && acc != nil {
		err = acc.Assign(acc.Add(loss.Value()))
	}
	return err
}

// assign writes a batch into the graph's inputs.
func (s *stepper) assign(x, y *array.Array) error {
	if err := s.x.Assign(x); err != nil {
		return err
	}
	return s.y.Assign(y)
}

func (s *stepper) close() {
	if s.graph != nil {
		s.graph.Close()
	}
}

// mfu is the model FLOP utilisation of tps tokens per second.
func mfu(tps float64, r *Result) float64 {
	if r.PeakFLOPS <= 0 {
		return 0
	}
	return tps * r.FLOPsTok / r.PeakFLOPS
}

// Batch turns b rows of t+1 byte tokens into the inputs (b, t) and the
// targets (b, t) on dev.
func Batch(dev *array.Maker, rows []byte, b, t int) (ids, targets *array.Array) {
	a := array.FromSliceOn(dev.Device(), rows, b, t+1)
	return a.Slice(array.All, array.S(0, t)), a.Slice(array.All, array.S(1, t+1))
}

// Tokens returns the byte tokens of s.
func Tokens(s string) []int {
	t := make([]int, len(s))
	for i := range len(s) {
		t[i] = int(s[i])
	}
	return t
}

// bar prints progress lines: redrawn in place on a terminal, one per
// report elsewhere.
type bar struct {
	w   io.Writer
	tty bool
}

func newBar(w io.Writer) *bar { return &bar{w: w, tty: cli.IsTerminal(w)} }

func (b *bar) show(step, total int, frac, loss, lr, tps, mfu float64, per time.Duration) {
	const width = 20
	var line string
	if total == math.MaxInt {
		line = fmt.Sprintf("step %6d", step)
	} else {
		n := int(frac * width)
		line = fmt.Sprintf("step %6d/%d [%s%s] %3.0f%%", step, total, strings.Repeat("=", n), strings.Repeat(" ", width-n), 100*frac)
	}
	line += fmt.Sprintf(" loss %.4f lr %.2e %9.0f tok/s %7.2f ms/step", loss, lr, tps, per.Seconds()*1e3)
	if mfu > 0 {
		line += fmt.Sprintf(" MFU %4.1f%%", 100*mfu)
	}
	if b.tty {
		fmt.Fprintf(b.w, "\r%s\x1b[K", line)
		if frac >= 1 {
			fmt.Fprintln(b.w)
		}
		return
	}
	fmt.Fprintln(b.w, line)
}

func (b *bar) note(s string) {
	if b.tty {
		fmt.Fprintf(b.w, "\n  %s\n", s)
		return
	}
	fmt.Fprintf(b.w, "  %s\n", s)
}
