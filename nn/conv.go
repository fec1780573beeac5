package nn

import (
	"cmp"
	"fmt"
	"math"
	"sync"

	"github.com/gocu-dev/gocu"
	"github.com/gocu-dev/gocu/array"
	"github.com/gocu-dev/gocu/grad"
)

// Conv2d is a 2-D convolution (a cross-correlation) over (N, C, H, W) or
// unbatched (C, H, W) inputs, as PyTorch's nn.Conv2d: Weight has torch's
// layout (Out, In/Groups, KH, KW), Bias (Out) or nil. Zero Stride and
// Dilation entries and a zero Groups mean 1, so that the zero options are
// torch's defaults.
//
// It is computed as MiniTorch's module 4 does, from operations that
// already have gradients: one gather (im2col) takes every window of the
// input into columns (N, In·KH·KW, Ho·Wo), and one batched product with
// the weight as an (Out, In·KH·KW) matrix (one product per group, with
// groups) gives the output. Backward follows the same operations in
// reverse: products and a scatter-add.
type Conv2d struct {
	In, Out  int
	Kernel   [2]int
	Stride   [2]int
	Padding  [2]int
	Dilation [2]int
	Groups   int
	Weight   *grad.Var
	Bias     *grad.Var
}

// Conv2dOptions are nn.Conv2d's arguments after the kernel size; the zero
// value is torch's default (stride 1, no padding, dilation 1, one group,
// a bias).
type Conv2dOptions struct {
	Stride, Padding, Dilation [2]int // (height, width); zero stride and dilation mean 1
	Groups                    int    // zero means 1
	NoBias                    bool   // torch's bias=False
}

// NewConv2d returns a float32 Conv2d with a square kernel, one stride and
// one padding (stride 0 means 1) on rng's device, initialised as
// PyTorch's default. NewConv2dWith takes every option.
func NewConv2d(rng *array.RNG, in, out, k, stride, padding int) *Conv2d {
	return NewConv2dWith(rng, in, out, [2]int{k, k}, &Conv2dOptions{
		Stride: [2]int{stride, stride}, Padding: [2]int{padding, padding}})
}

// NewConv2dWith returns a float32 Conv2d with a kernel (height, width) and
// options o (nil: the defaults) on rng's device, initialised as PyTorch's
// default: weights and bias uniform in ±1/√(In/Groups·KH·KW). Forward
// reports options that torch refuses.
func NewConv2dWith(rng *array.RNG, in, out int, kernel [2]int, o *Conv2dOptions) *Conv2d {
	if o == nil {
		o = &Conv2dOptions{}
	}
	g := cmp.Or(o.Groups, 1)
	w, b := convParams(rng, out, in/max(g, 1), !o.NoBias, kernel[0], kernel[1])
	return &Conv2d{In: in, Out: out, Kernel: kernel, Stride: o.Stride, Padding: o.Padding,
		Dilation: o.Dilation, Groups: o.Groups, Weight: w, Bias: b}
}

// convParams draws a convolution's weight (out, inG, k...) and bias as
// torch's reset_parameters.
func convParams(rng *array.RNG, out, inG int, bias bool, k ...int) (w, b *grad.Var) {
	fan := inG
	for _, d := range k {
		fan *= d
	}
	if fan <= 0 || out <= 0 {
		// Forward reports the bad channels or kernel; make no weights of
		// a negative shape here.
		return grad.Const(array.Failed(fmt.Errorf("nn: convolution with %d output and %d input channels per group and kernel %v", out, inG, k))), nil
	}
	bound := 1 / math.Sqrt(float64(fan))
	w = grad.Param(rng.Uniform(array.Float32, -bound, bound, append([]int{out, inG}, k...)...))
	if bias {
		b = grad.Param(rng.Uniform(array.Float32, -bound, bound, out))
	}
	return w, b
}

// Forward implements Module.
func (c *Conv2d) Forward(x *grad.Var) *grad.Var {
	g := window{k: c.Kernel, s: c.Stride, p: c.Padding, d: c.Dilation}
	return conv2d("Conv2d", x, c.Weight, c.Bias, c.In, c.Out, cmp.Or(c.Groups, 1), g)
}

