package nn

import (
	"math"

	"github.com/gocu-dev/gocu/array"
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
// chains: forward and backward each fuse into one pass. On a GPU, float32
// or bfloat16 x runs one fused kernel each way, with the exact erf.
type GELU struct {
	stateless
	Tanh bool

	// Out, when set, is the result's dtype (array.BFloat16 feeds a
	// bfloat16 product without a cast); zero keeps x's.
	Out array.DType
}

// Forward implements Module.
func (m GELU) Forward(x *grad.Var) *grad.Var {
	if m.Out != 0 && !m.Out.IsFloating() {
		return badHyper("GELU", "Out %v: want a float dtype, or 0", m.Out)
	}
	if y := m.fused(x); y != nil {
		return y
	}
	var y *grad.Var
	if m.Tanh {
		inner := x.Add(x.Mul(x).Mul(x).Mul(0.044715)).Mul(math.Sqrt(2 / math.Pi))
		y = x.Mul(inner.Tanh().Add(1)).Mul(0.5)
	} else {
		y = x.Mul(Erf(x.Mul(1 / math.Sqrt2)).Add(1)).Mul(0.5)
	}
	if m.Out != 0 {
		y = y.AsType(m.Out)
	}
	return y
}

// fused runs the fused kernels where they apply, and returns nil where
// they do not.
func (m GELU) fused(x *grad.Var) *grad.Var {
	if x == nil || !x.DType().Valid() {
		return nil
	}
	xv := x.Value()
	dev, in, out := xv.Device(), xv.DType(), m.Out
	if out == 0 {
		out = in
	}
	n := xv.Size()
	if !fusedOK(dev, in, out) || n == 0 {
		return nil
	}
	ks, err := fused(dev, in, out)
	if err != nil {
		return grad.Const(array.Failed(err))
	}
	form := int32(0)
	if m.Tanh {
		form = 1
	}
	mk := array.On(dev)
	xc := xv.Contiguous()
	y := mk.Empty(out, xv.Shape()...)
	if err := ks.geluFwd.Launch(elementwise(n), xc, y, int64(n), form); err != nil {
		return grad.Const(array.Failed(err))
	}
	return grad.Func("GELU", y, []*grad.Var{x}, func(g *array.Array) []*array.Array {
		dx := mk.Empty(in, xv.Shape()...)
		if err := ks.geluBwd.Launch(elementwise(n), xc, cast(g, out).Contiguous(), dx, int64(n), form); err != nil {
			dx.Close()
			return []*array.Array{array.Failed(err)}
		}
		return []*array.Array{dx}
	})
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
