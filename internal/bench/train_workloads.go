package bench

import (
	"fmt"

	"github.com/gocu-dev/gocu/array"
	"github.com/gocu-dev/gocu/internal/mnisttrain"
)

// Training workloads (issue 12): the 784-512-512-10 perceptron with
// cross-entropy and Adam, as ../shared/anchors/train_mlp.py measures torch
// on random data already on the GPU: one step at batch 64 and 1024, eager
// (forward, backward and the fused optimiser update, each operation
// queued by the host) and replayed as a CUDA graph (array.Maker.Capture),
// and one epoch of 60,000 samples at batch 64. Compare with the anchor's
// JSON: gocu bench --suite training --compare $OUT/train_mlp.json. The
// wall clock times each repetition up to the device's last kernel, as the
// anchor's events around its 200 steps do.

// trainSteps is the number of steps of one repetition of a step workload.
const trainSteps = 100

func init() {
	suites := []string{"training"}
	for _, batch := range []int{64, 1024} {
		for _, graph := range []bool{false, true} {
			mode, peers := "eager", []Peer{{"torch eager", fmt.Sprintf("mlp_step_b%d_eager_us", batch), MicrosPerOp}}
			if batch == 64 {
				peers = append(peers, Peer{"torch.compile", "mlp_step_b64_compile_us", MicrosPerOp})
			}
			if graph {
				mode, peers = "graph", []Peer{{"torch CUDA graph", fmt.Sprintf("mlp_step_b%d_cudagraph_us", batch), MicrosPerOp}}
			}
			Register(Workload{Name: fmt.Sprintf("mlp_step_b%d_%s", batch, mode),
				Doc:  fmt.Sprintf("MLP 784-512-512-10 training step (Adam), batch %d, %s; %d steps in a row", batch, mode, trainSteps),
				Kind: Latency, Devices: CUDA, Suites: suites, Clock: Wall, Unit: "us", Reps: 10, Warmup: 2,
				Peers: peers, Setup: setupTrainStep(batch, graph)})
		}
	}
	for _, graph := range []bool{false, true} {
		mode := "eager"
		if graph {
			mode = "graph"
		}
		Register(Workload{Name: "mlp_epoch_b64_" + mode,
			Doc:  "MLP 784-512-512-10, one epoch of 60,000 samples at batch 64 (the last of 32 eager), " + mode,
			Kind: Latency, Devices: CUDA, Suites: suites, Clock: Wall, Unit: "ms", Reps: 3, Warmup: 1,
			Peers: []Peer{{"torch eager", "mlp_epoch_60000_b64_eager_s", Seconds}}, Setup: setupTrainEpoch(graph)})
	}
}

// trainCase sets up a trainer on the benchmark's GPU with random data.
func trainCase(e *Env, n int) (*mnisttrain.Trainer, *arrays, *array.Array, *array.Array, error) {
	a, err := newArrays(e)
	if err != nil {
		return nil, nil, nil, nil, err
	}
	t := mnisttrain.NewTrainer(a.dev, 1, 512, 1e-3)
	t.Track = false
	r := a.dev.NewRNG(uint64(e.Rand.Uint32()))
	x := r.Normal(array.Float32, 0, 1, n, 784)
	y := r.Uniform(array.Float32, 0, 10, n).AsType(array.Int64).Eval()
	if err := errs2(x.Err(), y.Err()); err != nil {
		return nil, nil, nil, nil, err
	}
	a.in = append(a.in, x, y)
	return t, a, x, y, nil
}

func errs2(a, b error) error {
	if a != nil {
		return a
	}
	return b
}

// finiteLoss checks that training left finite parameters.
func finiteLoss(t *mnisttrain.Trainer) error { return finiteParams(t.Opt.Params()) }

func setupTrainStep(batch int, graph bool) func(e *Env) (*Case, error) {
	return func(e *Env) (*Case, error) {
		if e.Small {
			batch = 8
		}
		t, a, x, y, err := trainCase(e, batch)
		if err != nil {
			return nil, err
		}
		step := func() error { return t.Step(x, y) }
		if graph {
			if err := t.Capture(x, y); err != nil {
				return nil, errs(err, a.close())
			}
			step = t.Replay
		}
		return &Case{
			Run: func() error {
				for range trainSteps {
					if err := step(); err != nil {
						return err
					}
				}
				return nil
			},
			Check: func() error { return finiteLoss(t) },
			Close: func() error { return errs2(t.Close(), a.close()) },
			Ops:   trainSteps, Stream: a.stream,
		}, nil
	}
}

func setupTrainEpoch(graph bool) func(e *Env) (*Case, error) {
	return func(e *Env) (*Case, error) {
		n, batch := 60000, 64
		if e.Small {
			n = 200
		}
		t, a, x, y, err := trainCase(e, n)
		if err != nil {
			return nil, err
		}
		if graph {
			if err := t.Capture(x.Slice(array.S(0, batch)), y.Slice(array.S(0, batch))); err != nil {
				return nil, errs(err, a.close())
			}
		}
		return &Case{
			Run: func() error {
				for i := 0; i < n; i += batch {
					j := min(i+batch, n)
					xb, yb := x.Slice(array.S(i, j)), y.Slice(array.S(i, j))
					var err error
					if graph && j-i == batch {
						err = t.StepGraph(xb, yb)
					} else {
						err = t.Step(xb, yb)
					}
					if err != nil {
						return err
					}
				}
				return nil
			},
			Check:  func() error { return finiteLoss(t) },
			Close:  func() error { return errs2(t.Close(), a.close()) },
			Stream: a.stream,
		}, nil
	}
}
