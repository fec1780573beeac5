package gpt

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
)

// Config is a GPT's shape.
type Config struct {
	Layers  int     // transformer blocks
	Heads   int     // attention heads; they divide Dim
	Dim     int     // width of the residual stream (n_embd)
	Context int     // longest sequence, the number of learned positions
	Vocab   int     // tokens: 256 for bytes
	Dropout float64 // dropout probability while training, in [0, 1)
	// Bias gives the linear layers and layer norms biases, as GPT-2 and
	// train_gpt.py's model have.
	Bias bool
}

// ErrConfig is wrapped by the error of a Config that describes no model.
var ErrConfig = errors.New("invalid GPT configuration")

// GPT2 returns GPT-2 small's shape (124M parameters): 12 layers, 12
// heads, 768 wide, context 1024, with the vocabulary padded from 50257 to
// 50304, a multiple of 64, as nanoGPT and train_gpt.py do.
func GPT2() Config {
	return Config{Layers: 12, Heads: 12, Dim: 768, Context: 1024, Vocab: 50304, Bias: true}
}

// Bytes returns the byte-level model of train_gpt.py (nanoGPT's
// shakespeare_char shape): 6 layers, 6 heads, 384 wide, context 256,
// vocabulary 256.
func Bytes() Config {
	return Config{Layers: 6, Heads: 6, Dim: 384, Context: 256, Vocab: 256, Bias: true}
}

// Tiny returns the byte model of the tests: 2 layers, 2 heads, 64 wide,
// context 64. It trains on a CPU in a minute.
func Tiny() Config {
	return Config{Layers: 2, Heads: 2, Dim: 64, Context: 64, Vocab: 256, Bias: true}
}

var presets = map[string]func() Config{"gpt2": GPT2, "bytes": Bytes, "tiny": Tiny}

// Preset returns the configuration of a preset by name: "gpt2", "bytes"
// or "tiny".
func Preset(name string) (Config, error) {
	if f, ok := presets[name]; ok {
		return f(), nil
	}
	return Config{}, fmt.Errorf("gpt: no preset %q (want one of %v): %w", name, PresetNames(), ErrConfig)
}

// PresetNames lists the presets' names, sorted.
func PresetNames() []string {
	var names []string
	for n := range presets {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Validate reports what makes c describe no model.
func (c Config) Validate() error {
	for _, f := range []struct {
		name string
		v    int
	}{{"layers", c.Layers}, {"heads", c.Heads}, {"width", c.Dim}, {"context", c.Context}, {"vocabulary", c.Vocab}} {
		if f.v < 1 {
			return fmt.Errorf("gpt: %s %d: want a number >= 1: %w", f.name, f.v, ErrConfig)
		}
	}
	if c.Dim%c.Heads != 0 {
		return fmt.Errorf("gpt: width %d is not a multiple of the %d heads: %w", c.Dim, c.Heads, ErrConfig)
	}
	if !(c.Dropout >= 0 && c.Dropout < 1) {
		return fmt.Errorf("gpt: dropout %v: want 0 <= p < 1: %w", c.Dropout, ErrConfig)
	}
	return nil
}

// Params returns the number of parameters, the tied embedding counted
// once (torch's sum of numel over parameters()).
func (c Config) Params() int {
	d := c.Dim
	block := 2*d + 3*d*d + d*d + 4*d*d + 4*d*d // ln1, ln2, qkv, proj, fc, out
	if c.Bias {
		block += 2*d + 3*d + d + 4*d + d
	}
	final := d
	if c.Bias {
		final += d
	}
	return c.Vocab*d + c.Context*d + c.Layers*block + final
}

// FLOPsPerToken returns the floating-point operations of one training
// step per token, as train_gpt.py (and llm.c) count them: 6 per
// parameter (forward and backward) plus 6·Layers·Context·Dim for
// attention.
func (c Config) FLOPsPerToken() float64 {
	return 6*float64(c.Params()) + 6*float64(c.Layers)*float64(c.Context)*float64(c.Dim)
}

// metadata returns c as checkpoint metadata.
func (c Config) metadata() map[string]string {
	return map[string]string{
		"gpt.layers":  strconv.Itoa(c.Layers),
		"gpt.heads":   strconv.Itoa(c.Heads),
		"gpt.dim":     strconv.Itoa(c.Dim),
		"gpt.context": strconv.Itoa(c.Context),
		"gpt.vocab":   strconv.Itoa(c.Vocab),
		"gpt.bias":    strconv.FormatBool(c.Bias),
		"gpt.dropout": strconv.FormatFloat(c.Dropout, 'g', -1, 64),
	}
}

// configFrom reads a Config from checkpoint metadata.
func configFrom(meta map[string]string) (Config, error) {
	var c Config
	var missing []string
	ints := []struct {
		key string
		p   *int
	}{{"gpt.layers", &c.Layers}, {"gpt.heads", &c.Heads}, {"gpt.dim", &c.Dim}, {"gpt.context", &c.Context}, {"gpt.vocab", &c.Vocab}}
	for _, f := range ints {
		s, ok := meta[f.key]
		if !ok {
			missing = append(missing, f.key)
			continue
		}
		v, err := strconv.Atoi(s)
		if err != nil {
			return c, fmt.Errorf("gpt: checkpoint metadata %s = %q: want an integer: %w", f.key, s, ErrConfig)
		}
		*f.p = v
	}
	if len(missing) > 0 {
		slices.Sort(missing)
		return c, fmt.Errorf("gpt: the checkpoint's metadata lacks %v (not a checkpoint of this package; give the configuration): %w", missing, ErrConfig)
	}
	c.Bias = true
	if s, ok := meta["gpt.bias"]; ok {
		b, err := strconv.ParseBool(s)
		if err != nil {
			return c, fmt.Errorf("gpt: checkpoint metadata gpt.bias = %q: want true or false: %w", s, ErrConfig)
		}
		c.Bias = b
	}
	if s, ok := meta["gpt.dropout"]; ok {
		p, err := strconv.ParseFloat(s, 64)
		if err != nil || math.IsNaN(p) {
			return c, fmt.Errorf("gpt: checkpoint metadata gpt.dropout = %q: want a number: %w", s, ErrConfig)
		}
		c.Dropout = p
	}
	return c, c.Validate()
}
