package nn

import (
	"fmt"
	"math"
	"sync"

	"github.com/gocu-dev/gocu"
	"github.com/gocu-dev/gocu/array"
	"github.com/gocu-dev/gocu/grad"
)

// MaxPool2d takes the maximum over K×K windows of (N, C, H, W) or
// unbatched (C, H, W) inputs, as PyTorch's nn.MaxPool2d: the windows move
// by Stride (K when 0) over the input padded with Padding -Inf on each
// side (at most K/2, as torch requires), their elements Dilation apart
// (0 means 1). As torch's default ceil_mode=False, a window never starts
// in the bottom or right padding. The gradient goes to the first maximum
// of each window, as torch's.
type MaxPool2d struct {
	stateless
	K, Stride, Padding, Dilation int
}

// NewMaxPool2d returns a MaxPool2d with stride k.
func NewMaxPool2d(k int) *MaxPool2d { return &MaxPool2d{K: k, Stride: k} }

// Forward implements Module.
func (m *MaxPool2d) Forward(x *grad.Var) *grad.Var {
	g := poolWindow(m.K, m.Stride, m.Padding, m.Dilation)
	return pool("MaxPool2d", x, g, func(cols *grad.Var) *grad.Var { return cols.Max(2) }, math.Inf(-1))
}

// AvgPool2d averages over K×K windows of (N, C, H, W) or unbatched
// (C, H, W) inputs, as PyTorch's nn.AvgPool2d: the windows move by Stride
// (K when 0) over the input padded with Padding zeros on each side (at
// most K/2). Each window's sum is divided by K·K, or, with ExcludePad
// (torch's count_include_pad=False), by the number of its elements that
// are not padding. As torch's default ceil_mode=False, a window never
// starts in the bottom or right padding.
type AvgPool2d struct {
	stateless
	K, Stride, Padding int
	ExcludePad         bool
}

// NewAvgPool2d returns an AvgPool2d with stride k.
func NewAvgPool2d(k int) *AvgPool2d { return &AvgPool2d{K: k, Stride: k} }

// Forward implements Module.
func (m *AvgPool2d) Forward(x *grad.Var) *grad.Var {
	g := poolWindow(m.K, m.Stride, m.Padding, 1)
	var h, w int
	if s := x.Shape(); len(s) >= 2 {
		h, w = s[len(s)-2], s[len(s)-1]
	}
	return pool("AvgPool2d", x, g, func(cols *grad.Var) *grad.Var {
		sum := cols.Sum(2) // (N, C, Ho·Wo)
		if !m.ExcludePad || m.Padding == 0 {
			return sum.Mul(1 / float64(m.K*m.K))
		}
		return sum.Div(windowCounts(x.Value().Device(), x.DType(), h, w, g))
	}, 0)
}

// poolWindow is a square pool's geometry, its stride the kernel when 0.
func poolWindow(k, stride, pad, dil int) window {
	sq := func(v int) [2]int { return [2]int{v, v} }
	return window{k: sq(k), s: sq(stride), p: sq(pad), d: sq(dil)}.norm(sq(k))
}

// pool applies reduce to the (N, C, K·K, Ho·Wo) windows of x, padded with
// fill.
func pool(layer string, x *grad.Var, g window, reduce func(cols *grad.Var) *grad.Var, fill float64) *grad.Var {
	if fail := g.check(layer, 2); fail != nil {
		return fail
	}
	if 2*g.p[0] > g.k[0] {
		return badHyper(layer, "padding %d: want at most half the kernel %d", g.p[0], g.k[0])
	}
	x4, single, fail := batched(layer, x, 0)
	if fail != nil {
		return fail
	}
	cols, ho, wo, fail := unfold(layer, x4, g, fill)
	if fail != nil {
		return fail
	}
	s := x4.Shape()
	y := reduce(cols).Reshape(s[0], s[1], ho, wo)
	if single {
		y = y.Squeeze(0)
	}
	return y
}

