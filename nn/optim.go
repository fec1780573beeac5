package nn

import (
	"errors"
	"fmt"
	"math"

	"github.com/gocu-dev/gocu"
	"github.com/gocu-dev/gocu/array"
	"github.com/gocu-dev/gocu/cuda"
	"github.com/gocu-dev/gocu/grad"
)

// Optimizer updates parameters from their gradients.
type Optimizer interface {
	// Step updates every parameter that has a gradient (parameters
	// without one are skipped, as PyTorch's).
	Step() error
	// ZeroGrad clears every parameter's gradient (set to none) and closes
	// the gradient arrays, so that their memory returns to the device at
	// once instead of waiting for the garbage collector: do not keep a
	// Grad() array across it (Copy it).
	ZeroGrad()
	// Params returns the parameters.
	Params() []*grad.Var
}

// SGD is stochastic gradient descent with momentum, dampening, Nesterov
// momentum and L2 weight decay, as torch.optim.SGD:
//
//	g = grad + WeightDecay·p
//	b = g on the first step, else Momentum·b + (1-Dampening)·g
//	g = g + Momentum·b (Nesterov) or b
//	p = p - LR·g
//
// Fields may change between steps. See Adam for how a step runs.
type SGD struct {
	LR, Momentum, Dampening, WeightDecay float64
	Nesterov                             bool
	// Unfused computes each parameter's update with array expressions
	// (three or four passes per parameter) instead of the fused update.
	Unfused bool
	opt
}

// NewSGD returns plain SGD with learning rate lr; set the other fields
// for momentum and weight decay.
func NewSGD(params []*grad.Var, lr float64) *SGD {
	return &SGD{LR: lr, opt: newOpt(params)}
}

// Adam is Adam (or AdamW, with Decoupled), as torch.optim.Adam and AdamW:
//
//	g = grad (+ WeightDecay·p, Adam)       p = p·(1 - LR·WeightDecay) (AdamW)
//	m = m + (1-Beta1)·(g - m)
//	v = Beta2·v + (1-Beta2)·g²
//	p = p - LR/(1-Beta1ᵗ) · m / (√v/√(1-Beta2ᵗ) + Eps)
//
// with t the step count. SetWeightDecay gives some parameters another
// weight decay (DecayGroups: none for biases and norms). On a GPU one step
// is two kernel launches for all parameters of a dtype and weight decay
// (up to 32 per launch): one advances the step count, kept on the device so that a captured CUDA graph replays the
// bias correction right, and one updates every parameter and both moments
// in one pass over memory. On the CPU and the simulator it is one pass per
// parameter on all cores. The hyperparameters are read at each Step; a
// captured graph keeps those of the capture, except the learning rate,
// which the kernel reads from device memory that SetLR writes (schedules
// work with graphs).
type Adam struct {
	LR, Beta1, Beta2, Eps, WeightDecay float64
	// Decoupled applies the weight decay to the parameters (AdamW)
	// instead of adding it to the gradient.
	Decoupled bool
	// Unfused computes each parameter's update with array expressions.
	Unfused bool
	opt
}

// NewAdam returns Adam with learning rate lr and PyTorch's defaults:
// betas 0.9 and 0.999, eps 1e-8, no weight decay.
func NewAdam(params []*grad.Var, lr float64) *Adam {
	return &Adam{LR: lr, Beta1: 0.9, Beta2: 0.999, Eps: 1e-8, opt: newOpt(params)}
}

// NewAdamW returns AdamW (decoupled weight decay) with PyTorch's defaults
// and the given weight decay (PyTorch's default is 0.01).
func NewAdamW(params []*grad.Var, lr, weightDecay float64) *Adam {
	a := NewAdam(params, lr)
	a.WeightDecay, a.Decoupled = weightDecay, true
	return a
}

