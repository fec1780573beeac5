package nn

import (
	"cmp"
	"fmt"
	"math"

	"github.com/gocu-dev/gocu/array"
	"github.com/gocu-dev/gocu/grad"
)

// Conv2d is a 2-D convolution over (N, C, H, W) inputs, as PyTorch's
// nn.Conv2d with square kernels, one stride and zero padding on every
// side: Weight has shape (Out, In, K, K), Bias (Out). It is computed as
// MiniTorch's module 4 does, from operations that already have gradients:
// the K·K shifted (and strided) views of the padded input are stacked into
// columns, (N, In·K·K, Ho·Wo), and one batched product with the weight as
// an (Out, In·K·K) matrix gives the output; Backward follows the same
// operations in reverse.
type Conv2d struct {
	In, Out, K, Stride, Padding int
	Weight                      *grad.Var
	Bias                        *grad.Var
}

// NewConv2d returns a float32 Conv2d on rng's device, initialised as
// PyTorch's default (uniform in ±1/√(In·K·K)). stride 0 means 1.
func NewConv2d(rng *array.RNG, in, out, k, stride, padding int) *Conv2d {
	fan := in * k * k
	bound := 1 / math.Sqrt(float64(max(fan, 1)))
	return &Conv2d{
		In: in, Out: out, K: k, Stride: cmp.Or(stride, 1), Padding: padding,
		Weight: grad.Param(rng.Uniform(array.Float32, -bound, bound, out, in, k, k)),
		Bias:   grad.Param(rng.Uniform(array.Float32, -bound, bound, out)),
	}
}

// Forward implements Module.
func (c *Conv2d) Forward(x *grad.Var) *grad.Var {
	if c.Stride < 1 || c.Padding < 0 || c.K < 1 {
		return badInput("Conv2d", fmt.Sprintf("kernel size %d, stride %d, padding %d: want a kernel and stride >= 1 and padding >= 0", c.K, c.Stride, c.Padding))
	}
	if x.Ndim() != 4 || x.Shape()[1] != c.In {
		return badInput("Conv2d", fmt.Sprintf("input of shape %v, want (N, %d, H, W)", x.Shape(), c.In))
	}
	if c.Padding > 0 {
		x = Pad2d(x, c.Padding)
	}
	s := x.Shape()
	n, h, w := s[0], s[2], s[3]
	cols, ho, wo := windows(x, c.K, c.Stride)
	if cols == nil {
		return badInput("Conv2d", fmt.Sprintf("kernel %d larger than the padded input %dx%d", c.K, h, w))
	}
	cols = cols.Reshape(n, c.In*c.K*c.K, ho*wo)
	y := c.Weight.Reshape(c.Out, c.In*c.K*c.K).MatMul(cols) // (N, Out, Ho·Wo)
	y = y.Reshape(n, c.Out, ho, wo)
	if c.Bias != nil {
		y = y.Add(c.Bias.Reshape(c.Out, 1, 1))
	}
	return y
}

// Named implements Module: "weight" and "bias".
func (c *Conv2d) Named() []Named {
	ns := []Named{{"weight", c.Weight}}
	if c.Bias != nil {
		ns = append(ns, Named{"bias", c.Bias})
	}
	return ns
}

// windows stacks the k·k shifted views of x (N, C, H, W) taken with the
// stride: (N, C, k·k, Ho, Wo), or nil when k exceeds H or W.
func windows(x *grad.Var, k, stride int) (*grad.Var, int, int) {
	h, w := x.Shape()[2], x.Shape()[3]
	if k > h || k > w || k < 1 {
		return nil, 0, 0
	}
	ho, wo := (h-k)/stride+1, (w-k)/stride+1
	views := make([]*grad.Var, 0, k*k)
	for i := range k {
		for j := range k {
			views = append(views, x.Slice(array.All, array.All,
				array.S(i, i+stride*(ho-1)+1, stride), array.S(j, j+stride*(wo-1)+1, stride)))
		}
	}
	return grad.Stack(2, views...), ho, wo
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

// MaxPool2d takes the maximum over K×K windows of (N, C, H, W) inputs,
// moved by Stride (K when 0), as PyTorch's nn.MaxPool2d without padding;
// the gradient goes to the first maximum of each window.
type MaxPool2d struct {
	stateless
	K, Stride int
}

// NewMaxPool2d returns a MaxPool2d with stride k.
func NewMaxPool2d(k int) *MaxPool2d { return &MaxPool2d{K: k, Stride: k} }

// Forward implements Module.
func (m *MaxPool2d) Forward(x *grad.Var) *grad.Var {
	if x.Ndim() != 4 {
		return badInput("MaxPool2d", fmt.Sprintf("input of shape %v, want (N, C, H, W)", x.Shape()))
	}
	s := m.Stride
	if s <= 0 {
		s = m.K
	}
	win, _, _ := windows(x, m.K, s)
	if win == nil {
		return badInput("MaxPool2d", fmt.Sprintf("kernel %d larger than the input %dx%d", m.K, x.Shape()[2], x.Shape()[3]))
	}
	return win.Max(2)
}

// badInput returns a failed Var whose error names the layer.
func badInput(layer, msg string) *grad.Var {
	return grad.Const(array.Failed(fmt.Errorf("nn: %s: %s", layer, msg)))
}
