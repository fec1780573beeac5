package nn

import (
	"fmt"
	"math"

	"github.com/gocu-dev/gocu"
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
	form := m.form()
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

// BiasGELU is GELU{Tanh: tanh, Out: out}.Forward(x + b), b (C) added
// along x's last axis, with out 0 meaning x's dtype: a Linear layer's
// bias and its activation, as LinearHalf without bias feeds it. On a GPU,
// float32 or bfloat16 x runs one fused kernel forward and one backward
// that also sums the bias's gradient (in float32) per block.
func BiasGELU(x, b *grad.Var, tanh bool, out array.DType) *grad.Var {
	if !x.DType().Valid() {
		return x
	}
	if out == 0 {
		out = x.DType()
	}
	m := GELU{Tanh: tanh, Out: out}
	if b == nil {
		return m.Forward(x)
	}
	xs, bs := x.Shape(), b.Shape()
	if len(xs) == 0 || len(bs) != 1 || bs[0] != xs[len(xs)-1] {
		return badInput("BiasGELU", fmt.Sprintf("bias of shape %v for input of shape %v: want one value per element of the last axis", bs, xs))
	}
	if y := m.fusedBias(x, b); y != nil {
		return y
	}
	return m.Forward(x.Add(b))
}

// vecBlock is the block size of the bias and GELU kernels for rows of c:
// a thread per 8 columns where the kernels move 16 bytes at once.
func vecBlock(c int) int {
	if c%8 != 0 {
		return 256
	}
	return min((c/8+31)/32*32, 1024)
}

// form is the fused kernels' flag for the tanh approximation.
func (m GELU) form() int32 {
	if m.Tanh {
		return 1
	}
	return 0
}

// fusedBias is BiasGELU's fused path, nil where it does not apply.
func (m GELU) fusedBias(x, b *grad.Var) *grad.Var {
	if m.Out != 0 && !m.Out.IsFloating() {
		return nil
	}
	xv, bv := x.Value(), b.Value()
	dev, in, out := xv.Device(), xv.DType(), m.Out
	n := xv.Size()
	c := bv.Size()
	if !fusedOK(dev, in, out) || bv.DType() != array.Float32 || bv.Device() != dev || n == 0 {
		return nil
	}
	ks, err := fused(dev, in, out)
	if err != nil {
		return grad.Const(array.Failed(err))
	}
	form := m.form()
	mk := array.On(dev)
	xc, bc := xv.Contiguous(), bv.Contiguous()
	y := mk.Empty(out, xv.Shape()...)
	if err := ks.biasGeluFwd.Launch(gocu.Config{Grid: grid1(min(max(n/c, 1), 65535*8)), Block: grid1(vecBlock(c))}, xc, bc, y, int64(n), int32(c), form); err != nil {
		return grad.Const(array.Failed(err))
	}
	return grad.Func("BiasGELU", y, []*grad.Var{x, b}, func(g *array.Array) []*array.Array {
		rows := n / c
		block := vecBlock(c)
		per := max((rows+1023)/1024, 4) // about 1024 blocks of rows, to fill the GPU
		blocks := (rows + per - 1) / per
		dx := mk.Empty(in, xv.Shape()...)
		part := mk.Empty(array.Float32, blocks, c)
		db := mk.Empty(array.Float32, c)
		cfg := gocu.Config{Grid: grid1(blocks), Block: grid1(block)}
		gc := cast(g, out)
		gk := gc.Contiguous()
		err := ks.biasGeluBwd.Launch(cfg, xc, bc, gk, dx, part, int64(rows), int32(c), int32(per), form)
		if err == nil {
			err = ks.colsum.Launch(gocu.Config{Grid: grid1((c + 31) / 32), Block: grid1(256)}, part, db, int32(blocks), int32(c))
		}
		// Freed in stream order, after the kernels; the backward pass runs
		// once, so what the forward pass kept for it goes too.
		closeAll(part, gk, xc, bc)
		drop(gc, g)
		if err != nil {
			f := array.Failed(err)
			return []*array.Array{f, f}
		}
		return []*array.Array{dx, db}
	})
}