// Named implements Module: "weight" and "bias".
func (c *Conv2d) Named() []Named { return convNamed(c.Weight, c.Bias) }

func convNamed(w, b *grad.Var) []Named {
	ns := []Named{{"weight", w}}
	if b != nil {
		ns = append(ns, Named{"bias", b})
	}
	return ns
}

// Conv1d is a 1-D convolution over (N, C, L) or unbatched (C, L) inputs,
// as PyTorch's nn.Conv1d: Weight has shape (Out, In/Groups, Kernel), Bias
// (Out) or nil. It is Conv2d's computation with a kernel of height 1.
type Conv1d struct {
	In, Out                                   int
	Kernel, Stride, Padding, Dilation, Groups int // zero Stride, Dilation and Groups mean 1
	Weight                                    *grad.Var
	Bias                                      *grad.Var
}

// Conv1dOptions are nn.Conv1d's arguments after the kernel size; the zero
// value is torch's default.
type Conv1dOptions struct {
	Stride, Padding, Dilation int // zero stride and dilation mean 1
	Groups                    int // zero means 1
	NoBias                    bool
}

// NewConv1d returns a float32 Conv1d with options o (nil: the defaults)
// on rng's device, initialised as PyTorch's default.
func NewConv1d(rng *array.RNG, in, out, kernel int, o *Conv1dOptions) *Conv1d {
	if o == nil {
		o = &Conv1dOptions{}
	}
	g := cmp.Or(o.Groups, 1)
	w, b := convParams(rng, out, in/max(g, 1), !o.NoBias, kernel)
	return &Conv1d{In: in, Out: out, Kernel: kernel, Stride: o.Stride, Padding: o.Padding,
		Dilation: o.Dilation, Groups: o.Groups, Weight: w, Bias: b}
}

// Forward implements Module.
func (c *Conv1d) Forward(x *grad.Var) *grad.Var {
	g := window{k: [2]int{1, c.Kernel}, s: [2]int{1, c.Stride}, d: [2]int{1, c.Dilation}, p: [2]int{0, c.Padding}}
	groups := cmp.Or(c.Groups, 1)
	if fail := convCheck("Conv1d", c.In, c.Out, groups, g.norm([2]int{}), 1); fail != nil {
		return fail
	}
	if !c.Weight.DType().Valid() {
		return c.Weight
	}
	if ws := c.Weight.Shape(); len(ws) != 3 || ws[0] != c.Out || ws[1] != c.In/groups || ws[2] != c.Kernel {
		return badInput("Conv1d", fmt.Sprintf("weight of shape %v, want (%d, %d, %d)", ws, c.Out, c.In/groups, c.Kernel))
	}
	if !x.DType().Valid() {
		return x
	}
	if s := x.Shape(); (len(s) != 2 && len(s) != 3) || s[len(s)-2] != c.In {
		return badInput("Conv1d", fmt.Sprintf("input of shape %v, want (N, %d, L) or (%d, L)", s, c.In, c.In))
	}
	y := conv2d("Conv1d", x.ExpandDims(-2), c.Weight.ExpandDims(2), c.Bias, c.In, c.Out, groups, g)
	if !y.DType().Valid() {
		return y
	}
	return y.Squeeze(-2)
}

// Named implements Module: "weight" and "bias".
func (c *Conv1d) Named() []Named { return convNamed(c.Weight, c.Bias) }

// window is the geometry of a 2-D sliding window: kernel, stride,
// padding and dilation, (height, width) each.
type window struct {
	k, s, p, d [2]int
}

// norm replaces zero strides and dilations by 1, and a zero stride by
// def when def is not zero (the pools' stride defaults to the kernel).
func (g window) norm(def [2]int) window {
	for i := range 2 {
		g.s[i] = cmp.Or(g.s[i], def[i], 1)
		g.d[i] = cmp.Or(g.d[i], 1)
	}
	return g
}

