package nn

import (
	"math"

	"github.com/gocu-dev/gocu/array"
	"github.com/gocu-dev/gocu/grad"
)

// Linear is y = x·Wᵀ + b, PyTorch's nn.Linear: Weight has shape (Out, In)
// (PyTorch's layout, so that checkpoints move between the two), Bias (Out)
// or nil. x may have any leading axes.
type Linear struct {
	In, Out int
	Weight  *grad.Var
	Bias    *grad.Var
}

// NewLinear returns a float32 Linear layer on rng's device, initialised as
// PyTorch's default: weights and bias uniform in ±1/√In (kaiming_uniform_
// with a = √5). The seed of rng fixes the values, which are the same on
// every device.
func NewLinear(rng *array.RNG, in, out int) *Linear {
	return newLinear(rng, in, out, true)
}

// NewLinearNoBias is NewLinear without the bias.
func NewLinearNoBias(rng *array.RNG, in, out int) *Linear {
	return newLinear(rng, in, out, false)
}

func newLinear(rng *array.RNG, in, out int, bias bool) *Linear {
	bound := 1 / math.Sqrt(float64(max(in, 1)))
	l := &Linear{In: in, Out: out, Weight: grad.Param(rng.Uniform(array.Float32, -bound, bound, out, in))}
	if bias {
		l.Bias = grad.Param(rng.Uniform(array.Float32, -bound, bound, out))
	}
	return l
}

// Forward implements Module.
func (l *Linear) Forward(x *grad.Var) *grad.Var { return LinearFunc(x, l.Weight, l.Bias) }

// Named implements Module: "weight" and "bias".
func (l *Linear) Named() []Named {
	ns := []Named{{"weight", l.Weight}}
	if l.Bias != nil {
		ns = append(ns, Named{"bias", l.Bias})
	}
	return ns
}

// LinearFunc is x·wᵀ + b (b may be nil), PyTorch's F.linear, as one
// recorded operation: the forward pass is one product (wᵀ is a transposed
// view, which the matrix engine takes as a flag) with the bias added
// lazily, so it fuses with what follows (an activation); the backward pass
// is two products and a sum, and the weight's gradient comes out in w's
// own (Out, In) layout, contiguous, ready for a fused optimiser.
func LinearFunc(x, w, b *grad.Var) *grad.Var {
	xv, wv := x.Value(), w.Value()
	y := xv.MatMul(wv.T())
	if b != nil {
		y = y.Add(b.Value())
	}
	in := []*grad.Var{x, w, b}
	return grad.Func("Linear", y, in, func(g *array.Array) []*array.Array {
		out := wv.Shape()[0]
		var dx, dw, db *array.Array
		if x.RequiresGrad() {
			dx = g.MatMul(wv) // (..., In)
		}
		g2, x2 := g, xv
		if g.Ndim() != 2 {
			g2 = g.Reshape(-1, out)
			x2 = xv.Reshape(-1, wv.Shape()[1])
		}
		if w.RequiresGrad() {
			dw = g2.T().MatMul(x2) // (Out, In)
		}
		if b != nil && b.RequiresGrad() {
			db = g2.Sum(0)
		}
		return []*array.Array{dx, dw, db}
	})
}
