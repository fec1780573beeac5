package nn

import (
	"fmt"
	"math"
	"slices"

	"github.com/gocu-dev/gocu/array"
	"github.com/gocu-dev/gocu/grad"
)

// RMSNorm scales by the reciprocal root mean square over the last
// len(Shape) axes, as PyTorch's nn.RMSNorm: x/√(mean(x²) + Eps)·Weight.
// Eps 0 means the machine epsilon of x's dtype, as torch's eps=None.
// Weight starts at ones; a nil Weight is torch's elementwise_affine=False.
//
// On a GPU, float32 or bfloat16 x with a float32 or nil Weight runs
// LayerNorm's fused kernels with the mean taken as zero: one forward, two
// backward, float32 inside.
type RMSNorm struct {
	Shape  []int
	Eps    float64
	Weight *grad.Var
}

// NewRMSNorm returns a float32 RMSNorm on m's device over the trailing
// axes of the given shape, with torch's default eps.
func NewRMSNorm(m *array.Maker, shape ...int) *RMSNorm {
	return &RMSNorm{Shape: slices.Clone(shape), Weight: grad.Param(m.Ones(array.Float32, shape...).Copy())}
}

// Forward implements Module.
func (l *RMSNorm) Forward(x *grad.Var) *grad.Var {
	if !(l.Eps >= 0) || math.IsInf(l.Eps, 0) {
		return badHyper("RMSNorm", "eps %v: want a finite number >= 0", l.Eps)
	}
	xs := x.Shape()
	if len(xs) < len(l.Shape) || !slices.Equal(xs[len(xs)-len(l.Shape):], l.Shape) {
		return badInput("RMSNorm", fmt.Sprintf("input of shape %v does not end in the normalised shape %v", xs, l.Shape))
	}
	eps := l.Eps
	if eps == 0 {
		eps = machineEps(x.DType())
	}
	if y := l.fused(x, eps); y != nil {
		return y
	}
	axes := make([]int, len(l.Shape))
	for i := range axes {
		axes[i] = -1 - i
	}
	y := x.Div(x.Square().Reduce(array.OpMean, true, axes...).Add(eps).Sqrt())
	if l.Weight != nil {
		y = y.Mul(l.Weight)
	}
	return y
}

// Named implements Module: "weight", unless there is none.
func (l *RMSNorm) Named() []Named {
	if l.Weight == nil {
		return nil
	}
	return []Named{{"weight", l.Weight}}
}

// machineEps is torch.finfo(dt).eps.
func machineEps(dt array.DType) float64 {
	switch dt {
	case array.Float64:
		return 0x1p-52
	case array.Float16:
		return 0x1p-10
	case array.BFloat16:
		return 0x1p-7
	}
	return 0x1p-23
}

// badHyper returns a failed Var whose error names the layer and wraps
// ErrHyper.
func badHyper(layer, format string, args ...any) *grad.Var {
	return grad.Const(array.Failed(hyperErr(layer, format, args...)))
}

// BatchNorm normalises each channel (axis 1) over the batch and the
// other axes, as PyTorch's nn.BatchNorm1d (input (N, C) or (N, C, L)) and
// nn.BatchNorm2d (N, C, H, W): (x - mean)/√(var + Eps)·Weight + Bias.
// While training it uses the batch's mean and biased variance and, with
// running statistics, updates them as
// running = (1-Momentum)·running + Momentum·batch, with the unbiased
// variance; in evaluation it uses the running statistics. Without
// running statistics (nil RunningMean, torch's track_running_stats=False)
// it always uses the batch's. Nil Weight and Bias are torch's
// affine=False.
type BatchNorm struct {
	Eps, Momentum float64
	Weight, Bias  *grad.Var
	// RunningMean and RunningVar are buffers, not parameters: they have
	// no gradient, and checkpoints carry them as torch's state_dict does.
	RunningMean, RunningVar *grad.Var
	Training                bool
	dims                    int // input dimensions accepted: 2 or 3 (1d), 4 (2d)
	name                    string
}

func newBatchNorm(m *array.Maker, c int, name string, dims int) *BatchNorm {
	return &BatchNorm{
		Eps: 1e-5, Momentum: 0.1, Training: true, dims: dims, name: name,
		Weight:      grad.Param(m.Ones(array.Float32, c).Copy()),
		Bias:        grad.Param(m.Zeros(array.Float32, c).Copy()),
		RunningMean: grad.Const(m.Zeros(array.Float32, c).Copy()),
		RunningVar:  grad.Const(m.Ones(array.Float32, c).Copy()),
	}
}

