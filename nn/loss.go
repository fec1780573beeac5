package nn

import (
	"fmt"
	"sync"

	"github.com/gocu-dev/gocu"
	"github.com/gocu-dev/gocu/array"
	"github.com/gocu-dev/gocu/grad"
)

// CrossEntropy is the mean cross-entropy of logits (N, C) against integer
// class labels (N) in [0, C), as PyTorch's F.cross_entropy: computed from
// the log-softmax (which subtracts each row's maximum, so it neither
// overflows nor underflows), as one recorded operation whose gradient is
// (softmax(logits) - onehot(labels))/N, one fused elementwise pass. Labels
// outside [0, C) contribute nothing (the one-hot row is empty); check
// them where they come from.
func CrossEntropy(logits *grad.Var, labels *array.Array) *grad.Var {
	if !logits.DType().Valid() { // failed: its error carries on (Err would evaluate the logits)
		return logits
	}
	if logits.Ndim() != 2 {
		return badInput("CrossEntropy", fmt.Sprintf("logits of shape %v, want (N, C)", logits.Shape()))
	}
	n, c := logits.Shape()[0], logits.Shape()[1]
	if labels.Ndim() != 1 || labels.Shape()[0] != n || !labels.DType().IsInt() {
		return badInput("CrossEntropy", fmt.Sprintf("labels of shape %v and dtype %v for logits of shape %v: want %d integer labels", labels.Shape(), labels.DType(), logits.Shape(), n))
	}
	lv := logits.Value()
	ls := lv.LogSoftmax(1)
	cls := classes(lv.Device(), c)
	// The one-hot rows, (N, C) bool: a lazy expression, built once for
	// the loss and once for the gradient so that each fuses where it is
	// used instead of being stored.
	hot := func() *array.Array { return labels.Reshape(n, 1).Eq(cls) }
	inv := 1 / float64(max(n, 1))
	loss := array.Where(hot(), ls, 0).Sum().Mul(-inv)
	return grad.Func("CrossEntropy", loss, []*grad.Var{logits}, func(g *array.Array) []*array.Array {
		return []*array.Array{ls.Exp().Sub(hot()).Mul(g.Mul(inv))}
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