// windowCounts is the number of elements of each window that are not
// padding, (Ho·Wo) in dtype dt, cached per device and geometry.
func windowCounts(dev *gocu.Device, dt array.DType, h, w int, g window) *array.Array {
	key := poolKey{dev, dt, h, w, g}
	if v, ok := poolCache.Load(key); ok {
		return v.(*array.Array)
	}
	ho, wo, _ := g.out("", h, w)
	n := make([]float64, 0, ho*wo)
	span := func(o, i, n int) float64 {
		lo := o*g.s[i] - g.p[i]
		hi := min(lo+g.d[i]*(g.k[i]-1)+1, n)
		return float64(hi - max(lo, 0))
	}
	for oy := range ho {
		for ox := range wo {
			n = append(n, span(oy, 0, h)*span(ox, 1, w))
		}
	}
	a := array.FromSliceOn(dev, n, ho*wo).AsType(dt).Copy().Persist()
	if a.Err() != nil {
		return a // not cached: a later call tries again
	}
	got, _ := poolCache.LoadOrStore(key, a)
	return got.(*array.Array)
}

// poolKey names a cached constant of AvgPool2d or AdaptiveAvgPool2d.
type poolKey struct {
	dev  *gocu.Device
	dt   array.DType
	h, w int
	g    window
}

var poolCache sync.Map // poolKey -> *array.Array

// AdaptiveAvgPool2d averages (N, C, H, W) or unbatched (C, H, W) inputs
// to the output size Size (height, width), as PyTorch's
// nn.AdaptiveAvgPool2d: output row i averages the input rows from
// floor(i·H/Ho) to ceil((i+1)·H/Ho), and so for columns. A zero entry of
// Size keeps that axis's size (torch's None). It is computed as two
// products with constant averaging matrices, P_h·x·P_wᵀ, whose gradient
// is two products too.
type AdaptiveAvgPool2d struct {
	stateless
	Size [2]int
}

// NewAdaptiveAvgPool2d returns an AdaptiveAvgPool2d to h×w.
func NewAdaptiveAvgPool2d(h, w int) *AdaptiveAvgPool2d {
	return &AdaptiveAvgPool2d{Size: [2]int{h, w}}
}

// Forward implements Module.
func (m *AdaptiveAvgPool2d) Forward(x *grad.Var) *grad.Var {
	const layer = "AdaptiveAvgPool2d"
	if m.Size[0] < 0 || m.Size[1] < 0 {
		return badHyper(layer, "output size %v: want sizes >= 0 (0 keeps the input's)", m.Size)
	}
	x4, single, fail := batched(layer, x, 0)
	if fail != nil {
		return fail
	}
	s := x4.Shape()
	h, w := s[2], s[3]
	if h == 0 || w == 0 {
		return badInput(layer, fmt.Sprintf("input of shape %v: want non-empty spatial axes", x.Shape()))
	}
	ho, wo := m.Size[0], m.Size[1]
	if ho == 0 {
		ho = h
	}
	if wo == 0 {
		wo = w
	}
	var y *grad.Var
	switch {
	case ho == 1 && wo == 1: // global pooling: one reduction
		y = x4.Reduce(array.OpMean, true, 2, 3)
	default:
		y = x4
		if ho != h {
			y = grad.Const(adaptiveMatrix(x, h, ho)).MatMul(y) // (N, C, Ho, W)
		}
		if wo != w {
			y = y.MatMul(grad.Const(adaptiveMatrix(x, w, wo).T())) // (N, C, Ho, Wo)
		}
	}
	if single {
		y = y.Squeeze(0)
	}
	return y
}

// adaptiveMatrix is the (out, n) averaging matrix of adaptive pooling, in
// x's dtype on x's device, cached.
func adaptiveMatrix(x *grad.Var, n, out int) *array.Array {
	dev, dt := x.Value().Device(), x.DType()
	key := poolKey{dev: dev, dt: dt, h: n, w: out, g: window{k: [2]int{-1, -1}}}
	if v, ok := poolCache.Load(key); ok {
		return v.(*array.Array)
	}
	p := make([]float64, out*n)
	for i := range out {
		lo, hi := i*n/out, ((i+1)*n+out-1)/out
		for j := lo; j < hi; j++ {
			p[i*n+j] = 1 / float64(hi-lo)
		}
	}
	a := array.FromSliceOn(dev, p, out, n).AsType(dt).Copy().Persist()
	if a.Err() != nil {
		return a
	}
	got, _ := poolCache.LoadOrStore(key, a)
	return got.(*array.Array)
}
