package nn

import (
	"errors"
	"fmt"
	"math"

	"github.com/gocu-dev/gocu/array"
	"github.com/gocu-dev/gocu/grad"
)

// ErrNonfinite is wrapped by the error of ClipGradNorm with
// ErrorIfNonfinite when the total norm is NaN or infinite.
var ErrNonfinite = errors.New("non-finite gradient norm")

// ClipOptions are ClipGradNorm's options, as torch's
// clip_grad_norm_ arguments.
type ClipOptions struct {
	// Norm is the p of the p-norm: 0 means 2; math.Inf(1) is the
	// largest absolute value.
	Norm float64
	// ErrorIfNonfinite makes a NaN or infinite total norm an error, and
	// leaves the gradients alone then. Checking waits for the device.
	ErrorIfNonfinite bool
}

// ClipGradNorm scales the gradients of params so that their total norm
// is at most maxNorm, as torch.nn.utils.clip_grad_norm_: the total norm is
// the p-norm of all gradients together (the p-norm of their p-norms), and
// every gradient is multiplied by min(maxNorm/(total+1e-6), 1), always,
// so that no read of the norm is needed. It returns the total norm, a 0-d
// array (float32, or float64 if a gradient is), without waiting for it.
// Parameters without a gradient are skipped; with none, the norm is 0.
// The old gradient arrays are closed (freed in stream order); parameters
// that shared one share its scaled copy.
// A NaN or infinite total makes the gradients NaN (or 0 for an infinite
// one), as in torch, unless opts.ErrorIfNonfinite.
func ClipGradNorm(params []*grad.Var, maxNorm float64, opts *ClipOptions) (*array.Array, error) {
	var o ClipOptions
	if opts != nil {
		o = *opts
	}
	p := o.Norm
	if p == 0 {
		p = 2
	}
	if !(p > 0) {
		return nil, hyperErr("ClipGradNorm", "norm type %v: want > 0", o.Norm)
	}
	if math.IsNaN(maxNorm) || maxNorm < 0 {
		return nil, hyperErr("ClipGradNorm", "max norm %v: want >= 0", maxNorm)
	}
	var gs []*array.Array
	var vs []*grad.Var
	dt := array.Float32
	for i, v := range params {
		if v == nil {
			return nil, fmt.Errorf("nn: ClipGradNorm: parameter %d: %w", i, grad.ErrNilVar)
		}
		g := v.Grad()
		if g == nil {
			continue
		}
		if err := g.Err(); err != nil {
			return nil, fmt.Errorf("nn: ClipGradNorm: gradient of parameter %d: %w", i, err)
		}
		if !g.DType().IsFloat() {
			return nil, fmt.Errorf("nn: ClipGradNorm: gradient of parameter %d has dtype %v: %w", i, g.DType(), array.ErrDType)
		}
		if g.DType() == array.Float64 {
			dt = array.Float64
		}
		gs = append(gs, g)
		vs = append(vs, v)
	}
	if len(gs) == 0 {
		return array.Zeros(dt), nil
	}
	dev := gs[0].Device()
	var total *array.Array
	// The pending terms read the gradients' memory: closed once the norm
	// is evaluated, they leave it to the gradients alone.
	var terms []*array.Array
	for _, g := range gs {
		c := g.AsType(dt)
		a := c.Abs()
		var t *array.Array
		switch {
		case math.IsInf(p, 1):
			t = a.Max()
		case p == 2:
			s := a.Square()
			t = s.Sum()
			terms = append(terms, s)
		default:
			s := a.Pow(p)
			t = s.Sum()
			terms = append(terms, s)
		}
		terms = append(terms, c, a)
		switch {
		case total == nil:
			total = t
		case math.IsInf(p, 1):
			total = total.Maximum(t)
		default:
			total = total.Add(t)
		}
		terms = append(terms, t, total)
	}
	switch {
	case p == 2:
		total = total.Sqrt()
	case !math.IsInf(p, 1):
		total = total.Pow(1 / p)
	}
	terms = append(terms, total)
	total = total.Copy() // evaluated once, read by every scaling
	for _, a := range terms {
		a.Close()
	}
	if err := total.Err(); err != nil {
		return nil, fmt.Errorf("nn: ClipGradNorm: %w", err)
	}
	if o.ErrorIfNonfinite {
		n, err := total.Item()
		if err != nil {
			return nil, fmt.Errorf("nn: ClipGradNorm: %w", err)
		}
		if math.IsNaN(n) || math.IsInf(n, 0) {
			return nil, fmt.Errorf("nn: ClipGradNorm: the total %v-norm of the gradients is %v: %w", p, n, ErrNonfinite)
		}
	}
	coef := array.On(dev).Full(dt, maxNorm).Div(total.Add(1e-6)).Minimum(1)
	// Each gradient is replaced by its scaled copy and closed, so that the
	// gradients' memory does not double until the collector runs.
	scaled := map[*array.Array]*array.Array{}
	for i, g := range gs {
		c := scaled[g]
		if c == nil {
			k := coef.AsType(g.DType())
			m := g.Mul(k)
			c = m.Copy().Persist()
			scaled[g] = c
			// The copy is evaluated: g, and the expressions that read it,
			// are needed no more.
			closeAll(m, k, g)
		}
		vs[i].SetGrad(c)
	}
	return total, nil
}
