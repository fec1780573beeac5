package nn

import (
	"math"

	"github.com/gocu-dev/gocu/grad"
)

// ReLU is max(x, 0).
type ReLU struct{ stateless }

// Forward implements Module.
func (ReLU) Forward(x *grad.Var) *grad.Var { return x.ReLU() }

// Tanh is the hyperbolic tangent.
type Tanh struct{ stateless }

// Forward implements Module.
func (Tanh) Forward(x *grad.Var) *grad.Var { return x.Tanh() }

// Sigmoid is 1/(1+e^-x).
type Sigmoid struct{ stateless }

// Forward implements Module.
func (Sigmoid) Forward(x *grad.Var) *grad.Var { return x.Sigmoid() }

// GELU is x·Φ(x), Φ the standard normal distribution function, as
// PyTorch's nn.GELU(): with Tanh false, Φ(x) = (1 + erf(x/√2))/2 with erf
// from Abramowitz and Stegun 7.1.26 (absolute error under 1.5e-7, below
// float32's resolution of Φ); with Tanh true, PyTorch's approximate="tanh"
// form 0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³))). Both are elementwise
// chains: forward and backward each fuse into one pass.
type GELU struct {
	stateless
	Tanh bool
}

// Forward implements Module.
func (m GELU) Forward(x *grad.Var) *grad.Var {
	if m.Tanh {
		inner := x.Add(x.Mul(x).Mul(x).Mul(0.044715)).Mul(math.Sqrt(2 / math.Pi))
		return x.Mul(inner.Tanh().Add(1)).Mul(0.5)
	}
	return x.Mul(Erf(x.Mul(1 / math.Sqrt2)).Add(1)).Mul(0.5)
}

// Erf is the error function, from Abramowitz and Stegun 7.1.26 (absolute
// error under 1.5e-7), as a differentiable elementwise chain.
func Erf(x *grad.Var) *grad.Var {
	const (
		p  = 0.3275911
		a1 = 0.254829592
		a2 = -0.284496736
		a3 = 1.421413741
		a4 = -1.453152027
		a5 = 1.061405429
	)
	ax := x.Abs()
	t := ax.Mul(p).Add(1).Reciprocal()
	poly := t.Mul(a5).Add(a4).Mul(t).Add(a3).Mul(t).Add(a2).Mul(t).Add(a1).Mul(t)
	y := poly.Mul(ax.Square().Neg().Exp()).Neg().Add(1) // erf(|x|)
	return y.Mul(x.Sign())
}

// SiLU is x·σ(x), as PyTorch's nn.SiLU (the swish of Llama's MLP).
type SiLU struct{ stateless }

// Forward implements Module.
func (SiLU) Forward(x *grad.Var) *grad.Var { return x.Mul(x.Sigmoid()) }

// Softmax is the softmax along Axis (negative counts from the end), as
// PyTorch's nn.Softmax(dim).
type Softmax struct {
	stateless
	Axis int
}

// Forward implements Module.
func (m Softmax) Forward(x *grad.Var) *grad.Var { return x.Softmax(m.Axis) }
