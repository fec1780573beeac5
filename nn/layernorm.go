package nn

import (
	"slices"

	"github.com/gocu-dev/gocu/array"
	"github.com/gocu-dev/gocu/grad"
)

// LayerNorm normalises over the last len(Shape) axes, as PyTorch's
// nn.LayerNorm: (x - mean)/√(var + Eps)·Weight + Bias, with the biased
// variance. Weight starts at ones and Bias at zeros.
type LayerNorm struct {
	Shape  []int
	Eps    float64
	Weight *grad.Var
	Bias   *grad.Var
}

// NewLayerNorm returns a float32 LayerNorm on m's device over the trailing
// axes of the given shape, with Eps 1e-5.
func NewLayerNorm(m *array.Maker, shape ...int) *LayerNorm {
	return &LayerNorm{
		Shape:  slices.Clone(shape),
		Eps:    1e-5,
		Weight: grad.Param(m.Ones(array.Float32, shape...).Copy()),
		Bias:   grad.Param(m.Zeros(array.Float32, shape...).Copy()),
	}
}

// Forward implements Module.
func (l *LayerNorm) Forward(x *grad.Var) *grad.Var {
	axes := make([]int, len(l.Shape))
	for i := range axes {
		axes[i] = -1 - i
	}
	mean := x.Reduce(array.OpMean, true, axes...)
	xc := x.Sub(mean)
	v := xc.Square().Reduce(array.OpMean, true, axes...)
	return xc.Div(v.Add(l.Eps).Sqrt()).Mul(l.Weight).Add(l.Bias)
}

// Named implements Module: "weight" and "bias".
func (l *LayerNorm) Named() []Named { return []Named{{"weight", l.Weight}, {"bias", l.Bias}} }
