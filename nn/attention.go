package nn

import (
	"fmt"
	"math"

	"github.com/gocu-dev/gocu/array"
	"github.com/gocu-dev/gocu/grad"
)

// AttentionOptions are the options of ScaledDotProductAttention; nil
// means none (no mask, no dropout, scale 1/√D).
type AttentionOptions struct {
	// Causal lets query i attend only to keys j <= i, the mask aligned to
	// the top left as torch's is_causal.
	Causal bool
	// KeyPadding, a bool array (B, S_k), marks keys to ignore (true),
	// as the key_padding_mask of torch's nn.MultiheadAttention. B is the
	// first axis of the queries.
	KeyPadding *array.Array
	// Dropout is the probability, in [0, 1), of dropping each attention
	// weight; the kept ones are scaled by 1/(1-Dropout).
	Dropout float64
	// RNG draws the dropout masks; it is needed when Dropout > 0.
	RNG *array.RNG
	// Scale multiplies the scores q·kᵀ; 0 means 1/√D.
	Scale float64
}

// fusedAttention is where a fused flash-attention kernel plugs in: it
// returns softmax(scale·q·kᵀ (causal))·v for q, k and v without padding
// or dropout, or nil when it does not apply (a device, dtype or head
// dimension it has no kernel for), and the composed operations run.
// useFlash sets it from a kernel's forward and backward functions.
var fusedAttention = func(q, k, v *grad.Var, causal bool, scale float64) *grad.Var { return nil }

// ScaledDotProductAttention returns softmax(Scale·q·kᵀ + mask)·v with
// dropout on the attention weights, as PyTorch's
// F.scaled_dot_product_attention: q is (..., S_q, D), k (..., S_k, D) and
// v (..., S_k, D_v), the leading axes broadcast, and the result is
// (..., S_q, D_v). A query whose keys are all masked gets zeros, as
// torch's math backend does. Half-precision inputs (bfloat16, float16)
// have their products in that precision and the softmax in float32; the
// result has v's dtype.
func ScaledDotProductAttention(q, k, v *grad.Var, opts *AttentionOptions) *grad.Var {
	var o AttentionOptions
	if opts != nil {
		o = *opts
	}
	const name = "ScaledDotProductAttention"
	for i, x := range []*grad.Var{q, k, v} {
		if err := x.Err(); err != nil {
			return grad.Const(array.Failed(fmt.Errorf("nn: %s: %s: %w", name, "qkv"[i:i+1], err)))
		}
	}
	qs, ks, vs := q.Shape(), k.Shape(), v.Shape()
	if len(qs) < 2 || len(ks) < 2 || len(vs) < 2 {
		return failedVar(array.ErrShape, name, "q, k and v of shapes %v, %v and %v: want at least 2 axes (..., S, D)", qs, ks, vs)
	}
	d := qs[len(qs)-1]
	sk := ks[len(ks)-2]
	if ks[len(ks)-1] != d {
		return failedVar(array.ErrShape, name, "q of shape %v and k of shape %v: the last axes (D) differ", qs, ks)
	}
	if vs[len(vs)-2] != sk {
		return failedVar(array.ErrShape, name, "k of shape %v and v of shape %v: the key counts (S_k) differ", ks, vs)
	}
	if !(o.Dropout >= 0 && o.Dropout < 1) {
		return failedVar(ErrHyper, name, "dropout %v: want 0 <= p < 1", o.Dropout)
	}
	if o.Dropout > 0 && o.RNG == nil {
		return failedVar(ErrHyper, name, "dropout %v without an RNG to draw masks from", o.Dropout)
	}
	if math.IsNaN(o.Scale) || math.IsInf(o.Scale, 0) {
		return failedVar(ErrHyper, name, "scale %v: want a finite number (0 for 1/sqrt(D))", o.Scale)
	}
	scale := o.Scale
	if scale == 0 {
		scale = 1 / math.Sqrt(float64(max(d, 1)))
	}
	if o.KeyPadding == nil && o.Dropout == 0 {
		if y := fusedAttention(q, k, v, o.Causal, scale); y != nil {
			return y
		}
	}

	s := q.MatMul(k.SwapAxes(-1, -2)) // (..., S_q, S_k)
	if !s.DType().Valid() {
		return s // batch axes that do not broadcast: MatMul's error
	}
	dt := s.DType()
	if dt == array.BFloat16 || dt == array.Float16 {
		s = s.AsType(array.Float32)
	}
	s = s.Mul(scale)
	ss := s.Shape()
	sq := ss[len(ss)-2]
	var mask *array.Array // true where a score is dropped, broadcast against s
	dev := array.On(s.Value().Device())
	if o.Causal {
		rows := dev.Arange(array.Int64, float64(sq)).Reshape(sq, 1)
		cols := dev.Arange(array.Int64, float64(sk)).Reshape(1, sk)
		mask = cols.Gt(rows)
	}
	if p := o.KeyPadding; p != nil {
		if err := p.Err(); err != nil {
			return grad.Const(array.Failed(fmt.Errorf("nn: %s: key padding: %w", name, err)))
		}
		if p.DType() != array.Bool {
			return failedVar(array.ErrDType, name, "key padding of dtype %v: want bool", p.DType())
		}
		if len(ss) < 3 || p.Ndim() != 2 || p.Shape()[0] != ss[0] || p.Shape()[1] != sk {
			return failedVar(array.ErrShape, name, "key padding of shape %v for scores of shape %v: want (B, S_k) with B the first axis of q", p.Shape(), ss)
		}
		if p.Device() != dev.Device() {
			return failedVar(array.ErrDevice, name, "key padding on %v, the scores on %v", p.Device(), dev.Device())
		}
		ps := make([]int, len(ss))
		for i := range ps {
			ps[i] = 1
		}
		ps[0], ps[len(ps)-1] = ss[0], sk
		pm := p.Reshape(ps...)
		if mask == nil {
			mask = pm
		} else {
			mask = mask.LogicalOr(pm)
		}
	}
	var empty *array.Array // queries whose every key is masked
	if mask != nil {
		if o.KeyPadding != nil {
			// Unmask those rows for the softmax (avoiding NaN, forward
			// and backward) and zero their weights after it.
			empty = mask.Reduce(array.OpAll, true, -1)
			mask = mask.LogicalAnd(empty.LogicalNot())
		}
		s = grad.Where(mask, math.Inf(-1), s)
	}
	p := s.Softmax(-1)
	if empty != nil {
		p = grad.Where(empty, 0, p)
	}
	if o.Dropout > 0 {
		keep := o.RNG.Uniform(p.DType(), 0, 1, p.Shape()...).Ge(o.Dropout)
		p = grad.Where(keep, p.Mul(1/(1-o.Dropout)), 0)
	}
	if vt := v.DType(); p.DType() != vt {
		p = p.AsType(vt)
	}
	return p.MatMul(v)
}

