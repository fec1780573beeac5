package bench

import (
	"fmt"
	"math"

	"github.com/gocu-dev/gocu/array"
	"github.com/gocu-dev/gocu/gpt"
	"github.com/gocu-dev/gocu/grad"
	"github.com/gocu-dev/gocu/internal/gpttrain"
	"github.com/gocu-dev/gocu/nn"
)

// GPT training steps (suite gpt), as ../shared/anchors/train_gpt.py times
// torch: random tokens already on the GPU, bf16 products with float32
// weights, forward, backward, clipping to 1 and AdamW, eager and replayed
// as a CUDA graph (gocu gpt train --graph). Compare with the JSON that
// tools/gpu/train_gpt_peer.py writes: gocu bench --suite gpt --compare
// $OUT/train_gpt.json. Each repetition is several steps in a row, timed on
// the wall clock up to the device's last kernel as the anchor does; the
// note gives the peak of device memory in use over the timed steps, which
// the anchor reports as torch.cuda.max_memory_allocated, and its ratio to
// the live set the step must hold (gpttrain.Live).

func init() {
	for _, c := range []struct {
		name, key string
		cfg       gpt.Config
		batch     int
		steps     int
	}{
		{"gpt_bytes", "char_small", gpt.Bytes(), 64, 20},
		{"gpt2", "gpt2_124m", gpt.GPT2(), 16, 5},
	} {
		for _, graph := range []bool{false, true} {
			mode := "eager"
			if graph {
				mode = "graph"
			}
			cfg := c.cfg
			Register(Workload{Name: fmt.Sprintf("%s_step_%s", c.name, mode),
				Doc: fmt.Sprintf("GPT %dL %dH %dd, context %d, vocabulary %d: a bf16 training step (AdamW, clip 1) at batch %d, %s; %d steps in a row",
					cfg.Layers, cfg.Heads, cfg.Dim, cfg.Context, cfg.Vocab, c.batch, mode, c.steps),
				Kind: Latency, Devices: CUDA, Suites: []string{"gpt"}, Clock: Wall, Unit: "ms", Reps: 5, Warmup: 2,
				Peers: []Peer{{"torch eager", c.key + "_eager_ms_per_step", MillisPerOp},
					{"torch.compile", c.key + "_compile_ms_per_step", MillisPerOp}},
				Setup: setupGPTStep(cfg, c.batch, c.steps, graph)})
		}
	}
}

func setupGPTStep(cfg gpt.Config, batch, steps int, graph bool) func(e *Env) (*Case, error) {
	return func(e *Env) (*Case, error) {
		if e.Small {
			cfg, batch, steps = gpt.Tiny(), 4, 2
		}
		a, err := newArrays(e)
		if err != nil {
			return nil, err
		}
		m, err := gpt.New(a.dev.NewRNG(uint64(e.Rand.Uint32())), cfg)
		if err != nil {
			return nil, err
		}
		m.Compute = array.BFloat16
		opt := nn.NewAdamW(m.Params(), 6e-4, 0.1)
		r := a.dev.NewRNG(uint64(e.Rand.Uint32()))
		toks := func() *array.Array {
			return r.Uniform(array.Float32, 0, float64(cfg.Vocab), batch, cfg.Context).AsType(array.Int64).Copy()
		}
		x, y := toks(), toks()
		if err := errs2(x.Err(), y.Err()); err != nil {
			return nil, err
		}
		a.in = append(a.in, x, y)
		step := func() error { return gpttrain.Step(m, opt, 1, x, y, nil) }
		var g *array.Graph
		if graph {
			if g, err = a.dev.Capture(step); err != nil {
				return nil, errs(err, a.close())
			}
			step = g.Replay
		}
		gpu, runs := e.GPU.Allocator(), 0
		c := &Case{
			Run: func() error {
				// The first (checked) run compiles the kernels: the peak
				// counts from the run after it, as the anchor's after its
				// warm-up.
				if runs++; runs == 2 {
					gpu.ResetPeak()
				}
				for range steps {
					if err := step(); err != nil {
						return err
					}
				}
				return nil
			},
			Check: func() error { return finiteParams(m.Params()) },
			Close: func() error {
				if g != nil {
					g.Close()
				}
				return a.close()
			},
			Ops: steps, Stream: a.stream,
			Note: func() string {
				st := gpu.Stats()
				live := gpttrain.Live(cfg, batch, true, true)
				return fmt.Sprintf("peak %.0f MiB in use (%.0f MiB reserved) after the first run, %.2fx the live set of %v",
					float64(st.PeakInUse)/(1<<20), float64(st.PeakReserved)/(1<<20), float64(st.PeakInUse)/float64(live.Total()), live)
			},
		}
		return c, nil
	}
}

// finiteParams checks that training left finite parameters.
func finiteParams(ps []*grad.Var) error {
	for i, p := range ps {
		s, err := p.Value().Sum().Item()
		if err != nil {
			return err
		}
		if math.IsNaN(s) || math.IsInf(s, 0) {
			return fmt.Errorf("parameter %d is not finite after training", i)
		}
	}
	return nil
}
