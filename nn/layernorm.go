package nn

import (
	"slices"

	"github.com/gocu-dev/gocu"
	"github.com/gocu-dev/gocu/array"
	"github.com/gocu-dev/gocu/grad"
)

// LayerNorm normalises over the last len(Shape) axes, as PyTorch's
// nn.LayerNorm: (x - mean)/√(var + Eps)·Weight + Bias, with the biased
// variance. Weight starts at ones and Bias at zeros.
//
// On a GPU, float32 or bfloat16 x with float32 Weight and Bias runs one
// fused kernel forward and two backward, with float32 statistics.
type LayerNorm struct {
	Shape  []int
	Eps    float64
	Weight *grad.Var
	Bias   *grad.Var

	// Out, when set, is the result's dtype (array.BFloat16 feeds a
	// bfloat16 product without a cast); zero leaves it as the arithmetic
	// promotes x, Weight and Bias.
	Out array.DType
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
	if l.Out != 0 && !l.Out.IsFloating() {
		return badHyper("LayerNorm", "Out %v: want a float dtype, or 0", l.Out)
	}
	if y := l.fused(x); y != nil {
		return y
	}
	axes := make([]int, len(l.Shape))
	for i := range axes {
		axes[i] = -1 - i
	}
	mean := x.Reduce(array.OpMean, true, axes...)
	xc := x.Sub(mean)
	v := xc.Square().Reduce(array.OpMean, true, axes...)
	y := xc.Div(v.Add(l.Eps).Sqrt()).Mul(l.Weight).Add(l.Bias)
	if l.Out != 0 {
		y = y.AsType(l.Out)
	}
	return y
}

// lnMaxRow is the longest row the fused kernels take: the backward pass
// keeps 2 float32 sums per column in 48 KiB of shared memory.
const lnMaxRow = 6144

// fused runs the fused kernels where they apply, and returns nil where
// they do not.
func (l *LayerNorm) fused(x *grad.Var) *grad.Var {
	if x == nil || l.Weight == nil || l.Bias == nil || !x.DType().Valid() {
		return nil
	}
	xv, w, b := x.Value(), l.Weight.Value(), l.Bias.Value()
	dev := xv.Device()
	out := l.Out
	if out == 0 {
		out = array.Float32
	}
	if !fusedOK(dev, xv.DType(), out) || w.DType() != array.Float32 || b.DType() != array.Float32 ||
		w.Device() != dev || b.Device() != dev || !slices.Equal(w.Shape(), l.Shape) || !slices.Equal(b.Shape(), l.Shape) {
		return nil
	}
	xs := xv.Shape()
	k := len(l.Shape)
	if len(xs) < k || !slices.Equal(xs[len(xs)-k:], l.Shape) {
		return nil
	}
	c := 1
	for _, d := range l.Shape {
		c *= d
	}
	n := xv.Size() / max(c, 1)
	if c == 0 || c > lnMaxRow || n == 0 {
		return nil
	}
	ks, err := fused(dev, xv.DType(), out)
	if err != nil {
		return grad.Const(array.Failed(err))
	}
	m := array.On(dev)
	xc, wc, bc := xv.Contiguous(), w.Contiguous(), b.Contiguous()
	y := m.Empty(out, xs...)
	mean, rstd := m.Empty(array.Float32, n), m.Empty(array.Float32, n)
	const warps = 8
	cfg := gocu.Config{Grid: grid1((n + warps - 1) / warps), Block: grid1(32 * warps)}
	if err := ks.lnFwd.Launch(cfg, xc, wc, bc, y, mean, rstd, int64(n), int32(c), float32(l.Eps), int32(0)); err != nil {
		return grad.Const(array.Failed(err))
	}
	return grad.Func("LayerNorm", y, []*grad.Var{x, l.Weight, l.Bias}, func(g *array.Array) []*array.Array {
		gc := cast(g, out).Contiguous()
		dx := m.Empty(xv.DType(), xs...)
		dw, db := m.Empty(array.Float32, l.Shape...), m.Empty(array.Float32, l.Shape...)
		cfg := gocu.Config{Grid: grid1(min((n+warps-1)/warps, 1024)), Block: grid1(32 * warps)}
		err := ks.lnBwd.Launch(cfg, gc, xc, wc, mean, rstd, dx, int64(n), int32(c), int32(0))
		// About 1024 blocks of 32 columns by chunks of rows, each chunk
		// at least 64 rows.
		tiles := (c + 31) / 32
		chunks := max(1, min((1024+tiles-1)/tiles, n/64))
		part := m.Empty(array.Float32, chunks, 2*c)
		if err == nil {
			cfg = gocu.Config{Grid: grid1(tiles * chunks), Block: grid1(256)}
			err = ks.lnDwdb.Launch(cfg, gc, xc, mean, rstd, part, int64(n), int32(c), int32(chunks))
		}
		if err == nil {
			cfg = gocu.Config{Grid: grid1((2*c + 31) / 32), Block: grid1(256)}
			err = ks.lnWsum.Launch(cfg, part, dw, db, int32(chunks), int32(c))
		}
		part.Close() // freed in stream order, after the kernels
		if err != nil {
			f := array.Failed(err)
			return []*array.Array{f, f, f}
		}
		return []*array.Array{dx, dw, db}
	})
}

