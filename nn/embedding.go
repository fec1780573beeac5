package nn

import (
	"fmt"

	"github.com/gocu-dev/gocu/array"
	"github.com/gocu-dev/gocu/grad"
)

// Embedding maps integer ids to rows of Weight (Num, Dim), as PyTorch's
// nn.Embedding: the forward pass is a gather, the backward pass a
// scatter-add of the output gradient into the rows (an id seen twice gets
// both gradients). PaddingIdx, when >= 0, names a row that is zero at
// construction and receives no gradient (torch's padding_idx); -1 means
// none.
type Embedding struct {
	Weight     *grad.Var
	PaddingIdx int
}

// NewEmbedding returns a float32 Embedding of num rows of width dim on
// rng's device, drawn from N(0, 1) as PyTorch's default, without a
// padding row.
func NewEmbedding(rng *array.RNG, num, dim int) *Embedding {
	return &Embedding{Weight: grad.Param(rng.Normal(array.Float32, 0, 1, num, dim).Copy()), PaddingIdx: -1}
}

// NewEmbeddingPadding is NewEmbedding with row pad zeroed and excluded
// from the gradient.
func NewEmbeddingPadding(rng *array.RNG, num, dim, pad int) *Embedding {
	e := NewEmbedding(rng, num, dim)
	e.PaddingIdx = pad
	if pad >= 0 && pad < num {
		row := e.Weight.Value().Slice(array.Idx(pad))
		if err := row.Assign(0); err != nil {
			e.Weight = grad.Param(array.Failed(fmt.Errorf("nn: NewEmbeddingPadding: %w", err)))
		}
		row.Close()
	}
	return e
}

// Forward implements Module: x holds integer ids of any shape (its value
// is read; no gradient flows to it) and the result has x's shape
// followed by Dim. An id outside [0, Num) is an error wrapping
// array.ErrIndex. On the CPU the error names the first bad id; on a GPU
// it surfaces, without a wait, where the result is read (a negative id is
// reported as index Num there).
func (e *Embedding) Forward(x *grad.Var) *grad.Var {
	if e == nil || e.Weight == nil {
		return badHyper("Embedding", "nil Embedding or weight")
	}
	w := e.Weight.Value()
	if err := w.Err(); err != nil {
		return grad.Const(array.Failed(fmt.Errorf("nn: Embedding: weight: %w", err)))
	}
	if w.Ndim() != 2 {
		return failedVar(array.ErrShape, "Embedding", "weight of shape %v: want (num, dim)", w.Shape())
	}
	ids := x.Value()
	if ids == nil {
		return grad.Const(array.Failed(fmt.Errorf("nn: Embedding: %w", grad.ErrNilVar)))
	}
	if err := ids.Err(); err != nil {
		return grad.Const(array.Failed(fmt.Errorf("nn: Embedding: ids: %w", err)))
	}
	if !ids.DType().IsInt() {
		return failedVar(array.ErrDType, "Embedding", "ids of dtype %v: want an integer type", ids.DType())
	}
	num, dim := w.Shape()[0], w.Shape()[1]
	pad := e.PaddingIdx
	if pad < -1 || pad >= num {
		return failedVar(array.ErrValue, "Embedding", "padding index %d for %d rows: want -1 or 0 <= index < %d", pad, num, num)
	}
	if ids.Device().IsGPU() {
		if ids.DType().IsSigned() {
			// Take counts negative indices from the end: move them out of
			// range so that the gather reports them, without a read back.
			i64 := ids.AsType(array.Int64)
			ids = array.Where(i64.Lt(0), int64(num), i64)
		}
	} else if err := checkIDs(ids, num); err != nil {
		return grad.Const(array.Failed(err))
	}
	out := w.Take(ids, 0)
	return grad.Func("Embedding", out, []*grad.Var{e.Weight}, func(g *array.Array) []*array.Array {
		flat := ids.Reshape(-1)
		g2 := g.Reshape(-1, dim)
		if pad >= 0 {
			g2 = array.Where(flat.Eq(pad).Reshape(-1, 1), 0, g2)
		}
		dt := w.DType()
		acc := dt
		if acc != array.Float32 && acc != array.Float64 {
			acc = array.Float32 // scatter-add accumulates in float32 or float64
			g2 = g2.AsType(acc)
		}
		z := array.On(w.Device()).Zeros(acc, num, dim).Copy()
		dw := z.IndexAdd(0, flat, g2)
		z.Close()
		if acc != dt {
			dw = dw.AsType(dt)
		}
		return []*array.Array{dw}
	})
}

// checkIDs reports the first id of host-resident ids outside [0, num).
func checkIDs(ids *array.Array, num int) error {
	v, err := ids.AsType(array.Int64).Int64s()
	if err != nil {
		return fmt.Errorf("nn: Embedding: ids: %w", err)
	}
	for i, id := range v {
		if id < 0 || id >= int64(num) {
			return fmt.Errorf("nn: Embedding: id %d (element %d of ids of shape %v) out of range for %d rows: %w", id, i, ids.Shape(), num, array.ErrIndex)
		}
	}
	return nil
}

// Named implements Module: "weight".
func (e *Embedding) Named() []Named { return []Named{{"weight", e.Weight}} }

// failedVar returns a failed Var whose error names the layer and wraps
// kind (an array sentinel or ErrHyper).
func failedVar(kind error, layer, format string, args ...any) *grad.Var {
	return grad.Const(array.Failed(fmt.Errorf("nn: %s: %s: %w", layer, fmt.Sprintf(format, args...), kind)))
}
