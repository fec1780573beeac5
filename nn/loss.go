package nn

import (
	"fmt"
	"math"
	"slices"
	"sync"

	"github.com/gocu-dev/gocu"
	"github.com/gocu-dev/gocu/array"
	"github.com/gocu-dev/gocu/grad"
)

// Reduction says how a loss combines its terms, as PyTorch's reduction
// argument. The zero value is torch's default, the mean.
type Reduction uint8

// The reductions: "mean", "sum" and "none".
const (
	ReduceMean Reduction = iota // the (weighted) mean of the terms
	ReduceSum                   // the sum of the terms
	ReduceNone                  // the terms themselves, in the labels' shape
)

// String returns torch's name of the reduction.
func (r Reduction) String() string {
	switch r {
	case ReduceMean:
		return "mean"
	case ReduceSum:
		return "sum"
	case ReduceNone:
		return "none"
	}
	return fmt.Sprintf("Reduction(%d)", uint8(r))
}

// CrossEntropyOptions are the keyword arguments of PyTorch's
// F.cross_entropy and F.nll_loss. The zero value is torch's default,
// except that no label is ignored unless Ignore is set: torch's default
// ignore_index is -100, Go's zero value a valid class.
type CrossEntropyOptions struct {
	// Weight, when not nil, weights each class: a float array (C), on the
	// logits' device, without gradient. The mean is then the weighted
	// mean, Σ w[y]·loss / Σ w[y] over the rows not ignored, as torch's.
	Weight *array.Array

	// Ignore, when set, makes rows labelled IgnoreIndex contribute
	// nothing: no loss, no gradient, and no weight in the mean's
	// denominator. IgnoreIndex need not be a class (torch uses -100).
	Ignore      bool
	IgnoreIndex int

	// LabelSmoothing, in [0, 1], mixes the one-hot target with the
	// uniform distribution: the target is (1-ε)·onehot + ε/C, weighted by
	// Weight as torch does. CrossEntropy only: NLLLoss refuses it.
	LabelSmoothing float64

	Reduction Reduction
}

// CrossEntropy is the mean cross-entropy of logits (N, C) against integer
// class labels (N) in [0, C), as PyTorch's F.cross_entropy: computed from
// the log-softmax (which subtracts each row's maximum, so it neither
// overflows nor underflows), as one recorded operation whose gradient is
// (softmax(logits) - onehot(labels))/N, one fused elementwise pass.
// Logits (N, C, d1, ...) take labels (N, d1, ...): the classes are axis
// 1, as in torch. CrossEntropyWith takes torch's options.
//
// A label outside [0, C) is an error. On the CPU and the simulator the
// loss fails at once with an error that wraps array.ErrIndex and names
// the row. On a GPU, checking would make the host wait for the labels, so
// the check runs in the loss's own fused pass instead: such a row makes
// the loss and its gradient NaN, which the next read of the loss shows.
//
// On a GPU (see Fused), float32 or bfloat16 logits with the default
// options run one fused pass forward and one backward, without storing
// the probabilities; the loss is then float32 for either, as under
// torch.autocast.
func CrossEntropy(logits *grad.Var, labels *array.Array) *grad.Var {
	return crossEntropy(logits, labels, labels.Device().Kind() != gocu.CUDA)
}

// CrossEntropyWith is CrossEntropy with PyTorch's options (nil: the
// defaults): class weights, an ignored label, label smoothing and the
// reduction. The gradient stays one fused pass:
// (softmax·Σq - q)·scale for the smoothed, weighted target q. A row whose
// label is neither in [0, C) nor ignored is an error, reported as
// CrossEntropy reports it (NaN on a GPU).
func CrossEntropyWith(logits *grad.Var, labels *array.Array, o *CrossEntropyOptions) *grad.Var {
	if o == nil {
		return CrossEntropy(logits, labels)
	}
	return classLoss("CrossEntropy", logits, labels, o, true, labels.Device().Kind() != gocu.CUDA)
}

// NLLLoss is the negative log-likelihood of log-probabilities (N, C) or
// (N, C, d1, ...) against integer labels (N) or (N, d1, ...), as PyTorch's
// F.nll_loss: -w[y]·logp[y] per row, reduced as o says (nil: the mean).
// It takes CrossEntropyOptions without LabelSmoothing, and reports labels
// out of range as CrossEntropy does.
func NLLLoss(logp *grad.Var, labels *array.Array, o *CrossEntropyOptions) *grad.Var {
	if o == nil {
		o = &CrossEntropyOptions{}
	}
	return classLoss("NLLLoss", logp, labels, o, false, labels.Device().Kind() != gocu.CUDA)
}

// crossEntropy is CrossEntropy; check says whether to read the labels
// on the host and fail on one out of range, or to poison its row.
func crossEntropy(logits *grad.Var, labels *array.Array, check bool) *grad.Var {
	return classLoss("CrossEntropy", logits, labels, &CrossEntropyOptions{}, true, check)
}