// check reports a geometry torch refuses; dims names the axes used (1
// for Conv1d: only the width).
func (g window) check(layer string, dims int) *grad.Var {
	pick := func(a [2]int) any {
		if dims == 1 {
			return a[1]
		}
		return fmt.Sprintf("(%d, %d)", a[0], a[1])
	}
	for i := range 2 {
		if g.k[i] < 1 || g.s[i] < 1 || g.d[i] < 1 || g.p[i] < 0 {
			return badHyper(layer, "kernel %v, stride %v, padding %v, dilation %v: want a kernel, stride and dilation >= 1 and padding >= 0", pick(g.k), pick(g.s), pick(g.p), pick(g.d))
		}
	}
	return nil
}

// out returns the output size of an input h×w, or a failed Var when the
// dilated kernel is larger than the padded input.
func (g window) out(layer string, h, w int) (int, int, *grad.Var) {
	var o [2]int
	for i, n := range [2]int{h, w} {
		span := g.d[i]*(g.k[i]-1) + 1
		if span > n+2*g.p[i] {
			return 0, 0, badInput(layer, fmt.Sprintf("kernel %dx%d (dilation %dx%d) larger than the padded input %dx%d",
				g.k[0], g.k[1], g.d[0], g.d[1], h+2*g.p[0], w+2*g.p[1]))
		}
		o[i] = (n+2*g.p[i]-span)/g.s[i] + 1
	}
	return o[0], o[1], nil
}

// unfoldKey names a cached index array of unfold.
type unfoldKey struct {
	dev  *gocu.Device
	h, w int
	g    window
}

// unfoldIndex caches, per device and geometry, the flat positions of the
// window elements, (KH·KW, Ho·Wo) int32, with h·w for padding; pad says
// whether any element is padding.
var unfoldIndex sync.Map // unfoldKey -> unfoldIdx

type unfoldIdx struct {
	a   *array.Array
	pad bool
}

func windowIndex(dev *gocu.Device, h, w, ho, wo int, g window) unfoldIdx {
	key := unfoldKey{dev, h, w, g}
	if v, ok := unfoldIndex.Load(key); ok {
		return v.(unfoldIdx)
	}
	idx := make([]int32, 0, g.k[0]*g.k[1]*ho*wo)
	pad := false
	for i := range g.k[0] {
		for j := range g.k[1] {
			for oy := range ho {
				y := oy*g.s[0] - g.p[0] + i*g.d[0]
				for ox := range wo {
					x := ox*g.s[1] - g.p[1] + j*g.d[1]
					if y < 0 || y >= h || x < 0 || x >= w {
						idx = append(idx, int32(h*w))
						pad = true
						continue
					}
					idx = append(idx, int32(y*w+x))
				}
			}
		}
	}
	u := unfoldIdx{array.FromSliceOn(dev, idx, g.k[0]*g.k[1], ho*wo).Persist(), pad}
	if u.a.Err() != nil {
		return u // not cached: a later call tries again
	}
	got, _ := unfoldIndex.LoadOrStore(key, u)
	return got.(unfoldIdx)
}

// unfold gathers every window of x (N, C, H, W) into (N, C, KH·KW, Ho·Wo),
// with fill where a window covers padding: torch's F.unfold before its
// last reshape. The gradient is a scatter-add into x's shape.
func unfold(layer string, x *grad.Var, g window, fill float64) (cols *grad.Var, ho, wo int, fail *grad.Var) {
	s := x.Shape()
	n, c, h, w := s[0], s[1], s[2], s[3]
	ho, wo, fail = g.out(layer, h, w)
	if fail != nil {
		return nil, 0, 0, fail
	}
	if h*w >= math.MaxInt32 {
		return nil, 0, 0, badInput(layer, fmt.Sprintf("input of %dx%d elements per channel: at most 2^31-2", h, w))
	}
	dev := x.Value().Device()
	u := windowIndex(dev, h, w, ho, wo, g)
	flat := x.Reshape(n, c, h*w)
	if u.pad {
		flat = grad.Concat(2, flat, grad.Const(array.On(dev).Full(x.DType(), fill, n, c, 1)))
	}
	return flat.Take(u.a, 2), ho, wo, nil
}

