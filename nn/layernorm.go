package nn

import (
	"slices"

	"github.com/gocu-dev/gocu"
	"github.com/gocu-dev/gocu/array"
	"github.com/gocu-dev/gocu/cuda"
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
	c, n, ok := fusedRows(l.Shape, xv.Size())
	if !ok {
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
		gc := cast(g, out)
		gk := gc.Contiguous()
		dx, dw, db, err := normBackward(ks, m, gk, xc, wc, mean, rstd, xv.DType(), l.Shape, n, c, false)
		// The backward pass runs once: what it read is freed in stream
		// order, after its kernels.
		closeAll(gk, xc, wc, bc, mean, rstd)
		drop(gc, g)
		if err != nil {
			f := array.Failed(err)
			return []*array.Array{f, f, f}
		}
		return []*array.Array{dx, dw, db}
	})
}

// lnAccRow is the longest row whose weight and bias gradients gocu_ln_bwd
// sums itself (2048 floats of shared memory a warp).
const lnAccRow = 1024

// normBackward launches the backward kernels of LayerNorm (rms: RMSNorm's,
// the mean 0) for the gradient gc of the result: dx in dtype dt, and the
// float32 sums dw of dy·x̂ and db of dy, of the normalised shape.
func normBackward(ks *fusedKernels, m *array.Maker, gc, xc, wc, mean, rstd *array.Array, dt array.DType, shape []int, n, c int, rms bool) (dx, dw, db *array.Array, err error) {
	flag := int32(0)
	if rms {
		flag = 1
	}
	dx = m.Empty(dt, xc.Shape()...)
	dw, db = m.Empty(array.Float32, shape...), m.Empty(array.Float32, shape...)
	var part *array.Array
	blocks := 0
	if c <= lnAccRow {
		// dx and each block's column sums in one pass over dy and x: four
		// warps, 32 KiB of shared memory, at most 512 blocks of partials.
		const warps = 4
		blocks = min((n+warps-1)/warps, 512)
		part = m.Empty(array.Float32, blocks, 2*c)
		cfg := gocu.Config{Grid: grid1(blocks), Block: grid1(32 * warps), Shared: warps * 2048 * 4}
		err = ks.lnBwd.Launch(cfg, gc, xc, wc, mean, rstd, dx, part, int64(n), int32(c), flag)
	} else {
		const warps = 8
		cfg := gocu.Config{Grid: grid1(min((n+warps-1)/warps, 1024)), Block: grid1(32 * warps)}
		err = ks.lnBwd.Launch(cfg, gc, xc, wc, mean, rstd, dx, cuda.DevicePtr(0), int64(n), int32(c), flag)
		// About 1024 blocks of 32 columns by chunks of rows, each chunk
		// at least 64 rows.
		tiles := (c + 31) / 32
		blocks = max(1, min((1024+tiles-1)/tiles, n/64))
		part = m.Empty(array.Float32, blocks, 2*c)
		if err == nil {
			cfg = gocu.Config{Grid: grid1(tiles * blocks), Block: grid1(256)}
			err = ks.lnDwdb.Launch(cfg, gc, xc, mean, rstd, part, int64(n), int32(c), int32(blocks))
		}
	}
	if err == nil {
		cfg := gocu.Config{Grid: grid1((2*c + 31) / 32), Block: grid1(256)}
		err = ks.lnWsum.Launch(cfg, part, dw, db, int32(blocks), int32(c))
	}
	part.Close() // freed in stream order, after the kernels
	if err != nil {
		dx.Close()
		dw.Close()
		db.Close()
		return nil, nil, nil, err
	}
	return dx, dw, db, nil
}

// Named implements Module: "weight" and "bias".
func (l *LayerNorm) Named() []Named { return []Named{{"weight", l.Weight}, {"bias", l.Bias}} }

// fusedRows returns the row length c (the normalised shape's size) and
// the row count n of an input of size elements; ok is false where the
// fused kernels do not apply (an empty row or input, a row too long).
func fusedRows(shape []int, size int) (c, n int, ok bool) {
	c = 1
	for _, d := range shape {
		c *= d
	}
	n = size / max(c, 1)
	return c, n, c > 0 && c <= lnMaxRow && n > 0
}

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
	c, n, ok := fusedRows(l.Shape, xv.Size())
	if !ok {
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
		dx, dw, db, err := normBackward(ks, m, cast(g, out).Contiguous(), xc, wc, mean, rstd, in, l.Shape, n, c, true)
		if err != nil {
			f := array.Failed(err)
			return []*array.Array{f, f}
		}
		db.Close() // the sums of dy: RMSNorm has no bias
		if l.Weight == nil {
			dw.Close()
			return []*array.Array{dx}
		}
		return []*array.Array{dx, dw}
	})
}
