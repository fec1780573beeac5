package nn

import (
	"fmt"

	"github.com/gocu-dev/gocu/array"
)

// QuantizedLinear is a linear layer y = x·w + b whose weights are int8,
// quantised per output channel, and whose input is quantised per row on
// the fly:
//
//	xq, sx = x.Quantize(Int8, -1)              // one kernel: a scale per row of x
//	acc    = xq · wq                            // int8 × int8 → int32 (IMMA tensor cores on a GPU)
//	y      = float32(acc) · sx · sw + b         // one fused elementwise pass (the epilogue)
//
// The epilogue is a lazy expression, so an activation applied to the
// result (y.ReLU()) fuses into the same pass. The result differs from the
// float32 layer by the two quantisations: at most half a step of each
// operand, about (|x|max·|w|max / 127) · √in / 2 in the worst case, much
// less on typical data (the example examples/quantize prints it).
type QuantizedLinear struct {
	In, Out int
	// W holds the weights as int8, one row per output channel (Out×In as
	// nn.Linear stores them), padded with zero rows and columns to
	// multiples of 4, the layout int8 tensor cores take without a copy
	// (W.T() is the column-major right operand).
	W *array.Array
	// WScale is the float32 scale of each output channel, shape (1, Out).
	WScale *array.Array
	// Bias is float32 of shape (Out), or nil.
	Bias *array.Array
}

// NewQuantizedLinear quantises w, of shape (in, out) as x.MatMul(w) takes
// it, symmetrically to int8 per output channel (per column of w), and
// keeps bias (shape (out), or nil) in float32.
func NewQuantizedLinear(w, bias *array.Array) (*QuantizedLinear, error) {
	if err := w.Err(); err != nil {
		return nil, err
	}
	if w.Ndim() != 2 {
		return nil, fmt.Errorf("nn: NewQuantizedLinear: weights of shape %v: want (in, out): %w", w.Shape(), array.ErrShape)
	}
	in, out := w.Shape()[0], w.Shape()[1]
	l := &QuantizedLinear{In: in, Out: out}
	wt := w.T()
	q, s := wt.Quantize(array.Int8, 1) // (out, in) and (out, 1)
	wt.Close()
	if err := q.Err(); err != nil {
		return nil, err
	}
	in4, out4 := (in+3)/4*4, (out+3)/4*4
	if in4 != in || out4 != out {
		p := array.On(w.Device()).Zeros(array.Int8, out4, in4).Eval()
		v := p.Slice(array.S(0, out), array.S(0, in))
		err := v.Assign(q)
		v.Close()
		q.Close()
		if err != nil {
			p.Close()
			s.Close()
			return nil, err
		}
		q = p
	}
	l.W = q
	l.WScale = s.Reshape(1, out)
	s.Close()
	if bias != nil {
		if err := bias.Err(); err != nil {
			l.Close()
			return nil, err
		}
		if bias.Ndim() != 1 || bias.Shape()[0] != out {
			l.Close()
			return nil, fmt.Errorf("nn: NewQuantizedLinear: bias of shape %v for %d outputs: %w", bias.Shape(), out, array.ErrShape)
		}
		l.Bias = bias.AsType(array.Float32).Eval()
	}
	if err := l.WScale.Err(); err != nil {
		l.Close()
		return nil, err
	}
	return l, nil
}

// Forward returns x·w + b in float32 for x of shape (..., in), with the
// input quantised per row. The result is a pending expression (the
// epilogue), evaluated where it is used.
func (l *QuantizedLinear) Forward(x *array.Array) *array.Array {
	if err := x.Err(); err != nil {
		return x
	}
	shape := x.Shape()
	if len(shape) == 0 || shape[len(shape)-1] != l.In {
		return array.Failed(fmt.Errorf("nn: QuantizedLinear: input of shape %v for a layer of %d inputs: %w", shape, l.In, array.ErrShape))
	}
	lead := shape[:len(shape)-1]
	m := 1
	for _, n := range lead {
		m *= n
	}
	x2 := x
	if len(shape) != 2 {
		x2 = x.Reshape(m, l.In)
		defer x2.Close()
	}
	xq, xs := x2.Quantize(array.Int8, 1)
	defer xq.Close()
	defer xs.Close()
	in4, out4 := l.W.Shape()[1], l.W.Shape()[0]
	if in4 != l.In {
		p := array.On(x.Device()).Zeros(array.Int8, m, in4).Eval()
		v := p.Slice(array.All, array.S(0, l.In))
		err := v.Assign(xq)
		v.Close()
		if err != nil {
			p.Close()
			return array.Failed(err)
		}
		xq.Close()
		xq = p
	}
	wt := l.W.T()
	defer wt.Close()
	acc := xq.MatMul(wt) // (m, out4) int32
	defer acc.Close()
	accv := acc
	if out4 != l.Out {
		accv = acc.Slice(array.All, array.S(0, l.Out))
		defer accv.Close()
	}
	y := accv.AsType(array.Float32).Mul(xs).Mul(l.WScale)
	if l.Bias != nil {
		y = y.Add(l.Bias)
	}
	if len(shape) == 2 {
		return y // still pending: what uses it fuses with the epilogue
	}
	return y.Reshape(append(append([]int{}, lead...), l.Out)...)
}

// Close releases the layer's arrays.
func (l *QuantizedLinear) Close() {
	for _, a := range []*array.Array{l.W, l.WScale, l.Bias} {
		if a != nil {
			a.Close()
		}
	}
}