// MultiheadAttention is PyTorch's nn.MultiheadAttention with
// batch_first=True: the queries, keys and values are projected by one
// fused weight InProjWeight (3·Dim, Dim) and bias InProjBias (3·Dim),
// split into Heads heads of Dim/Heads, attended with
// ScaledDotProductAttention and projected by OutProj. The parameter names
// are torch's: "in_proj_weight", "in_proj_bias", "out_proj.weight",
// "out_proj.bias".
type MultiheadAttention struct {
	Dim, Heads   int
	InProjWeight *grad.Var
	InProjBias   *grad.Var
	OutProj      *Linear
	// Causal masks future positions in Forward.
	Causal bool
	// Dropout is the probability of dropping an attention weight while
	// training.
	Dropout  float64
	Training bool
	// Compute, when set (array.BFloat16 or array.Float16), runs the
	// projections and the attention products in that precision, with
	// float32 softmax and float32 master weights, as torch.autocast.
	Compute array.DType
	rng     *array.RNG
}

// NewMultiheadAttention returns a float32 MultiheadAttention of width dim
// and the given number of heads on rng's device, initialised as PyTorch's:
// InProjWeight Xavier-uniform, OutProj.Weight uniform in ±1/√dim, both
// biases zero. Dropout masks come from rng as well.
func NewMultiheadAttention(rng *array.RNG, dim, heads int) *MultiheadAttention {
	bound := math.Sqrt(6 / float64(max(4*dim, 1)))
	w := rng.Uniform(array.Float32, -bound, bound, 3*dim, dim)
	d := array.On(w.Device())
	out := newLinear(rng, dim, dim, false)
	out.Bias = grad.Param(d.Zeros(array.Float32, dim).Copy())
	return &MultiheadAttention{
		Dim: dim, Heads: heads, Training: true, rng: rng,
		InProjWeight: grad.Param(w),
		InProjBias:   grad.Param(d.Zeros(array.Float32, 3*dim).Copy()),
		OutProj:      out,
	}
}

// Forward implements Module: self-attention of x (B, S, Dim) with the
// layer's Causal and Dropout.
func (m *MultiheadAttention) Forward(x *grad.Var) *grad.Var {
	return m.Attend(x, x, x, nil)
}