// NewBatchNorm1d returns a float32 BatchNorm of c channels for inputs
// (N, C) or (N, C, L), with torch's defaults: Eps 1e-5, Momentum 0.1,
// Weight ones, Bias zeros, running mean zeros and variance ones.
func NewBatchNorm1d(m *array.Maker, c int) *BatchNorm { return newBatchNorm(m, c, "BatchNorm1d", 3) }

// NewBatchNorm2d is NewBatchNorm1d for inputs (N, C, H, W).
func NewBatchNorm2d(m *array.Maker, c int) *BatchNorm { return newBatchNorm(m, c, "BatchNorm2d", 4) }

// Forward implements Module.
func (b *BatchNorm) Forward(x *grad.Var) *grad.Var {
	name := b.name
	if name == "" {
		name = "BatchNorm"
	}
	if !(b.Eps >= 0) || math.IsInf(b.Eps, 0) {
		return badHyper(name, "eps %v: want a finite number >= 0", b.Eps)
	}
	if !(b.Momentum >= 0 && b.Momentum <= 1) {
		return badHyper(name, "momentum %v: want 0 <= momentum <= 1", b.Momentum)
	}
	if !x.DType().Valid() {
		return x
	}
	xs := x.Shape()
	okDims := len(xs) == b.dims || (b.dims == 3 && len(xs) == 2) || (b.dims == 0 && len(xs) >= 2)
	if !okDims {
		want := "(N, C, H, W)"
		if b.dims == 3 {
			want = "(N, C) or (N, C, L)"
		}
		return badInput(name, fmt.Sprintf("input of shape %v, want %s", xs, want))
	}
	c := xs[1]
	for _, p := range []*grad.Var{b.Weight, b.Bias, b.RunningMean, b.RunningVar} {
		if p != nil && !slices.Equal(p.Shape(), []int{c}) {
			return badInput(name, fmt.Sprintf("input of %d channels for parameters of shape %v", c, p.Shape()))
		}
	}
	if (b.RunningMean == nil) != (b.RunningVar == nil) {
		return badInput(name, "a running mean without a running variance, or the reverse")
	}
	axes := []int{0}
	count := xs[0]
	bshape := []int{1, c}
	for i := 2; i < len(xs); i++ {
		axes = append(axes, i)
		count *= xs[i]
		bshape = append(bshape, 1)
	}
	var y *grad.Var
	if b.Training || b.RunningMean == nil {
		if count <= 1 {
			return badInput(name, fmt.Sprintf("input of shape %v: expected more than 1 value per channel when training", xs))
		}
		mean := x.Reduce(array.OpMean, true, axes...)
		xc := x.Sub(mean)
		v := xc.Square().Reduce(array.OpMean, true, axes...)
		y = xc.Div(v.Add(b.Eps).Sqrt())
		if b.Training && b.RunningMean != nil {
			m := b.Momentum
			bm := mean.Value().Reshape(c)
			bv := v.Value().Reshape(c).Mul(float64(count) / float64(count-1))
			rm, rv := b.RunningMean.Value(), b.RunningVar.Value()
			nm := rm.Mul(1 - m).Add(bm.Mul(m).AsType(rm.DType())).Copy()
			nv := rv.Mul(1 - m).Add(bv.Mul(m).AsType(rv.DType())).Copy()
			if err := rm.Assign(nm); err != nil {
				return grad.Const(array.Failed(fmt.Errorf("nn: %s: running mean: %w", name, err)))
			}
			if err := rv.Assign(nv); err != nil {
				return grad.Const(array.Failed(fmt.Errorf("nn: %s: running variance: %w", name, err)))
			}
		}
	} else {
		mean := b.RunningMean.Value().Reshape(bshape...)
		sd := b.RunningVar.Value().Add(b.Eps).Sqrt().Reshape(bshape...)
		y = x.Sub(mean).Div(sd)
	}
	if b.Weight != nil {
		y = y.Mul(b.Weight.Reshape(bshape...))
	}
	if b.Bias != nil {
		y = y.Add(b.Bias.Reshape(bshape...))
	}
	return y
}

// Named implements Module: "weight", "bias", "running_mean" and
// "running_var" (those present), torch's state_dict names.
func (b *BatchNorm) Named() []Named {
	var out []Named
	for _, n := range []Named{{"weight", b.Weight}, {"bias", b.Bias}, {"running_mean", b.RunningMean}, {"running_var", b.RunningVar}} {
		if n.Var != nil {
			out = append(out, n)
		}
	}
	return out
}

// SetTraining implements Trainable.
func (b *BatchNorm) SetTraining(on bool) { b.Training = on }
