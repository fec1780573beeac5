package gpt

import (
	"github.com/gocu-dev/gocu/grad"
	"github.com/gocu-dev/gocu/nn"
)

// attention is self-attention of q, k, v (B, Heads, T, Dim/Heads) by
// nn.ScaledDotProductAttention (a fused flash kernel where one applies),
// causal or not, in the compute precision; it returns (B, T, Dim) with the
// heads side by side.
func (m *Model) attention(q, k, v *grad.Var, causal bool) *grad.Var {
	if c := m.Compute; c != 0 && q.DType() != c {
		q, k, v = q.AsType(c), k.AsType(c), v.AsType(c)
	}
	o := &nn.AttentionOptions{Causal: causal}
	if m.training && m.Config.Dropout > 0 {
		o.Dropout, o.RNG = m.Config.Dropout, m.attnRNG
	}
	y := nn.ScaledDotProductAttention(q, k, v, o)
	if !y.DType().Valid() {
		return y
	}
	s := y.Shape()
	return y.SwapAxes(1, 2).Reshape(s[0], s[2], s[1]*s[3])
}