// Attend is attention of queries q (B, S_q, Dim) to keys k and values v
// (B, S_k, Dim), each projected by its third of InProjWeight: cross
// attention, or self-attention with q, k and v the same. opts nil means
// the layer's Causal and Dropout; otherwise opts is used as given (its
// Scale applies to each head's scores). Outside training no dropout is
// applied either way.
func (m *MultiheadAttention) Attend(q, k, v *grad.Var, opts *AttentionOptions) *grad.Var {
	const name = "MultiheadAttention"
	if m == nil || m.InProjWeight == nil || m.InProjBias == nil || m.OutProj == nil {
		return badHyper(name, "nil layer or parameters")
	}
	if m.Heads <= 0 || m.Dim <= 0 || m.Dim%m.Heads != 0 {
		return badHyper(name, "%d heads for width %d: want heads > 0 dividing the width", m.Heads, m.Dim)
	}
	if !(m.Dropout >= 0 && m.Dropout < 1) {
		return badHyper(name, "dropout %v: want 0 <= p < 1", m.Dropout)
	}
	var o AttentionOptions
	if opts != nil {
		o = *opts
	} else {
		o = AttentionOptions{Causal: m.Causal, Dropout: m.Dropout, RNG: m.rng}
	}
	if !m.Training {
		o.Dropout = 0
	}
	dim, h := m.Dim, m.Heads
	for i, x := range []*grad.Var{q, k, v} {
		if err := x.Err(); err != nil {
			return grad.Const(array.Failed(fmt.Errorf("nn: %s: %s: %w", name, "qkv"[i:i+1], err)))
		}
		s := x.Shape()
		if len(s) != 3 || s[2] != dim {
			return failedVar(array.ErrShape, name, "%s of shape %v: want (B, S, %d)", "qkv"[i:i+1], s, dim)
		}
	}
	if q.Shape()[0] != k.Shape()[0] || k.Shape()[0] != v.Shape()[0] || k.Shape()[1] != v.Shape()[1] {
		return failedVar(array.ErrShape, name, "q, k and v of shapes %v, %v and %v: want one batch size, and as many keys as values", q.Shape(), k.Shape(), v.Shape())
	}
	if s := m.InProjWeight.Shape(); len(s) != 2 || s[0] != 3*dim || s[1] != dim {
		return failedVar(array.ErrShape, name, "in_proj_weight of shape %v: want (%d, %d)", s, 3*dim, dim)
	}
	// Each projection takes its rows of the fused weight: views, whose
	// gradients land in the fused weight's gradient.
	heads := func(x *grad.Var, i int) *grad.Var {
		w := m.InProjWeight.Slice(array.S(i*dim, (i+1)*dim))
		b := m.InProjBias.Slice(array.S(i*dim, (i+1)*dim))
		var y *grad.Var
		if m.Compute != 0 && m.Compute != w.DType() {
			y = LinearMixed(x, w, b, m.Compute).AsType(m.Compute)
		} else {
			y = LinearFunc(x, w, b)
		}
		s := y.Shape()
		if len(s) != 3 {
			return y // failed: a bias of the wrong shape
		}
		return y.Reshape(s[0], s[1], h, dim/h).Transpose(0, 2, 1, 3) // (B, H, S, D)
	}
	a := ScaledDotProductAttention(heads(q, 0), heads(k, 1), heads(v, 2), &o) // (B, H, S_q, D)
	s := a.Shape()
	if len(s) != 4 {
		return a // failed
	}
	a = a.Transpose(0, 2, 1, 3).Reshape(s[0], s[2], dim)
	if m.Compute != 0 && m.Compute != m.OutProj.Weight.DType() {
		return LinearMixed(a, m.OutProj.Weight, m.OutProj.Bias, m.Compute)
	}
	return LinearFunc(a, m.OutProj.Weight, m.OutProj.Bias)
}

// Named implements Module: "in_proj_weight", "in_proj_bias",
// "out_proj.weight" and "out_proj.bias".
func (m *MultiheadAttention) Named() []Named {
	ns := []Named{{"in_proj_weight", m.InProjWeight}, {"in_proj_bias", m.InProjBias}}
	for _, n := range m.OutProj.Named() {
		ns = append(ns, Named{"out_proj." + n.Name, n.Var})
	}
	return ns
}

// SetTraining implements Trainable.
func (m *MultiheadAttention) SetTraining(on bool) { m.Training = on }