// batched returns x as (N, C, H, W) and whether it was unbatched (C, H,
// W), or a failed Var naming the wanted shape.
func batched(layer string, x *grad.Var, c int) (*grad.Var, bool, *grad.Var) {
	if !x.DType().Valid() {
		return nil, false, x
	}
	s := x.Shape()
	if (len(s) != 3 && len(s) != 4) || (c > 0 && s[len(s)-3] != c) {
		ch := "C"
		if c > 0 {
			ch = fmt.Sprint(c)
		}
		return nil, false, badInput(layer, fmt.Sprintf("input of shape %v, want (N, %s, H, W) or (%s, H, W)", s, ch, ch))
	}
	if len(s) == 3 {
		return x.ExpandDims(0), true, nil
	}
	return x, false, nil
}

// convCheck reports channels, groups or a geometry torch refuses; dims
// is 1 for Conv1d, whose messages name only the width.
func convCheck(layer string, in, out, groups int, g window, dims int) *grad.Var {
	if fail := g.check(layer, dims); fail != nil {
		return fail
	}
	if groups < 1 || in < 1 || out < 1 || in%groups != 0 || out%groups != 0 {
		return badHyper(layer, "%d input and %d output channels in %d groups: want channels >= 1 that are multiples of groups >= 1", in, out, groups)
	}
	return nil
}

// conv2d is Conv2d's computation, and Conv1d's on inputs of height 1.
func conv2d(layer string, x, w, b *grad.Var, in, out, groups int, g window) *grad.Var {
	g = g.norm([2]int{})
	if fail := convCheck(layer, in, out, groups, g, 2); fail != nil {
		return fail
	}
	if !w.DType().Valid() {
		return w
	}
	kh, kw := g.k[0], g.k[1]
	if ws := w.Shape(); len(ws) != 4 || ws[0] != out || ws[1] != in/groups || ws[2] != kh || ws[3] != kw {
		return badInput(layer, fmt.Sprintf("weight of shape %v, want (%d, %d, %d, %d)", ws, out, in/groups, kh, kw))
	}
	if b != nil && (b.Ndim() != 1 || b.Shape()[0] != out) {
		return badInput(layer, fmt.Sprintf("bias of shape %v, want (%d)", b.Shape(), out))
	}
	x4, single, fail := batched(layer, x, in)
	if fail != nil {
		return fail
	}
	cols, ho, wo, fail := unfold(layer, x4, g, 0)
	if fail != nil {
		return fail
	}
	n, k := x4.Shape()[0], in/groups*kh*kw
	var y *grad.Var
	if groups == 1 {
		y = w.Reshape(out, k).MatMul(cols.Reshape(n, k, ho*wo)) // (N, Out, Ho·Wo)
	} else {
		cg := cols.Reshape(n, groups, k, ho*wo)
		y = w.Reshape(groups, out/groups, k).MatMul(cg) // (N, G, Out/G, Ho·Wo)
	}
	y = y.Reshape(n, out, ho, wo)
	if b != nil {
		y = y.Add(b.Reshape(out, 1, 1))
	}
	if single {
		y = y.Squeeze(0)
	}
	return y
}

// Pad2d pads the last two axes of x with p zeros on each side.
func Pad2d(x *grad.Var, p int) *grad.Var {
	if p <= 0 {
		return x
	}
	s := x.Shape()
	r := len(s)
	if r < 2 {
		return badInput("Pad2d", fmt.Sprintf("input of shape %v has fewer than 2 axes", s))
	}
	m := array.On(x.Value().Device())
	zs := append(append([]int{}, s[:r-2]...), p, s[r-1])
	zh := grad.Const(m.Zeros(x.DType(), zs...))
	x = grad.Concat(r-2, zh, x, zh)
	zs = append(append([]int{}, s[:r-2]...), s[r-2]+2*p, p)
	zw := grad.Const(m.Zeros(x.DType(), zs...))
	return grad.Concat(r-1, zw, x, zw)
}

// badInput returns a failed Var whose error names the layer.
func badInput(layer, msg string) *grad.Var {
	return grad.Const(array.Failed(fmt.Errorf("nn: %s: %s", layer, msg)))
}