// classLoss is CrossEntropy (soft: x are logits) and NLLLoss (x are
// log-probabilities).
func classLoss(name string, x *grad.Var, labels *array.Array, o *CrossEntropyOptions, soft, check bool) *grad.Var {
	if !x.DType().Valid() { // failed: its error carries on (Err would evaluate the logits)
		return x
	}
	if !labels.DType().Valid() {
		return grad.Const(labels)
	}
	eps := o.LabelSmoothing
	switch {
	case o.Reduction > ReduceNone:
		return badHyper(name, "reduction %v: want ReduceMean, ReduceSum or ReduceNone", o.Reduction)
	case !(eps >= 0 && eps <= 1):
		return badHyper(name, "label smoothing %v: want a number in [0, 1]", eps)
	case eps != 0 && !soft:
		return badHyper(name, "label smoothing %v: NLLLoss takes none (CrossEntropy does)", eps)
	}
	xs := x.Shape()
	if len(xs) < 2 || !x.DType().IsFloating() || x.DType().IsFloat8() {
		return badInput(name, fmt.Sprintf("input of shape %v and dtype %v, want floats of shape (N, C) or (N, C, d1, ...)", xs, x.DType()))
	}
	c := xs[1]
	want := append([]int{xs[0]}, xs[2:]...)
	if !slices.Equal(labels.Shape(), want) || !labels.DType().IsInt() {
		return badInput(name, fmt.Sprintf("labels of shape %v and dtype %v for input of shape %v: want integer labels of shape %v", labels.Shape(), labels.DType(), xs, want))
	}
	var w *array.Array
	if o.Weight != nil {
		w = o.Weight
		if !w.DType().Valid() {
			return grad.Const(w)
		}
		if w.Ndim() != 1 || w.Shape()[0] != c || !w.DType().IsFloat() {
			return badInput(name, fmt.Sprintf("weight of shape %v and dtype %v: want %d floats, one per class", w.Shape(), w.DType(), c))
		}
		wdt := x.DType()
		if wdt.IsLowp() {
			wdt = array.Float32
		}
		w = w.AsType(wdt)
	}
	if len(xs) > 2 { // the classes last, then one row per element
		x = x.MoveAxis(1, -1).Reshape(-1, c)
		labels = labels.Reshape(-1)
	}
	n := labels.Size()
	if check {
		v, err := labels.AsType(array.Int64).Int64s()
		if err != nil {
			return grad.Const(array.Failed(fmt.Errorf("nn: %s: labels: %w", name, err)))
		}
		for i, l := range v {
			if (l < 0 || l >= int64(c)) && !(o.Ignore && l == int64(o.IgnoreIndex)) {
				return grad.Const(array.Failed(fmt.Errorf("nn: %s: label %d of row %d is outside [0, %d): %w", name, l, i, c, array.ErrIndex)))
			}
		}
	}
	if soft && !check && w == nil && !o.Ignore && eps == 0 && o.Reduction == ReduceMean {
		if l := fusedXent(x, labels, n, c); l != nil {
			return l
		}
	}
	if x.DType().IsLowp() {
		// Half logits: the loss in float32, as under torch's autocast and
		// in the fused GPU pass.
		x = x.AsType(array.Float32)
	}
	xv := x.Value()
	ls := xv
	if soft {
		ls = xv.LogSoftmax(1)
	}
	f := classTerms{n: n, c: c, eps: eps, w: w, soft: soft}
	f.lab = labels.Reshape(n, 1)
	f.cls = classes(xv.Device(), c)
	if o.Ignore {
		f.valid = func() *array.Array { return f.lab.Ne(o.IgnoreIndex) }
	}
	if !check {
		f.bad = func() *array.Array {
			b := f.lab.Lt(0).LogicalOr(f.lab.Ge(c))
			if f.valid != nil {
				b = b.LogicalAnd(f.valid())
			}
			return b
		}
	}
	if w != nil {
		// w[y] per row: a gather at the labels, 0 where a label is ignored
		// or out of range (its row is masked or poisoned anyway).
		safe := f.lab.Ge(0).LogicalAnd(f.lab.Lt(c))
		f.wy = w.Take(array.Where(safe, f.lab, 0).Reshape(n), 0).Reshape(n, 1).Eval()
	}
	// The denominator of the mean: N, the rows not ignored, or their
	// weights.
	var den *array.Array
	inv := 1 / float64(n) // +Inf for no rows: a NaN mean, as torch's
	if o.Reduction == ReduceMean && (w != nil || f.valid != nil) {
		switch {
		case w == nil:
			den = f.valid().AsType(xv.DType()).Sum()
		case f.valid == nil:
			den = f.wy.Sum()
		default:
			den = array.Where(f.valid(), f.wy, 0).Sum()
		}
		den = den.Eval()
	}
	var loss *array.Array
	switch o.Reduction {
	case ReduceNone:
		loss = f.terms(ls).Sum(1).Neg().Add(0.0).Reshape(want...) // +0, not -0, in ignored rows
	case ReduceSum:
		loss = f.terms(ls).Sum().Neg()
	default:
		if den != nil {
			loss = f.terms(ls).Sum().Neg().Div(den)
		} else {
			loss = f.terms(ls).Sum().Mul(-inv)
		}
	}
	return grad.Func(name, loss, []*grad.Var{x}, func(g *array.Array) []*array.Array {
		var scale *array.Array
		switch {
		case o.Reduction == ReduceNone:
			scale = g.Reshape(n, 1)
		case o.Reduction == ReduceSum:
			scale = g
		case den != nil:
			scale = g.Div(den)
		default:
			scale = g.Mul(inv)
		}
		return []*array.Array{f.grad(ls).Mul(scale)}
	})
}

