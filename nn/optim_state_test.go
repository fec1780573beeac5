package nn_test

import (
	"bytes"
	"errors"
	"fmt"
	"testing"

	"github.com/gocu-dev/gocu/array"
	"github.com/gocu-dev/gocu/grad"
	"github.com/gocu-dev/gocu/nn"
	"github.com/gocu-dev/gocu/safetensors"
)

// newRun builds the model from seed and an optimiser of kind "Adam" or
// "SGD" with weight decay groups and a warm-up cosine schedule.
func newRun(t *testing.T, d *array.Maker, seed uint64, kind string, unfused bool) (nn.Module, nn.Optimizer, *nn.Scheduler) {
	t.Helper()
	rng := d.NewRNG(seed)
	m := nn.NewSequential(nn.NewLinear(rng, 6, 16), nn.NewLayerNorm(d, 16), nn.GELU{}, nn.NewLinear(rng, 16, 3))
	_, noDecay := nn.DecayGroups(m)
	var o nn.Optimizer
	switch kind {
	case "Adam":
		a := nn.NewAdamW(nn.Params(m), 3e-2, 0.1)
		a.Unfused = unfused
		if err := a.SetWeightDecay(noDecay, 0); err != nil {
			t.Fatal(err)
		}
		o = a
	default:
		s := nn.NewSGD(nn.Params(m), 0.1)
		s.Momentum, s.Nesterov, s.WeightDecay, s.Unfused = 0.9, true, 1e-3, unfused
		if err := s.SetWeightDecay(noDecay, 0); err != nil {
			t.Fatal(err)
		}
		o = s
	}
	sc, err := nn.NewScheduler(o, nn.WarmupCosine{Warmup: 3, Decay: 10, Min: 1e-3})
	if err != nil {
		t.Fatal(err)
	}
	return m, o, sc
}

func trainSteps(t *testing.T, d *array.Maker, m nn.Module, o nn.Optimizer, sc *nn.Scheduler, from, n int) {
	t.Helper()
	for s := from; s < from+n; s++ {
		rng := d.NewRNG(uint64(1000 + s)) // the batch of step s
		x := rng.Normal(array.Float32, 0, 1, 8, 6)
		y := rng.Integers(array.Int64, 0, 3, 8)
		if err := nn.CrossEntropy(m.Forward(grad.Const(x)), y).Backward(); err != nil {
			t.Fatal(err)
		}
		if err := o.Step(); err != nil {
			t.Fatal(err)
		}
		o.ZeroGrad()
		if err := sc.Step(); err != nil {
			t.Fatal(err)
		}
	}
}

