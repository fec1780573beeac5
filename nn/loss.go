package nn

import (
	"fmt"
	"math"
	"sync"

	"github.com/gocu-dev/gocu"
	"github.com/gocu-dev/gocu/array"
	"github.com/gocu-dev/gocu/grad"
)

// CrossEntropy is the mean cross-entropy of logits (N, C) against integer
// class labels (N) in [0, C), as PyTorch's F.cross_entropy: computed from
// the log-softmax (which subtracts each row's maximum, so it neither
// overflows nor underflows), as one recorded operation whose gradient is
// (softmax(logits) - onehot(labels))/N, one fused elementwise pass.
//
// A label outside [0, C) is an error. On the CPU and the simulator the
// loss fails at once with an error that wraps array.ErrIndex and names
// the row. On a GPU, checking would make the host wait for the labels, so
// the check runs in the loss's own fused pass instead: such a row makes
// the loss and its gradient NaN, which the next read of the loss shows.
func CrossEntropy(logits *grad.Var, labels *array.Array) *grad.Var {
	return crossEntropy(logits, labels, labels.Device().Kind() != gocu.CUDA)
}

// crossEntropy is CrossEntropy; check says whether to read the labels
// on the host and fail on one out of range, or to poison its row.
func crossEntropy(logits *grad.Var, labels *array.Array, check bool) *grad.Var {
	if !logits.DType().Valid() { // failed: its error carries on (Err would evaluate the logits)
		return logits
	}
	if logits.Ndim() != 2 {
		return badInput("CrossEntropy", fmt.Sprintf("logits of shape %v, want (N, C)", logits.Shape()))
	}
	n, c := logits.Shape()[0], logits.Shape()[1]
	if !labels.DType().Valid() {
		return grad.Const(labels)
	}
	if labels.Ndim() != 1 || labels.Shape()[0] != n || !labels.DType().IsInt() {
		return badInput("CrossEntropy", fmt.Sprintf("labels of shape %v and dtype %v for logits of shape %v: want %d integer labels", labels.Shape(), labels.DType(), logits.Shape(), n))
	}
	if check {
		v, err := labels.AsType(array.Int64).Int64s()
		if err != nil {
			return grad.Const(array.Failed(fmt.Errorf("nn: CrossEntropy: labels: %w", err)))
		}
		for i, l := range v {
			if l < 0 || l >= int64(c) {
				return grad.Const(array.Failed(fmt.Errorf("nn: CrossEntropy: label %d of row %d is outside [0, %d): %w", l, i, c, array.ErrIndex)))
			}
		}
	}
	lv := logits.Value()
	ls := lv.LogSoftmax(1)
	cls := classes(lv.Device(), c)
	// The one-hot rows, (N, C) bool, and the rows whose label is out of
	// range, (N, 1): lazy expressions, built once for the loss and once
	// for the gradient so that each fuses where it is used instead of
	// being stored.
	hot := func() *array.Array { return labels.Reshape(n, 1).Eq(cls) }
	bad := func() *array.Array {
		l := labels.Reshape(n, 1)
		return l.Lt(0).LogicalOr(l.Ge(c))
	}
	inv := 1 / float64(max(n, 1))
	var terms, dl func() *array.Array
	if check {
		terms = func() *array.Array { return array.Where(hot(), ls, 0) }
		dl = func() *array.Array { return ls.Exp().Sub(hot()) }
	} else {
		terms = func() *array.Array { return array.Where(bad(), math.NaN(), array.Where(hot(), ls, 0)) }
		dl = func() *array.Array { return array.Where(bad(), math.NaN(), ls.Exp().Sub(hot())) }
	}
	loss := terms().Sum().Mul(-inv)
	return grad.Func("CrossEntropy", loss, []*grad.Var{logits}, func(g *array.Array) []*array.Array {
		return []*array.Array{dl().Mul(g.Mul(inv))}
	})
}

// classes caches 0..c-1 as int64 per device: a materialised array, so that
// comparing labels with it does not evaluate an index expression each
// time.
var classCache sync.Map // classKey -> *array.Array

type classKey struct {
	dev *gocu.Device
	c   int
}

func classes(dev *gocu.Device, c int) *array.Array {
	k := classKey{dev, c}
	if a, ok := classCache.Load(k); ok {
		return a.(*array.Array)
	}
	a := array.On(dev).Arange(array.Int64, float64(c)).Copy().Persist() // cached across steps
	got, _ := classCache.LoadOrStore(k, a)
	return got.(*array.Array)
}

// MSE is the mean squared error between pred and target (an array, a Var
// or a number; broadcast), as PyTorch's F.mse_loss.
func MSE(pred *grad.Var, target any) *grad.Var {
	return pred.Sub(target).Square().Mean()
}
