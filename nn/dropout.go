package nn

import (
	"github.com/gocu-dev/gocu/array"
	"github.com/gocu-dev/gocu/grad"
)

// Dropout zeroes each element with probability P while training and
// scales the others by 1/(1-P); in evaluation it is the identity. The mask
// comes from the Philox generator it was given, so one seed gives the same
// masks on the CPU and on a GPU. Inside a captured CUDA graph the mask is
// drawn once, at capture: every replay reuses it.
type Dropout struct {
	P        float64
	Training bool
	rng      *array.RNG
}

// NewDropout returns a Dropout layer drawing its masks from rng.
func NewDropout(rng *array.RNG, p float64) *Dropout {
	return &Dropout{P: p, Training: true, rng: rng}
}

// Forward implements Module.
func (d *Dropout) Forward(x *grad.Var) *grad.Var {
	// p = 1 would scale the kept values by 1/0: the issue and the
	// attention layers refuse it, so the layer does too.
	if !(d.P >= 0 && d.P < 1) {
		return badHyper("Dropout", "probability %v: want 0 <= p < 1", d.P)
	}
	if !d.Training || d.P == 0 {
		return x
	}
	keep := d.rng.Uniform(x.DType(), 0, 1, x.Shape()...).Ge(d.P)
	return grad.Where(keep, x.Mul(1/(1-d.P)), 0)
}

// Named implements Module: no parameters.
func (d *Dropout) Named() []Named { return nil }

// SetTraining implements Trainable.
func (d *Dropout) SetTraining(on bool) { d.Training = on }
