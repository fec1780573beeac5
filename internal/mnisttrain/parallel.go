package mnisttrain

import (
	"errors"
	"fmt"
	"sync"

	"github.com/gocu-dev/gocu/array"
	"github.com/gocu-dev/gocu/dist"
	"github.com/gocu-dev/gocu/grad"
)

// Parallel is data-parallel training: one Trainer (model replica and
// optimiser) per local rank of a communicator. Each global batch is split
// across all ranks (dist.Split); every replica computes the gradients of
// its share, the gradients are averaged across the ranks in one dist
// Group, and every replica takes the same optimiser step, so the replicas
// stay equal. On GPUs the reductions are queued on each device's stream
// between the backward pass and the step: nothing waits on the host.
//
// The average is the gradient of the loss over the whole batch: with
// equal shares an Avg all-reduce of the shares' gradients; otherwise (a
// last, shorter batch) each share's loss is weighted by its share of the
// batch and the gradients summed. With one rank it computes what Trainer
// does, to the bit.
type Parallel struct {
	Comm     *dist.Comm
	Replicas []*Trainer // one per local rank, on Comm.Devices()[i]
	losses   []*grad.Var
}

// NewParallel builds a replica on each of c's devices from seed and
// broadcasts global rank 0's parameters to all ranks (they are equal
// already, the seed fixes them on every device: the broadcast makes it
// so whatever the initialisation).
func NewParallel(c *dist.Comm, seed uint64, hidden int, lr float64) (*Parallel, error) {
	p := &Parallel{Comm: c}
	for _, d := range c.Devices() {
		p.Replicas = append(p.Replicas, NewTrainer(array.On(d), seed, hidden, lr))
	}
	p.losses = make([]*grad.Var, len(p.Replicas))
	if err := p.Broadcast(0); err != nil {
		return nil, err
	}
	return p, nil
}

// params returns parameter j of every replica's value, or their gradients.
func (p *Parallel) params(j int, grads bool) []*array.Array {
	xs := make([]*array.Array, len(p.Replicas))
	for i, t := range p.Replicas {
		v := t.Opt.Params()[j]
		if grads {
			xs[i] = v.Grad()
		} else {
			xs[i] = v.Value()
		}
	}
	return xs
}

// Broadcast copies the parameters of global rank root to every rank.
func (p *Parallel) Broadcast(root int) error {
	return p.Comm.Group(func() error {
		for j := range p.Replicas[0].Opt.Params() {
			if err := p.Comm.Broadcast(root, p.params(j, false)...); err != nil {
				return err
			}
		}
		return nil
	})
}

// Step trains on one global batch of batch images: xs[i] and ys[i] are
// local rank i's share, the rows dist.Split(batch, Size(), rank) of it.
func (p *Parallel) Step(xs, ys []*array.Array, batch int) error {
	size := p.Comm.Size()
	equal := batch%size == 0
	op := dist.Avg
	if !equal {
		op = dist.Sum
	}
	scales := func(i int) (share int, grad, loss float64) {
		lo, hi := dist.Split(batch, size, p.Comm.Rank(i))
		share = hi - lo
		loss = float64(share) / float64(batch)
		if size == 1 {
			loss = 1
		}
		grad = 1
		if !equal {
			grad = loss
		}
		return share, grad, loss
	}
	// The replicas' forward and backward passes, each from its own
	// goroutine so that several GPUs are kept busy at once.
	errs := make([]error, len(p.Replicas))
	pass := func(i int) {
		t := p.Replicas[i]
		share, gs, _ := scales(i)
		if xs[i].Shape()[0] != share {
			errs[i] = fmt.Errorf("mnisttrain: rank %d's share of a batch of %d is %d rows, got %d", p.Comm.Rank(i), batch, share, xs[i].Shape()[0])
			return
		}
		if share == 0 {
			// No rows here: this rank adds zero gradients.
			t.Opt.ZeroGrad()
			for _, v := range t.Opt.Params() {
				v.SetGrad(array.On(v.Value().Device()).Zeros(v.DType(), v.Shape()...).Copy())
			}
			p.losses[i] = nil
			return
		}
		p.losses[i], errs[i] = t.backward(xs[i], ys[i], gs)
		for _, v := range t.Opt.Params() {
			if g := v.Grad(); g != nil && !g.IsContiguous() {
				v.SetGrad(g.Contiguous())
			}
		}
	}
	if len(p.Replicas) == 1 {
		pass(0)
	} else {
		var wg sync.WaitGroup
		for i := range p.Replicas {
			wg.Go(func() { pass(i) })
		}
		wg.Wait()
	}
	if err := errors.Join(errs...); err != nil {
		return err
	}
	err := p.Comm.Group(func() error {
		for j := range p.Replicas[0].Opt.Params() {
			if err := p.Comm.AllReduce(op, p.params(j, true)...); err != nil {
				return fmt.Errorf("mnisttrain: the gradients of parameter %d: %w", j, err)
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	for i, t := range p.Replicas {
		_, _, ls := scales(i)
		if err := t.update(p.losses[i], ls); err != nil {
			return err
		}
		p.losses[i] = nil
	}
	return nil
}

// SetLR sets every replica's learning rate.
func (p *Parallel) SetLR(lr float64) error {
	for _, t := range p.Replicas {
		if err := t.Opt.SetLR(lr); err != nil {
			return err
		}
	}
	return nil
}

// LossSum is the running sum of the batches' losses over all ranks (a
// collective: every rank calls it at the same step; it waits for the
// devices).
func (p *Parallel) LossSum() (float64, error) {
	if p.Comm.Size() == 1 {
		return p.Replicas[0].LossSum()
	}
	xs := make([]*array.Array, len(p.Replicas))
	for i, t := range p.Replicas {
		xs[i] = t.acc.Copy()
		defer xs[i].Close()
	}
	if err := p.Comm.AllReduce(dist.Sum, xs...); err != nil {
		return 0, err
	}
	return xs[0].Item()
}

// Sync waits for every local device.
func (p *Parallel) Sync() error {
	var errs []error
	for _, t := range p.Replicas {
		errs = append(errs, t.dev.Sync())
	}
	return errors.Join(errs...)
}
