package gpt

import (
	"math"

	"github.com/gocu-dev/gocu/array"
	"github.com/gocu-dev/gocu/grad"
)

// attention is causal self-attention of q, k, v (B, Heads, T, Dim/Heads)
// in the compute precision; it returns (B, T, Dim) with the heads
// side by side.
func attention(m *Model, q, k, v *grad.Var) *grad.Var {
	y := attend(m, q, k, v, 0)
	s := y.Shape()
	return y.SwapAxes(1, 2).Reshape(s[0], s[2], s[1]*s[3])
}

// attend is softmax(q·kᵀ/√d + mask)·v for queries at positions
// off..off+T-1 and keys at 0..S-1 (S = off+T): query i sees keys up to
// off+i. Scores and softmax are float32 (or float64), whatever the
// compute precision.
func attend(m *Model, q, k, v *grad.Var, off int) *grad.Var {
	if c := m.Compute; c != 0 {
		q, k, v = q.AsType(c), k.AsType(c), v.AsType(c)
	}
	qs, ks := q.Shape(), k.Shape()
	t, sk := qs[2], ks[2]
	dt := m.WTE.DType()
	s := q.MatMul(k.SwapAxes(-1, -2)).AsType(dt).Mul(1 / math.Sqrt(float64(qs[3])))
	if t > 1 || off == 0 {
		s = grad.Where(causalMask(s.Value(), t, sk, off), s, math.Inf(-1))
	}
	p := m.dropout(s.Softmax(-1))
	if c := m.Compute; c != 0 {
		p = p.AsType(c)
	}
	return p.MatMul(v)
}

// causalMask is the (t, s) mask of what each of t queries at positions
// off..off+t-1 may see of s keys: key j ≤ query position.
func causalMask(like *array.Array, t, s, off int) *array.Array {
	dev := array.On(like.Device())
	rows := dev.Arange(array.Int64, float64(off), float64(off+t)).Reshape(t, 1)
	cols := dev.Arange(array.Int64, float64(s)).Reshape(1, s)
	return cols.Le(rows)
}
