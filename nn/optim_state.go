package nn

import (
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/gocu-dev/gocu"
	"github.com/gocu-dev/gocu/array"
	"github.com/gocu-dev/gocu/grad"
	"github.com/gocu-dev/gocu/safetensors"
)

// ErrState is wrapped by the error of loading an optimiser state that does
// not fit the optimiser: another algorithm, another number of parameters,
// a moment of the wrong shape, a missing or malformed entry.
var ErrState = errors.New("optimiser state does not fit")

// Optimiser state files are safetensors: one tensor per moment, named as
// in torch's optimizer state_dict ("state.3.exp_avg", "state.3.exp_avg_sq",
// "state.3.momentum_buffer", 3 being the parameter's index), and the step
// count and hyperparameters in the metadata, as exact decimal strings.
const stateFormat = "gocu.optimizer/1"

// SaveState writes the optimiser's state to w: both moments of every
// parameter that has them, the step count, the learning rate, the other
// hyperparameters and the weight decays of SetWeightDecay. LoadState
// into an Adam over the same parameters (in the same order) resumes
// training exactly where this one is.
func (a *Adam) SaveState(w io.Writer) error {
	return a.saveState(w, "Adam", map[string]float64{
		"lr": a.LR, "beta1": a.Beta1, "beta2": a.Beta2, "eps": a.Eps,
		"weight_decay": a.WeightDecay, "decoupled": b2f(a.Decoupled),
	})
}

// LoadState reads a state written by SaveState and replaces the
// optimiser's with it: moments, step count and hyperparameters (LR,
// Beta1, Beta2, Eps, WeightDecay, Decoupled, the weight decays of
// SetWeightDecay). Moments are written into the existing state's memory
// where it has their shape and dtype, so that a captured step replays
// with them. Parameters without moments in the file start afresh.
func (a *Adam) LoadState(r io.Reader) error {
	h, err := a.loadState(r, "Adam", []string{"lr", "beta1", "beta2", "eps", "weight_decay", "decoupled"})
	if err != nil {
		return err
	}
	a.Beta1, a.Beta2, a.Eps, a.WeightDecay, a.Decoupled = h["beta1"], h["beta2"], h["eps"], h["weight_decay"], h["decoupled"] != 0
	return a.SetLR(h["lr"])
}

// SaveState is Adam.SaveState for SGD: the momentum buffers.
func (s *SGD) SaveState(w io.Writer) error {
	return s.saveState(w, "SGD", map[string]float64{
		"lr": s.LR, "momentum": s.Momentum, "dampening": s.Dampening,
		"weight_decay": s.WeightDecay, "nesterov": b2f(s.Nesterov),
	})
}

