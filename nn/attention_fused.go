package nn

import (
	"slices"

	"github.com/gocu-dev/gocu"
	"github.com/gocu-dev/gocu/array"
	"github.com/gocu-dev/gocu/grad"
)

// flashKernels are a fused attention's entry points, in the shape of
// FlashAttention's: forward returns the output and each row's logsumexp,
// backward the gradients of q, k and v from them. They take arrays
// (batch, heads, seq, dim) of dtype dt, one shape for q, k and v: views
// that inPlace accepts (nil: none), or contiguous ones.
type flashKernels struct {
	forward  func(q, k, v *array.Array, scale float64, causal bool) (o, lse *array.Array, err error)
	backward func(q, k, v, o, lse, do *array.Array, scale float64, causal bool) (dq, dk, dv *array.Array, err error)
	dt       array.DType
	dims     []int                   // the head dimensions with a kernel
	device   func(*gocu.Device) bool // where the kernels run
	inPlace  func(*array.Array) error
}

// operand returns a as the kernels take it: itself when contiguous or a
// view they read in place, a contiguous copy otherwise.
func (k flashKernels) operand(a *array.Array) *array.Array {
	if a.IsContiguous() || k.inPlace != nil && k.inPlace(a) == nil {
		return a
	}
	return a.Contiguous()
}

// useFlash makes ScaledDotProductAttention run on k where they apply:
// inputs of k's dtype and head dimensions, one shape (B, H, S, D) for q, k
// and v, a positive scale, on a device k runs on; otherwise the composed
// operations run.
func useFlash(k flashKernels) {
	fusedAttention = func(q, kk, v *grad.Var, causal bool, scale float64) *grad.Var {
		return flash(k, q, kk, v, causal, scale)
	}
}

func flash(k flashKernels, q, kk, v *grad.Var, causal bool, scale float64) *grad.Var {
	qa, ka, va := q.Value(), kk.Value(), v.Value()
	s := qa.Shape()
	if !(scale > 0) || len(s) != 4 || !slices.Contains(k.dims, s[3]) || !k.device(qa.Device()) {
		return nil
	}
	for _, a := range []*array.Array{qa, ka, va} {
		if a.DType() != k.dt || !slices.Equal(a.Shape(), s) || a.Device() != qa.Device() {
			return nil
		}
	}
	// The heads of MultiheadAttention are transposed views, which the
	// kernels may read in place.
	qc, kc, vc := k.operand(qa), k.operand(ka), k.operand(va)
	o, lse, err := k.forward(qc, kc, vc, scale, causal)
	if err != nil {
		return grad.Const(array.Failed(err))
	}
	return grad.Func("FlashAttention", o, []*grad.Var{q, kk, v}, func(g *array.Array) []*array.Array {
		dc := g
		if g.DType() != k.dt {
			dc = g.AsType(k.dt)
		}
		do := k.operand(dc)
		dq, dk, dv, err := k.backward(qc, kc, vc, o, lse, do, scale, causal)
		// The backward pass runs once: its inputs' copies and the
		// logsumexp are freed in stream order, after its kernels.
		for _, a := range []*array.Array{do, dc} {
			drop(a, g)
		}
		for i, a := range []*array.Array{qc, kc, vc} {
			drop(a, []*array.Array{qa, ka, va}[i])
		}
		lse.Close()
		if err != nil {
			f := array.Failed(err)
			return []*array.Array{f, f, f}
		}
		return []*array.Array{dq, dk, dv}
	})
}