// classTerms builds the lazy (N, C) expressions of CrossEntropy and
// NLLLoss: the terms q·logp whose sum is minus the loss, and the gradient
// before the reduction's scale. They are built once for the loss and once
// for the gradient, so that each fuses where it is used instead of being
// stored. q is the target: (1-ε)·w[y] at the label, plus ε/C·w[c] with
// smoothing, and zero in ignored rows.
type classTerms struct {
	n, c     int
	eps      float64
	w, wy    *array.Array // class weights (C) and w[y] (N, 1); nil: none
	lab, cls *array.Array // labels (N, 1) and 0..C-1
	soft     bool
	valid    func() *array.Array // rows not ignored (N, 1); nil: all
	bad      func() *array.Array // rows to poison (N, 1); nil: none
}

// hot is the one-hot target of the rows not ignored.
func (f *classTerms) hot() *array.Array {
	h := f.lab.Eq(f.cls)
	if f.valid != nil {
		h = h.LogicalAnd(f.valid())
	}
	return h
}

// mask zeroes the ignored rows of a.
func (f *classTerms) mask(a *array.Array) *array.Array {
	if f.valid == nil {
		return a
	}
	return array.Where(f.valid(), a, 0)
}

// poison makes the rows of out-of-range labels NaN.
func (f *classTerms) poison(a *array.Array) *array.Array {
	if f.bad == nil {
		return a
	}
	return array.Where(f.bad(), math.NaN(), a)
}

// terms is q·logp; Where, not a product, picks the label's term, so that
// a -Inf log-probability elsewhere stays out of it.
func (f *classTerms) terms(ls *array.Array) *array.Array {
	at := ls
	if f.wy != nil {
		at = ls.Mul(f.wy)
	}
	if f.eps != 0 {
		at = at.Mul(1 - f.eps)
	}
	t := array.Where(f.hot(), at, 0)
	if f.eps != 0 {
		b := ls.Mul(f.eps / float64(f.c))
		if f.w != nil {
			b = b.Mul(f.w)
		}
		t = t.Add(f.mask(b))
	}
	return f.poison(t)
}

// target is q, (N, C).
func (f *classTerms) target(dt array.DType) *array.Array {
	h := f.hot()
	var q *array.Array
	switch {
	case f.wy != nil:
		q = array.Where(h, f.wy, 0)
	case f.eps == 0:
		return h // a bool: p - h promotes it, without a cast in the kernel
	default:
		q = h.AsType(dt)
	}
	if f.eps != 0 {
		q = q.Mul(1 - f.eps)
		if f.w != nil {
			q = q.Add(f.w.Mul(f.eps / float64(f.c)))
		} else {
			q = q.Add(f.eps / float64(f.c))
		}
		q = f.mask(q)
	}
	return q
}

// grad is ∂(-Σ q·logp)/∂x: softmax·Σq - q for logits, -q for
// log-probabilities.
func (f *classTerms) grad(ls *array.Array) *array.Array {
	q := f.target(ls.DType())
	if !f.soft {
		if q.DType() == array.Bool {
			q = q.AsType(ls.DType())
		}
		return f.poison(q.Neg())
	}
	p := ls.Exp()
	// Σq per row: (1-ε)·w[y] + ε/C·Σw, or 1 without weights.
	switch {
	case f.wy == nil && f.valid == nil:
		return f.poison(p.Sub(q))
	case f.wy == nil:
		return f.poison(p.Mul(f.valid().AsType(ls.DType())).Sub(q))
	}
	sum := f.wy.Mul(1 - f.eps)
	if f.eps != 0 {
		sum = sum.Add(f.w.Sum().Mul(f.eps / float64(f.c)))
	}
	return f.poison(p.Mul(f.mask(sum)).Sub(q))
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