func saveOpt(t *testing.T, o nn.Optimizer) []byte {
	t.Helper()
	var b bytes.Buffer
	var err error
	switch o := o.(type) {
	case *nn.Adam:
		err = o.SaveState(&b)
	case *nn.SGD:
		err = o.SaveState(&b)
	}
	if err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func loadOpt(o nn.Optimizer, data []byte) error {
	switch o := o.(type) {
	case *nn.Adam:
		return o.LoadState(bytes.NewReader(data))
	case *nn.SGD:
		return o.LoadState(bytes.NewReader(data))
	}
	return nil
}

// TestResumeExactly trains N steps, saves the model and the optimiser,
// loads both into a fresh run (other initial weights) and continues M
// steps: the weights equal, bit for bit, those of N+M uninterrupted steps.
func TestResumeExactly(t *testing.T) {
	makers := []*array.Maker{array.CPU()}
	if g, err := gpuOnce(); err == nil {
		makers = append(makers, g)
	}
	const n, m = 4, 5
	for _, d := range makers {
		for _, kind := range []string{"Adam", "SGD"} {
			for _, unfused := range []bool{false, true} {
				t.Run(fmt.Sprintf("%v/%s/unfused=%v", d, kind, unfused), func(t *testing.T) {
					ref, ro, rs := newRun(t, d, 1, kind, unfused)
					trainSteps(t, d, ref, ro, rs, 0, n+m)

					a, ao, as := newRun(t, d, 1, kind, unfused)
					trainSteps(t, d, a, ao, as, 0, n)
					var model bytes.Buffer
					if err := nn.Save(&model, a, nil); err != nil {
						t.Fatal(err)
					}
					state := saveOpt(t, ao)

					b, bo, bs := newRun(t, d, 2, kind, unfused)
					if _, err := nn.Load(bytes.NewReader(model.Bytes()), b); err != nil {
						t.Fatal(err)
					}
					if err := loadOpt(bo, state); err != nil {
						t.Fatal(err)
					}
					if err := bs.SetSteps(as.Steps()); err != nil {
						t.Fatal(err)
					}
					trainSteps(t, d, b, bo, bs, n, m)
					var want, got [][]float64
					for i, p := range nn.Params(ref) {
						want = append(want, f64(t, p.Value()))
						got = append(got, f64(t, nn.Params(b)[i].Value()))
					}
					sameBits(t, "resumed run", got, want)
					if bs.LR() != rs.LR() {
						t.Errorf("learning rate %v, want %v", bs.LR(), rs.LR())
					}
					if ad, ok := bo.(*nn.Adam); ok && ad.Steps() != n+m {
						t.Errorf("Steps %d, want %d", ad.Steps(), n+m)
					}
				})
			}
		}
	}
}

func TestLoadStateErrors(t *testing.T) {
	d := array.CPU()
	m, o, sc := newRun(t, d, 1, "Adam", false)
	trainSteps(t, d, m, o, sc, 0, 2)
	adam := saveOpt(t, o)
	sm, so, ss := newRun(t, d, 1, "SGD", false)
	trainSteps(t, d, sm, so, ss, 0, 2)
	sgd := saveOpt(t, so)

	fresh := func() nn.Optimizer { _, o, _ := newRun(t, d, 3, "Adam", false); return o }
	if err := loadOpt(fresh(), sgd); !errors.Is(err, nn.ErrState) {
		t.Errorf("SGD state into Adam: error %v, want ErrState", err)
	}
	if err := loadOpt(fresh(), adam[:len(adam)-5]); !errors.Is(err, safetensors.ErrFormat) {
		t.Errorf("truncated state: error %v, want safetensors.ErrFormat", err)
	}
	// Fewer parameters.
	w := grad.Param(d.Zeros(array.Float32, 16, 6))
	if err := loadOpt(nn.NewAdam([]*grad.Var{w}, 1e-3), adam); !errors.Is(err, nn.ErrState) {
		t.Errorf("one parameter: error %v, want ErrState", err)
	}
	// Same count, another shape.
	ps := nn.Params(m)
	other := make([]*grad.Var, len(ps))
	for i, p := range ps {
		other[i] = grad.Param(d.Zeros(array.Float32, p.Shape()...))
	}
	other[0] = grad.Param(d.Zeros(array.Float32, 6, 16))
	if err := loadOpt(nn.NewAdam(other, 1e-3), adam); !errors.Is(err, nn.ErrState) {
		t.Errorf("a transposed parameter: error %v, want ErrState", err)
	}
	// Edited files: one moment missing, a tensor of no parameter, a bad
	// step count.
	f, err := safetensors.Read(bytes.NewReader(adam), nil)
	if err != nil {
		t.Fatal(err)
	}
	edit := func(drop string, add *safetensors.Tensor, key, val string) []byte {
		var ts []safetensors.Tensor
		for _, x := range f.Tensors {
			if x.Name != drop {
				ts = append(ts, x)
			}
		}
		if add != nil {
			ts = append(ts, *add)
		}
		meta := map[string]string{}
		for k, v := range f.Metadata {
			meta[k] = v
		}
		if key != "" {
			meta[key] = val
		}
		var b bytes.Buffer
		if err := safetensors.Write(&b, ts, meta); err != nil {
			t.Fatal(err)
		}
		return b.Bytes()
	}
	for name, data := range map[string][]byte{
		"no exp_avg_sq":     edit("state.0.exp_avg_sq", nil, "", ""),
		"extra tensor":      edit("", &safetensors.Tensor{Name: "state.99.exp_avg", Array: d.Zeros(array.Float32, 2)}, "", ""),
		"step -1":           edit("", nil, "step", "-1"),
		"lr x":              edit("", nil, "lr", "x"),
		"weight decay -1":   edit("", nil, "weight_decay.1", "-1"),
		"weight decay of 9": edit("", nil, "weight_decay.99", "0"),
		"other format":      edit("", nil, "format", "x"),
	} {
		if err := loadOpt(fresh(), data); !errors.Is(err, nn.ErrState) {
			t.Errorf("%s: error %v, want ErrState", name, err)
		}
	}
	if err := sc.SetSteps(-1); !errors.Is(err, nn.ErrHyper) {
		t.Errorf("SetSteps(-1): error %v, want ErrHyper", err)
	}
	// After a failed load the optimiser still loads a good state.
	o2 := fresh()
	_ = loadOpt(o2, edit("state.3.exp_avg_sq", nil, "", ""))
	if err := loadOpt(o2, adam); err != nil {
		t.Fatal(err)
	}
}

// FuzzLoadState feeds LoadState arbitrary bytes: it returns an error or
// loads, and never panics.
func FuzzLoadState(f *testing.F) {
	d := array.CPU()
	w := grad.Param(d.NewRNG(1).Normal(array.Float32, 0, 1, 3, 2))
	b := grad.Param(d.Zeros(array.Float32, 2))
	o := nn.NewAdam([]*grad.Var{w, b}, 1e-3)
	w.SetGrad(d.Ones(array.Float32, 3, 2))
	if err := o.Step(); err != nil {
		f.Fatal(err)
	}
	var buf bytes.Buffer
	if err := o.SaveState(&buf); err != nil {
		f.Fatal(err)
	}
	f.Add(buf.Bytes())
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		w := grad.Param(d.Zeros(array.Float32, 3, 2))
		b := grad.Param(d.Zeros(array.Float32, 2))
		o := nn.NewAdam([]*grad.Var{w, b}, 1e-3)
		if err := o.LoadState(bytes.NewReader(data)); err != nil {
			return
		}
		w.SetGrad(d.Ones(array.Float32, 3, 2))
		b.SetGrad(d.Ones(array.Float32, 2))
		_ = o.Step() // a loaded state steps (hyperparameters it refuses are errors)
	})
}
