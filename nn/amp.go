package nn

import (
	"fmt"
	"math"

	"github.com/gocu-dev/gocu/array"
	"github.com/gocu-dev/gocu/grad"
)

// Mixed precision, as torch.autocast and torch.amp.GradScaler.
//
// The parameters stay float32 (the master weights, which the optimisers
// update) and the products run in bfloat16 or float16: Linear and
// MultiheadAttention cast their input and weights to their Compute dtype,
// accumulate in float32 on the tensor cores, and give float32 results
// and gradients, so that what follows them (norms, softmax, the loss)
// computes in float32. Autocast sets Compute through a whole model.
//
// float16 keeps 5 exponent bits: gradients below 6e-8 flush to zero on
// their way through the float16 products. A GradScaler multiplies the
// loss so that they stay representable, divides the gradients back
// before the step and skips steps whose gradients overflowed. bfloat16
// has float32's exponent range and needs no scaler.

// Autocaster is a module whose products can run in a lower precision
// (Linear, MultiheadAttention), or one holding such modules (Sequential):
// models implement it to pass Autocast on to their layers.
type Autocaster interface {
	SetCompute(dt array.DType)
}

// Autocast makes every product of m (and of the modules inside it) run
// in dt, array.BFloat16 or array.Float16, with float32 master weights and
// float32 everywhere else, as torch.autocast; dt 0 (or the weights'
// dtype) turns it off.
func Autocast(m Module, dt array.DType) error {
	switch dt {
	case 0, array.BFloat16, array.Float16, array.Float32, array.Float64:
	default:
		return fmt.Errorf("nn: Autocast to %v: want bfloat16, float16, or 0 for none: %w", dt, ErrHyper)
	}
	if a, ok := m.(Autocaster); ok && !isNil(m) {
		a.SetCompute(dt)
	}
	return nil
}

// SetCompute implements Autocaster.
func (l *Linear) SetCompute(dt array.DType) { l.Compute = dt }

// SetCompute implements Autocaster.
func (m *MultiheadAttention) SetCompute(dt array.DType) { m.Compute = dt }

// SetCompute implements Autocaster: it sets every layer's.
func (s *Sequential) SetCompute(dt array.DType) {
	for _, l := range s.Layers {
		if !isNil(l) {
			_ = Autocast(l, dt) // dt was checked by the caller
		}
	}
}

// GradScaler scales the loss for float16 training, as
// torch.amp.GradScaler: Scale multiplies the loss, Step divides the
// gradients by the scale and steps the optimiser unless a gradient is
// infinite or NaN, and Update then halves the scale after an overflow
// or doubles it after GrowthInterval clean steps.
//
//	loss := scaler.Scale(nn.CrossEntropy(logits, labels))
//	loss.Backward()
//	scaler.Unscale(opt) // optional: before ClipGradNorm
//	scaler.Step(opt)
//	scaler.Update()
//	opt.ZeroGrad()
//
// Finding an overflow reads one number back from the device per step, as
// torch's does.
type GradScaler struct {
	// ScaleFactor is the current scale: 65536 at first.
	ScaleFactor float64
	// GrowthFactor (2) multiplies the scale after GrowthInterval (2000)
	// steps without overflow; BackoffFactor (0.5) after an overflow.
	GrowthFactor, BackoffFactor float64
	GrowthInterval              int

	clean    int  // steps without overflow since the scale last changed
	unscaled bool // Unscale ran since the last Update
	found    bool // an overflow was found since the last Update
	checked  bool // Unscale or Step looked for one since the last Update
}

// NewGradScaler returns a GradScaler with torch's defaults.
func NewGradScaler() *GradScaler {
	return &GradScaler{ScaleFactor: 1 << 16, GrowthFactor: 2, BackoffFactor: 0.5, GrowthInterval: 2000}
}

func (s *GradScaler) check() error {
	switch {
	case !(s.ScaleFactor > 0) || math.IsInf(s.ScaleFactor, 0):
		return hyperErr("GradScaler", "scale %v: want a finite number > 0", s.ScaleFactor)
	case !(s.GrowthFactor > 1) || math.IsInf(s.GrowthFactor, 0):
		return hyperErr("GradScaler", "growth factor %v: want a finite number > 1", s.GrowthFactor)
	case !(s.BackoffFactor > 0 && s.BackoffFactor < 1):
		return hyperErr("GradScaler", "backoff factor %v: want 0 < factor < 1", s.BackoffFactor)
	case s.GrowthInterval <= 0:
		return hyperErr("GradScaler", "growth interval %d: want > 0", s.GrowthInterval)
	}
	return nil
}

// Scale returns loss multiplied by the scale factor.
func (s *GradScaler) Scale(loss *grad.Var) *grad.Var {
	if err := s.check(); err != nil {
		return grad.Const(array.Failed(err))
	}
	return loss.Mul(s.ScaleFactor)
}

// Unscale divides the gradients of o's parameters by the scale factor,
// in place, and notes whether any is infinite or NaN. Call it before
// working on the true gradients (ClipGradNorm); Step calls it otherwise.
// A second call before Update is an error, as in torch.
func (s *GradScaler) Unscale(o Optimizer) error {
	if err := s.check(); err != nil {
		return err
	}
	if s.unscaled {
		return hyperErr("GradScaler", "Unscale called twice since the last Update")
	}
	inv := 1 / s.ScaleFactor
	var bad *array.Array // NaN where a gradient is not finite: 0·Inf and 0·NaN are NaN
	for i, p := range o.Params() {
		g := p.Grad()
		if g == nil {
			continue
		}
		if err := g.Err(); err != nil {
			return fmt.Errorf("nn: GradScaler: gradient of parameter %d: %w", i, err)
		}
		u := g.Mul(inv).Copy()
		if err := u.Err(); err != nil {
			return fmt.Errorf("nn: GradScaler: gradient of parameter %d: %w", i, err)
		}
		p.SetGrad(u)
		t := g.Mul(0).AsType(array.Float64).Sum()
		if bad == nil {
			bad = t
		} else {
			bad = bad.Add(t)
		}
	}
	s.unscaled, s.checked = true, true
	if bad == nil {
		return nil
	}
	v, err := bad.Item()
	if err != nil {
		return fmt.Errorf("nn: GradScaler: %w", err)
	}
	if math.IsNaN(v) {
		s.found = true
	}
	return nil
}

// Step unscales the gradients (unless Unscale did) and steps o unless one
// of them is infinite or NaN. It reports whether o stepped.
func (s *GradScaler) Step(o Optimizer) (bool, error) {
	if !s.unscaled {
		if err := s.Unscale(o); err != nil {
			return false, err
		}
	}
	if s.found {
		return false, nil
	}
	return true, o.Step()
}

// Update adjusts the scale factor after a step: BackoffFactor times it
// after an overflow, GrowthFactor times it after GrowthInterval steps in
// a row without one.
func (s *GradScaler) Update() error {
	if err := s.check(); err != nil {
		return err
	}
	if !s.checked {
		return hyperErr("GradScaler", "Update without a Step or Unscale since the last Update")
	}
	if s.found {
		s.ScaleFactor *= s.BackoffFactor
		s.clean = 0
	} else if s.clean++; s.clean == s.GrowthInterval {
		s.ScaleFactor *= s.GrowthFactor
		s.clean = 0
	}
	s.unscaled, s.found, s.checked = false, false, false
	return nil
}

// Overflowed reports whether the gradients unscaled since the last Update
// held an infinite or NaN value (the step was skipped).
func (s *GradScaler) Overflowed() bool { return s.found }
