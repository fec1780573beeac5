package nn

import (
	"fmt"
	"math"
)

// Schedule gives the learning rate of each step from the optimiser's
// initial one, as PyTorch's torch.optim.lr_scheduler classes do in their
// closed form. Step 0 is the first; a bad setting is an error that wraps
// ErrHyper.
type Schedule interface {
	LR(base float64, step int) (float64, error)
}

// StepLR multiplies the rate by Gamma every Size steps, as torch's StepLR:
// base·Gamma^⌊step/Size⌋.
type StepLR struct {
	Size  int
	Gamma float64
}

// LR implements Schedule.
func (s StepLR) LR(base float64, step int) (float64, error) {
	if s.Size < 1 {
		return 0, hyperErr("StepLR", "step size %d: want >= 1", s.Size)
	}
	if !(s.Gamma >= 0) || math.IsInf(s.Gamma, 0) {
		return 0, hyperErr("StepLR", "gamma %v: want a finite number >= 0", s.Gamma)
	}
	return base * math.Pow(s.Gamma, float64(step/s.Size)), nil
}

// CosineAnnealingLR anneals the rate from base to Min along half a cosine
// over TMax steps, as torch's CosineAnnealingLR (eta_min = Min):
// Min + (base-Min)·(1+cos(π·step/TMax))/2. Past TMax it rises again, as
// torch's closed form does.
type CosineAnnealingLR struct {
	TMax int
	Min  float64
}

// LR implements Schedule.
func (s CosineAnnealingLR) LR(base float64, step int) (float64, error) {
	if s.TMax < 1 {
		return 0, hyperErr("CosineAnnealingLR", "T_max %d: want >= 1", s.TMax)
	}
	if !(s.Min >= 0) || math.IsInf(s.Min, 0) {
		return 0, hyperErr("CosineAnnealingLR", "eta_min %v: want a finite number >= 0", s.Min)
	}
	return s.Min + (base-s.Min)*(1+math.Cos(math.Pi*float64(step)/float64(s.TMax)))/2, nil
}

// LinearLR scales the rate linearly from Start·base to End·base over
// Iters steps and keeps End·base after, as torch's LinearLR (start_factor,
// end_factor, total_iters): base·(Start + (End-Start)·min(step, Iters)/Iters).
// A linear warm-up is LinearLR{Start: small, End: 1, Iters: warm-up steps}.
type LinearLR struct {
	Start, End float64
	Iters      int
}

// LR implements Schedule.
func (s LinearLR) LR(base float64, step int) (float64, error) {
	if !(s.Start > 0 && s.Start <= 1) {
		return 0, hyperErr("LinearLR", "start factor %v: want 0 < start <= 1", s.Start)
	}
	if !(s.End >= 0 && s.End <= 1) {
		return 0, hyperErr("LinearLR", "end factor %v: want 0 <= end <= 1", s.End)
	}
	if s.Iters < 1 {
		return 0, hyperErr("LinearLR", "total iterations %d: want >= 1", s.Iters)
	}
	return base * (s.Start + (s.End-s.Start)*float64(min(step, s.Iters))/float64(s.Iters)), nil
}

// LambdaLR multiplies the rate by F(step), as torch's LambdaLR.
type LambdaLR struct {
	F func(step int) float64
}

// LR implements Schedule.
func (s LambdaLR) LR(base float64, step int) (float64, error) {
	if s.F == nil {
		return 0, hyperErr("LambdaLR", "nil function")
	}
	return base * s.F(step), nil
}

// WarmupCosine is the schedule of GPT training (nanoGPT's get_lr): a
// linear warm-up to base over Warmup steps, base·(step+1)/(Warmup+1), then
// a cosine decay to Min at step Decay, Min + (base-Min)·(1+cos(π·r))/2 with
// r = (step-Warmup)/(Decay-Warmup), then Min.
type WarmupCosine struct {
	Warmup, Decay int
	Min           float64
}

// LR implements Schedule.
func (s WarmupCosine) LR(base float64, step int) (float64, error) {
	if s.Warmup < 0 || s.Decay <= s.Warmup {
		return 0, hyperErr("WarmupCosine", "warm-up %d and decay %d steps: want 0 <= warm-up < decay", s.Warmup, s.Decay)
	}
	if !(s.Min >= 0) || math.IsInf(s.Min, 0) {
		return 0, hyperErr("WarmupCosine", "minimum %v: want a finite number >= 0", s.Min)
	}
	switch {
	case step < s.Warmup:
		return base * float64(step+1) / float64(s.Warmup+1), nil
	case step > s.Decay:
		return s.Min, nil
	}
	r := float64(step-s.Warmup) / float64(s.Decay-s.Warmup)
	return s.Min + (base-s.Min)*(1+math.Cos(math.Pi*r))/2, nil
}

func hyperErr(name, format string, args ...any) error {
	return fmt.Errorf("nn: %s: %s: %w", name, fmt.Sprintf(format, args...), ErrHyper)
}

// Scheduler sets an optimiser's learning rate from a Schedule, step by
// step, as a torch.optim.lr_scheduler: NewScheduler sets the rate of step
// 0, and each Step (call it after the optimiser's Step) that of the next.
type Scheduler struct {
	opt  lrSetter
	s    Schedule
	base float64
	step int
	rate float64
}

// lrSetter is what SGD and Adam have.
type lrSetter interface{ SetLR(float64) error }

// NewScheduler returns a Scheduler of o (an *SGD or *Adam) whose base
// rate is o's learning rate now, and sets o's rate to that of step 0.
func NewScheduler(o Optimizer, s Schedule) (*Scheduler, error) {
	var base float64
	switch o := o.(type) {
	case *SGD:
		base = o.LR
	case *Adam:
		base = o.LR
	default:
		return nil, fmt.Errorf("nn: NewScheduler: optimiser %T has no learning rate to schedule: %w", o, ErrHyper)
	}
	if s == nil {
		return nil, hyperErr("NewScheduler", "nil schedule")
	}
	sc := &Scheduler{opt: o.(lrSetter), s: s, base: base}
	if err := sc.set(); err != nil {
		return nil, err
	}
	return sc, nil
}

func (sc *Scheduler) set() error {
	lr, err := sc.s.LR(sc.base, sc.step)
	if err != nil {
		return err
	}
	if err := sc.opt.SetLR(lr); err != nil {
		return fmt.Errorf("nn: schedule at step %d: %w", sc.step, err)
	}
	sc.rate = lr
	return nil
}

// Step advances to the next step and sets its rate.
func (sc *Scheduler) Step() error {
	sc.step++
	return sc.set()
}

// LR returns the rate the schedule set last.
func (sc *Scheduler) LR() float64 { return sc.rate }

// Steps returns how many times Step was called.
func (sc *Scheduler) Steps() int { return sc.step }

// SetSteps moves the schedule to step n, as if Step had been called n
// times, and sets its rate: to resume a run whose optimiser state was
// loaded (LoadState), pass the Steps of the run saved.
func (sc *Scheduler) SetSteps(n int) error {
	if n < 0 {
		return hyperErr("Scheduler.SetSteps", "step %d: want >= 0", n)
	}
	sc.step = n
	return sc.set()
}