// Named implements Module: "weight" and "bias".
func (l *LayerNorm) Named() []Named { return []Named{{"weight", l.Weight}, {"bias", l.Bias}} }

// fused runs LayerNorm's fused kernels for RMSNorm (rms set: the mean is
// 0, the bias zeros) where they apply, and returns nil where they do not.
// The result has the composed form's dtype: x's, promoted with Weight's.
func (l *RMSNorm) fused(x *grad.Var, eps float64) *grad.Var {
	xv := x.Value()
	dev, in := xv.Device(), xv.DType()
	out := in
	var wv *array.Array
	if l.Weight != nil {
		wv = l.Weight.Value()
		if wv.DType() != array.Float32 || wv.Device() != dev || !slices.Equal(wv.Shape(), l.Shape) {
			return nil
		}
		out = array.Promote(in, wv.DType())
	}
	if !fusedOK(dev, in, out) {
		return nil
	}
	c := 1
	for _, d := range l.Shape {
		c *= d
	}
	n := xv.Size() / max(c, 1)
	if c == 0 || c > lnMaxRow || n == 0 {
		return nil
	}
	ks, err := fused(dev, in, out)
	if err != nil {
		return grad.Const(array.Failed(err))
	}
	m := array.On(dev)
	xc, zeros := xv.Contiguous(), m.Zeros(array.Float32, c).Contiguous()
	wc := m.Ones(array.Float32, c).Contiguous()
	if wv != nil {
		wc = wv.Contiguous().Reshape(c)
	}
	xs := xv.Shape()
	y := m.Empty(out, xs...)
	mean, rstd := m.Empty(array.Float32, n), m.Empty(array.Float32, n)
	const warps = 8
	cfg := gocu.Config{Grid: grid1((n + warps - 1) / warps), Block: grid1(32 * warps)}
	if err := ks.lnFwd.Launch(cfg, xc, wc, zeros, y, mean, rstd, int64(n), int32(c), float32(eps), int32(1)); err != nil {
		return grad.Const(array.Failed(err))
	}
	in1 := []*grad.Var{x}
	if l.Weight != nil {
		in1 = append(in1, l.Weight)
	}
	return grad.Func("RMSNorm", y, in1, func(g *array.Array) []*array.Array {
		gc := cast(g, out).Contiguous()
		var dx, dw *array.Array
		cfg := gocu.Config{Grid: grid1(min((n+warps-1)/warps, 1024)), Block: grid1(32 * warps)}
		var err error
		if x.RequiresGrad() {
			dx = m.Empty(in, xs...)
			err = ks.lnBwd.Launch(cfg, gc, xc, wc, mean, rstd, dx, int64(n), int32(c), int32(1))
		}
		if err == nil && l.Weight != nil && l.Weight.RequiresGrad() {
			// The mean written forward is 0: the sums of dy·x̂ are the
			// weight's gradient; the bias's sums go unused.
			tiles := (c + 31) / 32
			chunks := max(1, min((1024+tiles-1)/tiles, n/64))
			part := m.Empty(array.Float32, chunks, 2*c)
			db := m.Empty(array.Float32, c)
			dw = m.Empty(array.Float32, l.Shape...)
			cfg = gocu.Config{Grid: grid1(tiles * chunks), Block: grid1(256)}
			err = ks.lnDwdb.Launch(cfg, gc, xc, mean, rstd, part, int64(n), int32(c), int32(chunks))
			if err == nil {
				cfg = gocu.Config{Grid: grid1((2*c + 31) / 32), Block: grid1(256)}
				err = ks.lnWsum.Launch(cfg, part, dw, db, int32(chunks), int32(c))
			}
			part.Close() // freed in stream order, after the kernels
			db.Close()
		}
		if err != nil {
			f := array.Failed(err)
			return []*array.Array{f, f}
		}
		return []*array.Array{dx, dw}
	})
}
