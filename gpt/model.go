package gpt

import (
	"fmt"
	"math"

	"github.com/gocu-dev/gocu/array"
	"github.com/gocu-dev/gocu/grad"
	"github.com/gocu-dev/gocu/nn"
)

// Model is a GPT in GPT-2's shape: token and learned position embeddings,
// Layers pre-LayerNorm blocks (causal self-attention, then an MLP 4x wide
// with GELU's tanh form, each added to the residual stream), a final
// LayerNorm and an output head tied to the token embedding.
//
// Its parameters are named as the state_dict of train_gpt.py's PyTorch
// model ("wte.weight", "blocks.0.qkv.weight", "lnf.bias", ...), so that
// checkpoints move between the two (Save, Load).
type Model struct {
	Config Config

	WTE *nn.Embedding // token embedding (Vocab, Dim), also the output head
	WPE *nn.Embedding // position embedding (Context, Dim)

	Blocks []*Block
	LNF    *nn.LayerNorm

	// Compute, when array.BFloat16 (or array.Float16), runs the products
	// of the linear layers, the head and attention in that precision, as
	// torch.autocast does: the parameters stay float32 (master weights),
	// and the residual stream, the layer norms, the softmax and the loss
	// are float32. The zero value computes in the parameters' dtype.
	// With bfloat16 on a GPU, nn's fused kernels run the layer norms, GELU
	// and the loss (float32 inside), and the activations between them and
	// the products stay bfloat16, as under torch.autocast.
	Compute array.DType

	drop     *nn.Dropout
	attnRNG  *array.RNG // attention's dropout masks
	training bool
}

// Block is one transformer block: x + attn(ln1(x)), then x + mlp(ln2(x)).
type Block struct {
	LN1, LN2 *nn.LayerNorm
	QKV      *nn.Linear // (3·Dim, Dim): the query, key and value projections stacked
	Proj     *nn.Linear // attention's output projection
	FC, Out  *nn.Linear // the MLP: Dim → 4·Dim → Dim
	heads    int
}

// New returns a float32 GPT on rng's device, initialised as GPT-2: weights
// and embeddings normal with deviation 0.02, the two residual projections
// of each block (Proj, Out) with 0.02/√(2·Layers), biases zeros and layer
// norms ones and zeros. The seed of rng fixes the values, the same on
// every device.
func New(rng *array.RNG, cfg Config) (*Model, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if rng == nil {
		return nil, fmt.Errorf("gpt: New: nil *array.RNG")
	}
	const std = 0.02
	d := cfg.Dim
	normal := func(s float64, shape ...int) *grad.Var { return grad.Param(rng.Normal(array.Float32, 0, s, shape...)) }
	m := &Model{Config: cfg, training: true}
	m.WTE = &nn.Embedding{Weight: normal(std, cfg.Vocab, d), PaddingIdx: -1}
	if err := m.WTE.Weight.Err(); err != nil {
		return nil, fmt.Errorf("gpt: New: %w", err)
	}
	dev := array.On(m.WTE.Weight.Value().Device())
	m.WPE = &nn.Embedding{Weight: normal(std, cfg.Context, d), PaddingIdx: -1}
	zeros := func(n int) *grad.Var { return grad.Param(dev.Zeros(array.Float32, n).Copy()) }
	linear := func(in, out int, s float64) *nn.Linear {
		l := &nn.Linear{In: in, Out: out, Weight: normal(s, out, in)}
		if cfg.Bias {
			l.Bias = zeros(out)
		}
		return l
	}
	norm := func() *nn.LayerNorm {
		l := nn.NewLayerNorm(dev, d)
		if !cfg.Bias {
			// A constant zero bias: not a parameter, not in the state.
			l.Bias = grad.Const(dev.Zeros(array.Float32, d).Copy())
		}
		return l
	}
	resid := std / math.Sqrt(2*float64(cfg.Layers))
	for range cfg.Layers {
		b := &Block{heads: cfg.Heads}
		b.LN1 = norm()
		b.QKV = linear(d, 3*d, std)
		b.Proj = linear(d, d, resid)
		b.LN2 = norm()
		b.FC = linear(d, 4*d, std)
		b.Out = linear(4*d, d, resid)
		m.Blocks = append(m.Blocks, b)
	}
	m.LNF = norm()
	if cfg.Dropout > 0 {
		m.drop = nn.NewDropout(dev.NewRNG(rng.Seed()^0x64726f70), cfg.Dropout)
		m.attnRNG = dev.NewRNG(rng.Seed() ^ 0x6174746e)
	}
	for _, n := range m.Named() {
		if err := n.Var.Err(); err != nil {
			return nil, fmt.Errorf("gpt: New: %s: %w", n.Name, err)
		}
	}
	return m, nil
}