// opt is what the optimisers share: parameters, per-parameter state and
// the step count.
type opt struct {
	params []*grad.Var
	state  map[*grad.Var]*pstate
	steps  int
	counts map[*gocu.Device]*array.Array // step counts on GPUs (float64, 0-d)
	lrs    map[*gocu.Device]*array.Array // learning rates on GPUs (float64, 0-d)
	lrVal  map[*gocu.Device]float64      // what each holds
	ptrs   map[*array.Array]cuda.DevicePtr
	keep   []interface{ Free() error } // buffers behind ptrs
	// counted is the step at which each GPU's step count was last
	// advanced: once per step, however many groups update there.
	counted map[*gocu.Device]int
	// wd holds the weight decays set by SetWeightDecay.
	wd map[*grad.Var]float64
	// checked is the number of parameters checkParams last found distinct.
	checked int
}

// pstate is one parameter's optimiser state.
type pstate struct {
	m, v  *array.Array // Adam's moments; SGD's momentum buffer in m
	fresh bool         // SGD: the momentum buffer has not been set yet
	dp    devPtrs      // cached device pointers of the persistent arrays
}

func newOpt(params []*grad.Var) opt {
	return opt{params: params, state: map[*grad.Var]*pstate{}, counts: map[*gocu.Device]*array.Array{},
		lrs: map[*gocu.Device]*array.Array{}, lrVal: map[*gocu.Device]float64{}, ptrs: map[*array.Array]cuda.DevicePtr{},
		counted: map[*gocu.Device]int{}}
}

// Params implements Optimizer.
func (o *opt) Params() []*grad.Var { return o.params }

// ZeroGrad implements Optimizer.
func (o *opt) ZeroGrad() {
	seen := map[*array.Array]bool{}
	for _, p := range o.params {
		if g := p.Grad(); g != nil && !seen[g] {
			seen[g] = true
			g.Close()
		}
		p.ZeroGrad()
	}
}

// Steps returns the number of steps taken.
func (o *opt) Steps() int { return o.steps }

// item is a parameter with its gradient and state, for one step.
type item struct {
	p    *grad.Var
	val  *array.Array
	g    *array.Array
	st   *pstate
	flat bool // contiguous value and gradient: the fused paths apply
}

// group is parameters of one device, dtype and weight decay, updated
// together.
type group struct {
	items []item
	wd    float64
}

// gather lists the parameters that have gradients, creating their state
// (moments as zeros; two for Adam, one for SGD with momentum), grouped by
// device, dtype and weight decay (wd unless SetWeightDecay set another).
func (o *opt) gather(moments int, wd float64) ([]group, error) {
	type key struct {
		dev *gocu.Device
		dt  array.DType
		wd  float64
	}
	var order []key
	groups := map[key][]item{}
	for i, p := range o.params {
		g := p.Grad()
		if g == nil {
			continue
		}
		val := p.Value()
		if !val.DType().IsFloat() {
			return nil, fmt.Errorf("nn: parameter %d is %v; optimisers update float32 and float64 parameters", i, val.DType())
		}
		if !g.DType().Valid() { // a failed gradient (Err would also poll the device)
			return nil, fmt.Errorf("nn: gradient of parameter %d: %w", i, g.Err())
		}
		if g.DType() != val.DType() || !sameShape(g.Shape(), val.Shape()) {
			return nil, fmt.Errorf("nn: gradient of parameter %d has dtype %v and shape %v, the parameter %v and %v", i, g.DType(), g.Shape(), val.DType(), val.Shape())
		}
		st := o.state[p]
		if st == nil {
			st = &pstate{fresh: true}
			o.state[p] = st
		}
		if moments > 0 && (st.m == nil || !sameShape(st.m.Shape(), val.Shape()) || st.m.DType() != val.DType()) {
			st.m, st.v, st.fresh = zerosLike(val), nil, true
			err := st.m.Err()
			if moments > 1 {
				st.v = zerosLike(val)
				err = errors.Join(err, st.v.Err())
			}
			if err != nil {
				return nil, fmt.Errorf("nn: optimiser state of parameter %d: %w", i, err)
			}
		}
		it := item{p: p, val: val, g: g, st: st}
		it.flat = val.IsContiguous() && g.IsContiguous()
		k := key{val.Device(), val.DType(), wd}
		if d, ok := o.wd[p]; ok {
			k.wd = d
		}
		if _, ok := groups[k]; !ok {
			order = append(order, k)
		}
		groups[k] = append(groups[k], it)
	}
	out := make([]group, len(order))
	for i, k := range order {
		out[i] = group{groups[k], k.wd}
	}
	return out, nil
}

