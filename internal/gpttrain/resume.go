package gpttrain

import (
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/gocu-dev/gocu/array"
	"github.com/gocu-dev/gocu/gpt"
	"github.com/gocu-dev/gocu/nn"
)

// progress is where a run is, as its checkpoint records it.
type progress struct {
	step, total int
	val         float64
	sampler     []byte
	train, vals []Point // the curves so far
}

// curve encodes points as "step:loss" pairs separated by spaces.
func curve(ps []Point) string {
	var b strings.Builder
	for i, p := range ps {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(strconv.Itoa(p.Step) + ":" + strconv.FormatFloat(p.Loss, 'g', -1, 64))
	}
	return b.String()
}

// parseCurve decodes what curve encodes.
func parseCurve(s string) ([]Point, error) {
	var ps []Point
	for _, f := range strings.Fields(s) {
		a, b, ok := strings.Cut(f, ":")
		step, err1 := strconv.Atoi(a)
		loss, err2 := strconv.ParseFloat(b, 64)
		if !ok || err1 != nil || err2 != nil {
			return nil, fmt.Errorf("bad point %q", f)
		}
		ps = append(ps, Point{step, loss})
	}
	return ps, nil
}

// statePath is the optimiser state's file beside checkpoint path:
// gpt.safetensors → gpt.opt.safetensors.
func statePath(path string) string {
	return strings.TrimSuffix(path, ".safetensors") + ".opt.safetensors"
}

// save writes the checkpoint (the model, with the run's progress and
// settings in its metadata) and the optimiser state beside it; with no
// opt (ZeRO-1: the state is sharded) none, and an old one is removed.
func (c *Config) save(m *gpt.Model, opt *nn.Adam, p progress) error {
	f := func(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
	meta := map[string]string{
		"step":          strconv.Itoa(p.step),
		"val_loss":      fmt.Sprintf("%.4f", p.val),
		"train.total":   strconv.Itoa(p.total),
		"train.sampler": base64.StdEncoding.EncodeToString(p.sampler),
		"train.seed":    strconv.FormatUint(c.Seed, 10),
		"train.batch":   strconv.Itoa(c.Batch),
		"train.lr":      f(c.LR),
		"train.min_lr":  f(c.MinLR),
		"train.warmup":  strconv.Itoa(c.Warmup),
		"train.clip":    f(c.Clip),
		"train.bf16":    strconv.FormatBool(c.BF16),
		"train.curve":   curve(p.train),
		"train.val":     curve(p.vals),
	}
	if err := m.Save(c.Save, meta); err != nil {
		return err
	}
	if opt == nil {
		if err := os.Remove(statePath(c.Save)); err != nil && !os.IsNotExist(err) {
			return err
		}
		return nil
	}
	tmp, err := os.CreateTemp(filepath.Dir(c.Save), ".opt-*")
	if err != nil {
		return err
	}
	err = opt.SaveState(tmp)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), statePath(c.Save))
	}
	if err != nil {
		os.Remove(tmp.Name())
	}
	return err
}

// resume loads the checkpoint of c.Resume into c (the model, and the
// settings of its run) and returns the run's progress.
func (c *Config) resume() (*progress, error) {
	dev := array.Default()
	if c.Device != nil {
		dev = array.On(c.Device)
	}
	m, meta, err := gpt.Load(c.Resume, dev.Device())
	if err != nil {
		return nil, fmt.Errorf("resume: %w", err)
	}
	bad := func(key string) error {
		return fmt.Errorf("resume from %s: its metadata has no valid %s (not a checkpoint of gocu gpt train; --init starts a new run from its weights): %w", c.Resume, key, ErrConfig)
	}
	ints := map[string]*int{"step": new(int), "train.total": new(int), "train.batch": &c.Batch, "train.warmup": &c.Warmup}
	for k, p := range ints {
		v, err := strconv.Atoi(meta[k])
		if err != nil || v < 0 {
			return nil, bad(k)
		}
		*p = v
	}
	floats := map[string]*float64{"train.lr": &c.LR, "train.min_lr": &c.MinLR, "train.clip": &c.Clip}
	for k, p := range floats {
		v, err := strconv.ParseFloat(meta[k], 64)
		if err != nil {
			return nil, bad(k)
		}
		*p = v
	}
	if c.Seed, err = strconv.ParseUint(meta["train.seed"], 10, 64); err != nil {
		return nil, bad("train.seed")
	}
	if c.BF16, err = strconv.ParseBool(meta["train.bf16"]); err != nil {
		return nil, bad("train.bf16")
	}
	sampler, err := base64.StdEncoding.DecodeString(meta["train.sampler"])
	if err != nil || len(sampler) == 0 {
		return nil, bad("train.sampler")
	}
	p := &progress{step: *ints["step"], total: *ints["train.total"], sampler: sampler}
	if p.train, err = parseCurve(meta["train.curve"]); err != nil {
		return nil, bad("train.curve")
	}
	if p.vals, err = parseCurve(meta["train.val"]); err != nil {
		return nil, bad("train.val")
	}
	c.Model, c.Init = m.Config, m
	return p, nil
}

// loadState reads an optimiser state file into opt.
func loadState(opt *nn.Adam, path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	return opt.LoadState(f)
}