// Named implements nn.Module: the parameters in the order and with the
// names of train_gpt.py's state_dict, without the tied "head.weight" (it
// is "wte.weight").
func (m *Model) Named() []nn.Named {
	ns := []nn.Named{{Name: "wte.weight", Var: m.WTE.Weight}, {Name: "wpe.weight", Var: m.WPE.Weight}}
	for i, b := range m.Blocks {
		p := fmt.Sprintf("blocks.%d.", i)
		for _, sub := range []struct {
			name string
			m    nn.Module
		}{{"ln1", b.LN1}, {"ln2", b.LN2}, {"qkv", b.QKV}, {"proj", b.Proj}, {"fc", b.FC}, {"out", b.Out}} {
			for _, n := range named(sub.m, m.Config.Bias) {
				ns = append(ns, nn.Named{Name: p + sub.name + "." + n.Name, Var: n.Var})
			}
		}
	}
	for _, n := range named(m.LNF, m.Config.Bias) {
		ns = append(ns, nn.Named{Name: "lnf." + n.Name, Var: n.Var})
	}
	return ns
}

// named lists a layer's parameters; a LayerNorm without bias has only its
// weight.
func named(l nn.Module, bias bool) []nn.Named {
	if ln, ok := l.(*nn.LayerNorm); ok && !bias {
		return []nn.Named{{Name: "weight", Var: ln.Weight}}
	}
	return l.Named()
}

// Params returns the parameters in Named's order.
func (m *Model) Params() []*grad.Var { return nn.Params(m) }

// SetTraining implements nn.Trainable: dropout acts only while training.
func (m *Model) SetTraining(on bool) {
	m.training = on
	if m.drop != nil {
		m.drop.SetTraining(on)
	}
}

// Forward implements nn.Module: ids (B, T) integer tokens in [0, Vocab),
// T ≤ Context, give the logits (B, T, Vocab) of the next token at every
// position (float32, or the parameters' dtype).
func (m *Model) Forward(ids *grad.Var) *grad.Var { return m.forward(ids, false) }

// forward is Forward; for the loss (half), the logits stay in the compute
// precision where the fused classifier takes them.
func (m *Model) forward(ids *grad.Var, half bool) *grad.Var {
	if ids == nil {
		return grad.Const(array.Failed(fmt.Errorf("gpt: Forward: %w", grad.ErrNilVar)))
	}
	x, err := m.embed(ids.Value(), 0)
	if err != nil {
		return grad.Const(array.Failed(err))
	}
	for _, b := range m.Blocks {
		x = b.forward(m, x, nil)
	}
	if half && m.fused() {
		return nn.LinearHalf(m.norm(m.LNF, x), m.WTE.Weight, nil, m.Compute)
	}
	return m.head(x)
}

// fused reports whether the step runs nn's fused GPU kernels in the
// compute precision: then layer norms and GELU write it, and the products
// feeding attention and GELU keep it, as torch.autocast's do.
func (m *Model) fused() bool {
	c := m.Compute
	return c == array.BFloat16 && c != m.WTE.Weight.DType() && nn.Fused(m.WTE.Weight.Value().Device())
}

// norm is l.Forward(x), in the compute precision when fused.
func (m *Model) norm(l *nn.LayerNorm, x *grad.Var) *grad.Var {
	if !m.fused() {
		return l.Forward(x)
	}
	h := *l
	h.Out = m.Compute
	return h.Forward(x)
}

// linearHalf is m.linear with the result in the compute precision when
// fused.
func (m *Model) linearHalf(x, w, b *grad.Var) *grad.Var {
	if !m.fused() {
		return m.linear(x, w, b)
	}
	return nn.LinearHalf(x, w, b, m.Compute)
}

// Loss returns the mean cross-entropy of the model's predictions for ids
// (B, T) against targets (B, T), the tokens that follow each position.
func (m *Model) Loss(ids, targets *array.Array) *grad.Var {
	logits := m.forward(grad.Const(ids), true)
	if !logits.DType().Valid() {
		return logits
	}
	if !sameShape(ids.Shape(), targets.Shape()) {
		return grad.Const(array.Failed(fmt.Errorf("gpt: Loss: targets of shape %v for ids of shape %v: %w", targets.Shape(), ids.Shape(), array.ErrShape)))
	}
	v := m.Config.Vocab
	if dt := targets.DType(); dt.IsInt() && dt != array.Int32 && dt != array.Int64 {
		targets = targets.AsType(array.Int64)
	}
	return nn.CrossEntropy(logits.Reshape(-1, v), targets.Reshape(-1))
}