func zerosLike(a *array.Array) *array.Array {
	// Optimiser state outlives the step that made it: scopes leave it open.
	return array.On(a.Device()).Zeros(a.DType(), a.Shape()...).Copy().Persist()
}

func sameShape(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// setLR writes a new learning rate where the GPU kernels read it.
func (o *opt) setLR(lr float64) error {
	for dev, a := range o.lrs {
		if o.lrVal[dev] != lr {
			if err := a.Assign(lr); err != nil {
				return err
			}
			o.lrVal[dev] = lr
		}
	}
	return nil
}

// SetLR sets the learning rate now, also on the GPUs: a captured step
// replays with it (a plain assignment to LR takes effect at the next
// Step, which a replay does not run).
func (s *SGD) SetLR(lr float64) error {
	if err := checkLR("SGD", lr); err != nil {
		return err
	}
	s.LR = lr
	return s.setLR(lr)
}

// ErrHyper is wrapped by the error of an optimiser step or SetLR with a
// hyperparameter torch.optim refuses (a NaN, a negative learning rate, a
// beta outside [0, 1)).
var ErrHyper = errors.New("invalid hyperparameter")

func checkLR(name string, lr float64) error {
	if !(lr >= 0) || math.IsInf(lr, 0) {
		return fmt.Errorf("nn: %s: learning rate %v: want a finite number >= 0: %w", name, lr, ErrHyper)
	}
	return nil
}

// check validates SGD's hyperparameters as torch.optim.SGD does.
func (s *SGD) check() error {
	if err := checkLR("SGD", s.LR); err != nil {
		return err
	}
	for _, h := range []struct {
		name string
		v    float64
	}{{"momentum", s.Momentum}, {"dampening", s.Dampening}, {"weight decay", s.WeightDecay}} {
		if !(h.v >= 0) || math.IsInf(h.v, 0) {
			return fmt.Errorf("nn: SGD: %s %v: want a finite number >= 0: %w", h.name, h.v, ErrHyper)
		}
	}
	if s.Nesterov && (s.Momentum <= 0 || s.Dampening != 0) {
		return fmt.Errorf("nn: SGD: Nesterov momentum requires a momentum > 0 and zero dampening (have %v and %v): %w", s.Momentum, s.Dampening, ErrHyper)
	}
	return s.checkParams("SGD")
}

// check validates Adam's hyperparameters as torch.optim.Adam does.
func (a *Adam) check() error {
	if err := checkLR("Adam", a.LR); err != nil {
		return err
	}
	for i, b := range []float64{a.Beta1, a.Beta2} {
		if !(b >= 0 && b < 1) {
			return fmt.Errorf("nn: Adam: beta%d %v: want 0 <= beta < 1: %w", i+1, b, ErrHyper)
		}
	}
	if !(a.Eps >= 0) || math.IsInf(a.Eps, 0) {
		return fmt.Errorf("nn: Adam: eps %v: want a finite number >= 0: %w", a.Eps, ErrHyper)
	}
	if !(a.WeightDecay >= 0) || math.IsInf(a.WeightDecay, 0) {
		return fmt.Errorf("nn: Adam: weight decay %v: want a finite number >= 0: %w", a.WeightDecay, ErrHyper)
	}
	return a.checkParams("Adam")
}

// checkParams refuses a parameter listed twice, which a step would update
// twice. The list is checked once, and again when it changes length.
func (o *opt) checkParams(name string) error {
	if o.checked == len(o.params) && len(o.params) > 0 {
		return nil
	}
	seen := make(map[*grad.Var]int, len(o.params))
	for i, p := range o.params {
		if p == nil {
			return fmt.Errorf("nn: %s: parameter %d is nil: %w", name, i, grad.ErrNilVar)
		}
		if j, dup := seen[p]; dup {
			return fmt.Errorf("nn: %s: parameter %d is parameter %d again; list each parameter once: %w", name, i, j, ErrHyper)
		}
		seen[p] = i
	}
	o.checked = len(o.params)
	return nil
}

// SetLR sets the learning rate now, also on the GPUs: a captured step
// replays with it (a plain assignment to LR takes effect at the next
// Step, which a replay does not run).
func (a *Adam) SetLR(lr float64) error {
	if err := checkLR("Adam", lr); err != nil {
		return err
	}
	a.LR = lr
	return a.setLR(lr)
}

// Step implements Optimizer.
func (s *SGD) Step() error {
	if err := s.check(); err != nil {
		return err
	}
	moments := 0
	if s.Momentum != 0 {
		moments = 1
	}
	groups, err := s.gather(moments, s.WeightDecay)
	if err != nil {
		return err
	}
	s.steps++
	h := hyper{kind: kindSGD, lr: s.LR, momentum: s.Momentum, dampening: s.Dampening, nesterov: s.Nesterov, step: s.steps}
	for _, g := range groups {
		h.wd = g.wd
		if err := s.update(g.items, h, s.Unfused); err != nil {
			return err
		}
	}
	for _, g := range groups {
		for _, it := range g.items {
			it.st.fresh = false
		}
	}
	return nil
}

// Step implements Optimizer.
func (a *Adam) Step() error {
	if err := a.check(); err != nil {
		return err
	}
	groups, err := a.gather(2, a.WeightDecay)
	if err != nil {
		return err
	}
	a.steps++
	h := hyper{kind: kindAdam, lr: a.LR, beta1: a.Beta1, beta2: a.Beta2, eps: a.Eps, decoupled: a.Decoupled, step: a.steps}
	for _, g := range groups {
		h.wd = g.wd
		if err := a.update(g.items, h, a.Unfused); err != nil {
			return err
		}
	}
	return nil
}

type kind int

const (
	kindSGD kind = iota
	kindAdam
)

// hyper are one step's hyperparameters.
type hyper struct {
	kind                        kind
	lr, momentum, dampening, wd float64
	nesterov, decoupled         bool
	beta1, beta2, eps           float64
	step                        int // the step count on the host (Adam's t)
}

// biasCorrections returns Adam's step size LR/(1-β1ᵗ) and √(1-β2ᵗ).
func (h hyper) biasCorrections(t float64) (stepSize, bc2sqrt float64) {
	return h.lr / (1 - math.Pow(h.beta1, t)), math.Sqrt(1 - math.Pow(h.beta2, t))
}

// update runs one step for a group of one device and dtype: the fused
// update (a kernel on a GPU, a loop on the CPU) for contiguous parameters,
// array expressions for the rest or when asked.
func (o *opt) update(items []item, h hyper, unfused bool) error {
	var fused, rest []item
	for _, it := range items {
		if it.flat && !unfused {
			fused = append(fused, it)
		} else {
			rest = append(rest, it)
		}
	}
	for _, it := range items {
		// In-place writes must not change pending expressions that read
		// the old values.
		for _, a := range []*array.Array{it.val, it.st.m, it.st.v} {
			if a != nil {
				if err := a.EvalReaders(); err != nil {
					return err
				}
			}
		}
	}
	if len(fused) > 0 {
		var err error
		if fused[0].val.Device().IsGPU() {
			err = o.updateGPU(fused, h)
		} else {
			err = updateHost(fused, h)
		}
		if err != nil {
			return err
		}
	}
	for _, it := range rest {
		if err := updateExpr(it, h); err != nil {
			return err
		}
	}
	return nil
}
