package nn

import (
	"fmt"
	"math"

	"github.com/gocu-dev/gocu/grad"
)

// DecayGroups splits m's trainable parameters as GPT training does:
// matrices and embeddings (two or more axes) are decayed, biases and
// normalisation weights (one axis) are not. Buffers, which have no
// gradient, are in neither.
//
//	opt := nn.NewAdamW(nn.Params(model), 6e-4, 0.1)
//	_, noDecay := nn.DecayGroups(model)
//	if err := opt.SetWeightDecay(noDecay, 0); err != nil { ... }
func DecayGroups(m Module) (decay, noDecay []*grad.Var) {
	for _, n := range m.Named() {
		if !n.Var.RequiresGrad() {
			continue
		}
		if n.Var.Ndim() >= 2 {
			decay = append(decay, n.Var)
		} else {
			noDecay = append(noDecay, n.Var)
		}
	}
	return decay, noDecay
}

// SetWeightDecay gives params, which must be among the optimiser's, the
// weight decay wd in place of the WeightDecay field: torch.optim's
// parameter groups, for the one hyperparameter that differs between them
// in practice. The update is the same fused pass, one per group of
// parameters sharing a device, a dtype and a weight decay.
func (o *opt) SetWeightDecay(params []*grad.Var, wd float64) error {
	if !(wd >= 0) || math.IsInf(wd, 0) {
		return fmt.Errorf("nn: SetWeightDecay: weight decay %v: want a finite number >= 0: %w", wd, ErrHyper)
	}
	mine := make(map[*grad.Var]bool, len(o.params))
	for _, p := range o.params {
		mine[p] = true
	}
	for i, p := range params {
		if !mine[p] {
			return fmt.Errorf("nn: SetWeightDecay: parameter %d is not one the optimiser updates: %w", i, ErrHyper)
		}
	}
	if o.wd == nil {
		o.wd = map[*grad.Var]float64{}
	}
	for _, p := range params {
		o.wd[p] = wd
	}
	return nil
}

// WeightDecayOf returns the weight decay SetWeightDecay gave p, and
// whether it gave one (otherwise the WeightDecay field applies).
func (o *opt) WeightDecayOf(p *grad.Var) (float64, bool) {
	wd, ok := o.wd[p]
	return wd, ok
}