// embed checks ids (B, T) and returns the sum of the token embeddings and
// those of positions pos..pos+T-1.
func (m *Model) embed(ids *array.Array, pos int) (*grad.Var, error) {
	if err := ids.Err(); err != nil {
		return nil, err
	}
	s := ids.Shape()
	if len(s) != 2 || !ids.DType().IsInt() {
		return nil, fmt.Errorf("gpt: token ids of shape %v and dtype %v: want integers (B, T): %w", s, ids.DType(), array.ErrShape)
	}
	if pos+s[1] > m.Config.Context {
		return nil, fmt.Errorf("gpt: %d tokens from position %d: the context holds %d: %w", s[1], pos, m.Config.Context, array.ErrShape)
	}
	if dt := ids.DType(); dt != array.Int32 && dt != array.Int64 {
		// Narrow ids (bytes) widen once: indices are int32 or int64.
		ids = ids.AsType(array.Int64)
	}
	x := m.WTE.Forward(grad.Const(ids))
	if !x.DType().Valid() {
		return x, nil // failed: its error carries on
	}
	x = x.Add(m.WPE.Weight.Slice(array.S(pos, pos+s[1])))
	return m.dropout(x), nil
}

func (m *Model) dropout(x *grad.Var) *grad.Var {
	if m.drop == nil || !m.training {
		return x
	}
	return m.drop.Forward(x)
}

// head returns the logits of the final LayerNorm of x, by the tied
// embedding.
func (m *Model) head(x *grad.Var) *grad.Var {
	return m.linear(m.LNF.Forward(x), m.WTE.Weight, nil)
}

// linear is x·wᵀ + b in the compute precision.
func (m *Model) linear(x, w, b *grad.Var) *grad.Var {
	if c := m.Compute; c != 0 && c != w.DType() {
		return nn.LinearMixed(x, w, b, c)
	}
	return nn.LinearFunc(x, w, b)
}

// forward runs the block on x (B, T, Dim). With a cache it attends to the
// cached keys and values as well, and appends the new ones.
func (b *Block) forward(m *Model, x *grad.Var, c *layerCache) *grad.Var {
	if !x.DType().Valid() { // failed: its error carries on
		return x
	}
	q, k, v := b.qkv(m, m.norm(b.LN1, x))
	var y *grad.Var
	if c != nil {
		y = c.attend(m, q, k, v)
	} else {
		y = m.attention(q, k, v, true)
	}
	x = residual(x, m.dropout(m.linear(y, b.Proj.Weight, b.Proj.Bias)))
	var h *grad.Var
	if m.fused() {
		// The bias joins GELU's fused kernel, which sums its gradient.
		h = nn.LinearHalf(m.norm(b.LN2, x), b.FC.Weight, nil, m.Compute)
		h = nn.BiasGELU(h, b.FC.Bias, true, m.Compute)
	} else {
		h = m.linear(m.norm(b.LN2, x), b.FC.Weight, b.FC.Bias)
		h = nn.GELU{Tanh: true}.Forward(h)
	}
	return residual(x, m.dropout(m.linear(h, b.Out.Weight, b.Out.Bias)))
}

// residual returns x + a, a a projection that only this sum reads, and
// closes a's value: the sum's pending expression holds what it reads, and
// neither gradient reads a. Left open, a's own pending bias sum would
// keep the projection's product (B·T·Dim in the compute precision)
// allocated until the backward pass.
func residual(x, a *grad.Var) *grad.Var {
	y := x.Add(a)
	if y.DType().Valid() {
		a.Value().Close()
	}
	return y
}

// qkv returns the queries, keys and values of h (B, T, Dim), each
// (B, Heads, T, Dim/Heads). The three products use row blocks of QKV's
// weight, whose gradients are those blocks of the weight's gradient.
func (b *Block) qkv(m *Model, h *grad.Var) (q, k, v *grad.Var) {
	d := b.QKV.In
	s := h.Shape()
	if c := m.Compute; c != 0 && h.DType() != c {
		h = h.AsType(c) // once for the three products
	}
	part := func(i int) *grad.Var {
		r := array.S(i*d, (i+1)*d)
		var bias *grad.Var
		if b.QKV.Bias != nil {
			bias = b.QKV.Bias.Slice(r)
		}
		y := m.linearHalf(h, b.QKV.Weight.Slice(r), bias)
		return y.Reshape(s[0], s[1], b.heads, d/b.heads).SwapAxes(1, 2)
	}
	return part(0), part(1), part(2)
}

func sameShape(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