// LoadState is Adam.LoadState for SGD.
func (s *SGD) LoadState(r io.Reader) error {
	h, err := s.loadState(r, "SGD", []string{"lr", "momentum", "dampening", "weight_decay", "nesterov"})
	if err != nil {
		return err
	}
	s.Momentum, s.Dampening, s.WeightDecay, s.Nesterov = h["momentum"], h["dampening"], h["weight_decay"], h["nesterov"] != 0
	return s.SetLR(h["lr"])
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

func formatFloat(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

// momentNames are the torch names of the moments: Adam's two, or SGD's
// momentum buffer.
func momentNames(kind string) []string {
	if kind == "SGD" {
		return []string{"momentum_buffer"}
	}
	return []string{"exp_avg", "exp_avg_sq"}
}

func (o *opt) saveState(w io.Writer, kind string, hyper map[string]float64) error {
	meta := map[string]string{
		"format":    stateFormat,
		"optimizer": kind,
		"step":      strconv.Itoa(o.steps),
		"params":    strconv.Itoa(len(o.params)),
	}
	for k, v := range hyper {
		meta[k] = formatFloat(v)
	}
	var ts []safetensors.Tensor
	names := momentNames(kind)
	for i, p := range o.params {
		if wd, ok := o.wd[p]; ok {
			meta["weight_decay."+strconv.Itoa(i)] = formatFloat(wd)
		}
		st := o.state[p]
		if st == nil || st.m == nil || (kind == "SGD" && st.fresh) {
			continue
		}
		for j, a := range []*array.Array{st.m, st.v}[:len(names)] {
			ts = append(ts, safetensors.Tensor{Name: fmt.Sprintf("state.%d.%s", i, names[j]), Array: a})
		}
	}
	if err := safetensors.Write(w, ts, meta); err != nil {
		return fmt.Errorf("nn: %s.SaveState: %w", kind, err)
	}
	return nil
}

// loadState reads a state file for an optimiser of the given kind,
// installs the moments and the step count, and
// returns the hyperparameters named in keys.
func (o *opt) loadState(r io.Reader, kind string, keys []string) (map[string]float64, error) {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("nn: %s.LoadState: %s: %w", kind, fmt.Sprintf(format, args...), ErrState)
	}
	var dev *gocu.Device
	for _, p := range o.params {
		if p != nil {
			dev = p.Value().Device()
			break
		}
	}
	f, err := safetensors.Read(r, dev)
	if err != nil {
		return nil, fmt.Errorf("nn: %s.LoadState: %w", kind, err)
	}
	meta := f.Metadata
	if meta["format"] != stateFormat {
		return nil, bad("format %q, want %q", meta["format"], stateFormat)
	}
	if meta["optimizer"] != kind {
		return nil, bad("the state of %q", meta["optimizer"])
	}
	steps, err := strconv.Atoi(meta["step"])
	if err != nil || steps < 0 {
		return nil, bad("step count %q", meta["step"])
	}
	if n, err := strconv.Atoi(meta["params"]); err != nil || n != len(o.params) {
		return nil, bad("the state of %q parameters for an optimiser of %d", meta["params"], len(o.params))
	}
	h := map[string]float64{}
	for _, k := range keys {
		v, err := strconv.ParseFloat(meta[k], 64)
		if err != nil || math.IsNaN(v) {
			return nil, bad("%s %q", k, meta[k])
		}
		h[k] = v
	}
	wds := map[*grad.Var]float64{}
	for k, s := range meta {
		i, ok := strings.CutPrefix(k, "weight_decay.")
		if !ok {
			continue
		}
		n, err := strconv.Atoi(i)
		if err != nil || n < 0 || n >= len(o.params) {
			return nil, bad("weight decay of parameter %q", i)
		}
		wd, err := strconv.ParseFloat(s, 64)
		if err != nil || !(wd >= 0) || math.IsInf(wd, 0) {
			return nil, bad("weight decay %q of parameter %d", s, n)
		}
		wds[o.params[n]] = wd
	}

	// Check every tensor before changing anything.
	names := momentNames(kind)
	loaded := make([][]*array.Array, len(o.params))
	seen := 0
	used := map[string]bool{}
	for i, p := range o.params {
		if p == nil {
			return nil, fmt.Errorf("nn: %s.LoadState: parameter %d is nil: %w", kind, i, grad.ErrNilVar)
		}
		val := p.Value()
		var have []*array.Array
		for _, name := range names {
			key := fmt.Sprintf("state.%d.%s", i, name)
			a := f.Get(key)
			if a == nil {
				continue
			}
			used[key] = true
			if !slices.Equal(a.Shape(), val.Shape()) {
				return nil, bad("%s of parameter %d has shape %v, the parameter %v", name, i, a.Shape(), val.Shape())
			}
			if !a.DType().IsFloat() {
				return nil, bad("%s of parameter %d is %v", name, i, a.DType())
			}
			have = append(have, a)
		}
		if len(have) > 0 && len(have) < len(names) {
			return nil, bad("parameter %d has %d of its moments %v", i, len(have), names)
		}
		loaded[i] = have
		seen += len(have)
	}
	if seen != len(f.Tensors) {
		var extra []string
		for _, t := range f.Tensors {
			if !used[t.Name] {
				extra = append(extra, t.Name)
			}
		}
		return nil, bad("tensors that are not moments of these parameters: %q", extra)
	}

	for i, p := range o.params {
		if loaded[i] == nil {
			if st := o.state[p]; st != nil {
				st.dp.release()
				delete(o.state, p)
			}
			continue
		}
		st := o.state[p]
		if st == nil {
			st = &pstate{}
			o.state[p] = st
		}
		val := p.Value()
		dst := []**array.Array{&st.m, &st.v}
		for j, a := range loaded[i] {
			a = a.AsType(val.DType())
			if cur := *dst[j]; cur != nil && cur.DType() == val.DType() && slices.Equal(cur.Shape(), val.Shape()) && cur.IsContiguous() {
				if err := cur.Assign(a); err != nil {
					return nil, fmt.Errorf("nn: %s.LoadState: parameter %d: %w", kind, i, err)
				}
				continue
			}
			c := a.Copy().Persist()
			if err := c.Err(); err != nil {
				return nil, fmt.Errorf("nn: %s.LoadState: parameter %d: %w", kind, i, err)
			}
			*dst[j] = c
		}
		st.fresh = false
	}
	o.steps = steps
	o.wd = wds
	for dev, c := range o.counts {
		if err := c.Assign(float64(steps)); err != nil {
			return nil, fmt.Errorf("nn: %s.LoadState: step count on %v: %w", kind, dev, err)
		}
	}
	clear(o.counted)
	return h, nil
}
