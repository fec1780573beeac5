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

	// Compute, when set (array.BFloat16 or array.Float16), runs the
	// products in that precision, as torch.autocast does: the input and
	// the float32 master weights are cast to it, the product accumulates
	// in float32 on the tensor cores, and the result (and every gradient
	// that reaches the weights and the input) is float32 again. The zero
	// value computes in the weights' own dtype.
	Compute array.DType
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
func (l *Linear) Forward(x *grad.Var) *grad.Var {
	if l.Compute != 0 && l.Compute != l.Weight.Value().DType() {
		return LinearMixed(x, l.Weight, l.Bias, l.Compute)
	}
	return LinearFunc(x, l.Weight, l.Bias)
}

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

// LinearMixed is LinearFunc with the products computed in dtype c (a
// half-precision type): x and w are cast to c, x·wᵀ accumulates in float32
// and is rounded to c by the matrix engine, then widened back to w's dtype
// before the bias is added. The backward pass computes dx = g·w and
// dw = gᵀ·x in c as well, and returns them in x's and w's own dtypes, so
// that the optimiser updates float32 master weights.
func LinearMixed(x, w, b *grad.Var, c array.DType) *grad.Var {
	return linearMixed("LinearMixed", x, w, b, c, w.DType())
}

// LinearHalf is LinearMixed with the result in c, as torch.autocast's
// linear: x·wᵀ + b rounded to c once, for a consumer that takes c (a
// product, attention, a fused activation) without a float32 copy between.
// The gradients are LinearMixed's; the bias's sums in float32.
func LinearHalf(x, w, b *grad.Var, c array.DType) *grad.Var {
	return linearMixed("LinearHalf", x, w, b, c, c)
}

func linearMixed(name string, x, w, b *grad.Var, c, dt array.DType) *grad.Var {
	xv, wv := x.Value(), w.Value()
	xc, wc := cast(xv, c), cast(wv, c)
	wt := wc.T()
	p := xc.MatMul(wt)
	wt.Close()
	y := p
	if b != nil {
		p32 := cast(p, wv.DType())
		y = p32.Add(b.Value())
		drop(p32, p)
	}
	if z := cast(y, dt); z != y {
		drop(y, p)
		y = z
	}
	// The product's memory stays while y's pending expression reads it.
	drop(p, y)
	in := []*grad.Var{x, w, b}
	return grad.Func(name, y, in, func(g *array.Array) []*array.Array {
		out := wv.Shape()[0]
		gc := cast(g, c)
		var dx, dw, db *array.Array
		if x.RequiresGrad() {
			p := gc.MatMul(wc)
			dx = cast(p, xv.DType())
			drop(p, dx)
		}
		g2, x2 := gc, xc
		if g.Ndim() != 2 {
			g2 = gc.Reshape(-1, out)
			x2 = xc.Reshape(-1, wv.Shape()[1])
		}
		if w.RequiresGrad() {
			g2t := g2.T()
			p := g2t.MatMul(x2)
			dw = cast(p, wv.DType())
			drop(p, dw)
			g2t.Close()
		}
		if b != nil && b.RequiresGrad() {
			gr := g.Reshape(-1, out)
			db = cast(gr, b.DType()).Sum(0)
			gr.Close()
		}
		// The backward pass runs once: the casts this product made for it
		// are no longer needed.
		if g2 != gc {
			g2.Close()
			x2.Close()
		}
		drop(gc, g)
		drop(xc, xv)
		drop(wc, wv)
		return []*array.Array{dx, dw, db}
	})
}

// closeAll closes arrays an operation made for its own use: copies, views,
// saved statistics.
func closeAll(arrs ...*array.Array) {
	for _, a := range arrs {
		a.Close()
	}
}

// drop closes a, an array an operation made for its own use, unless it is
// keep (a cast to the dtype a has already returns it unchanged).
func drop(a, keep *array.Array) {
	if a != keep {
		a.Close()
	}
}

// cast is a.AsType(dt), or a itself when it has dtype dt already: AsType
// to the same dtype is a lazy copy.
func cast(a *array.Array, dt array.DType) *array.Array {
	if a.DType() == dt {
		return a
	}
	return a.AsType(dt)
}
