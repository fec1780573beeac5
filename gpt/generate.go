package gpt

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sort"

	"github.com/gocu-dev/gocu/array"
	"github.com/gocu-dev/gocu/grad"
)

// GenerateOptions say how Generate samples.
type GenerateOptions struct {
	// Tokens is the number of tokens to generate.
	Tokens int
	// Temperature divides the logits before the softmax: below 1 sharper,
	// above 1 flatter. 0 picks the most likely token (greedy).
	Temperature float64
	// TopK, when positive, samples only among the K most likely tokens.
	TopK int
	// Seed fixes the draws: one seed, one continuation.
	Seed uint64
	// NoCache recomputes the whole window for every token instead of
	// keeping the keys and values of the tokens before (slower; the same
	// tokens).
	NoCache bool
	// Emit, when set, receives each token as it is drawn; an error stops
	// the generation and is returned.
	Emit func(token int) error
}

// ErrGenerate is wrapped by the errors of Generate's arguments.
var ErrGenerate = errors.New("invalid generation request")

// Generate continues prompt (token ids) by opts.Tokens tokens and returns
// them, as nanoGPT's generate: each token is drawn from the softmax of the
// last position's logits (divided by the temperature, cut to the top K)
// given the last Context tokens. With the cache (the default) each new
// token costs one position of each layer, the keys and values of the
// tokens before being kept; once the sequence outgrows the context, the
// window slides and every token recomputes it, since the learned
// positions of all its tokens change. Dropout is off while generating.
func (m *Model) Generate(prompt []int, opts GenerateOptions) ([]int, error) {
	if len(prompt) == 0 {
		return nil, fmt.Errorf("gpt: Generate: empty prompt (give at least one token): %w", ErrGenerate)
	}
	for i, t := range prompt {
		if t < 0 || t >= m.Config.Vocab {
			return nil, fmt.Errorf("gpt: Generate: prompt token %d at %d is outside [0, %d): %w", t, i, m.Config.Vocab, ErrGenerate)
		}
	}
	if opts.Tokens < 0 {
		return nil, fmt.Errorf("gpt: Generate: %d tokens: want a number >= 0: %w", opts.Tokens, ErrGenerate)
	}
	if !(opts.Temperature >= 0) || math.IsInf(opts.Temperature, 0) {
		return nil, fmt.Errorf("gpt: Generate: temperature %v: want a finite number >= 0: %w", opts.Temperature, ErrGenerate)
	}
	if opts.TopK < 0 {
		return nil, fmt.Errorf("gpt: Generate: top-k %d: want a number >= 0 (0: all tokens): %w", opts.TopK, ErrGenerate)
	}
	training := m.training
	m.SetTraining(false)
	defer m.SetTraining(training)
	rng := rand.New(rand.NewPCG(opts.Seed, 0x67656e6572617465))
	seq := slices.Clone(prompt)
	ctx := m.Config.Context
	window := func() []int { return seq[max(0, len(seq)-ctx):] }
	var out []int
	var err error
	grad.NoGrad(func() {
		var c *cache
		var logits []float64
		next := func() {
			if opts.NoCache || len(seq) > ctx || c == nil {
				c = nil
				if !opts.NoCache && len(seq) <= ctx {
					c = &cache{layers: make([]layerCache, len(m.Blocks))}
				}
				logits, err = m.lastLogits(window(), c)
				return
			}
			logits, err = m.lastLogits(seq[len(seq)-1:], c)
		}
		next()
		for len(out) < opts.Tokens && err == nil {
			t := sample(logits, opts.Temperature, opts.TopK, rng)
			out = append(out, t)
			seq = append(seq, t)
			if opts.Emit != nil {
				if err = opts.Emit(t); err != nil {
					return
				}
			}
			if len(out) < opts.Tokens {
				next()
			}
		}
	})
	return out, err
}

// lastLogits runs ids (one sequence) through the model, after the tokens
// already in c (nil: none), and returns the logits of the last position.
func (m *Model) lastLogits(ids []int, c *cache) ([]float64, error) {
	pos := 0
	if c != nil {
		pos = c.len
		if pos > 0 && len(ids) != 1 {
			return nil, fmt.Errorf("gpt: %d tokens after %d cached: the cache takes one at a time", len(ids), pos)
		}
	}
	x, err := m.embed(array.FromSliceOn(m.WTE.Weight.Value().Device(), toInt64(ids), 1, len(ids)), pos)
	if err != nil {
		return nil, err
	}
	for i, b := range m.Blocks {
		var lc *layerCache
		if c != nil {
			lc = &c.layers[i]
		}
		x = b.forward(m, x, lc)
	}
	if c != nil {
		c.len += len(ids)
	}
	t := len(ids)
	l, err := m.head(x.Slice(array.All, array.S(t-1, t))).Value().AsType(array.Float64).Float64s()
	if err != nil {
		return nil, err
	}
	for i, v := range l {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, fmt.Errorf("gpt: Generate: the logit of token %d is %v (diverged weights?)", i, v)
		}
	}
	return l, nil
}

func toInt64(ids []int) []int64 {
	out := make([]int64, len(ids))
	for i, t := range ids {
		out[i] = int64(t)
	}
	return out
}

// cache holds the keys and values of the tokens seen, per layer.
type cache struct {
	layers []layerCache
	len    int
}

// layerCache is one layer's keys and values, (1, Heads, len, Dim/Heads).
type layerCache struct {
	k, v *array.Array
}

// attend appends k and v to the cache and returns the attention of q
// (1, Heads, T, Dim/Heads) over all cached positions, (1, T, Dim): T
// tokens into an empty cache (causal), or one token after others (which
// sees them all).
func (c *layerCache) attend(m *Model, q, k, v *grad.Var) *grad.Var {
	if c.k != nil {
		nk := array.Concat(2, c.k, k.Value()).Eval()
		nv := array.Concat(2, c.v, v.Value()).Eval()
		c.k.Close()
		c.v.Close()
		c.k, c.v = nk, nv
	} else {
		c.k, c.v = k.Value().Copy(), v.Value().Copy()
	}
	return m.attention(q, grad.Const(c.k), grad.Const(c.v), c.k.Shape()[2] == q.Shape()[2])
}

// sample draws a token from logits: the most likely at temperature 0,
// else from softmax(logits/temperature) over the top k (all for k 0).
func sample(logits []float64, temperature float64, k int, rng *rand.Rand) int {
	if temperature == 0 {
		best := 0
		for i, l := range logits {
			if l > logits[best] {
				best = i
			}
		}
		return best
	}
	idx := make([]int, len(logits))
	for i := range idx {
		idx[i] = i
	}
	if k > 0 && k < len(idx) {
		// Sort by logit, descending, ties by index: deterministic.
		sort.SliceStable(idx, func(a, b int) bool { return logits[idx[a]] > logits[idx[b]] })
		idx = idx[:k]
	}
	hi := math.Inf(-1)
	for _, i := range idx {
		hi = max(hi, logits[i])
	}
	p := make([]float64, len(idx))
	sum := 0.0
	for j, i := range idx {
		p[j] = math.Exp((logits[i] - hi) / temperature)
		sum += p[j]
	}
	u := rng.Float64() * sum
	for j, i := range idx {
		u -= p[j]
		if u < 0 {
			return i
		}
	}
	return idx[len(idx)-1]
}
