package gpttrain

import (
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/gocu-dev/gocu"
	"github.com/gocu-dev/gocu/array"
	"github.com/gocu-dev/gocu/dist"
	"github.com/gocu-dev/gocu/gpt"
	"github.com/gocu-dev/gocu/grad"
	"github.com/gocu-dev/gocu/nn"
)

// replicas is data-parallel training: a model and its optimiser on each
// local rank of a communicator. Every rank draws the same global batch
// and trains on its rows (dist.Split); the gradients are averaged while
// the backward pass runs (dist.DDP), or reduce-scattered into the shards
// of a ZeRO-1 step (dist.ZeRO1).
type replicas struct {
	comm   *dist.Comm
	batch  int // windows per global batch
	ctx    int // tokens per window
	models []*gpt.Model
	makers []*array.Maker
	opts   []*nn.Adam // one per local rank, without ZeRO-1
	ddp    *dist.DDP
	zero   *dist.ZeRO1
	shards []*shardAdamW // the optimisers of the ZeRO-1 shards
	clip   float64
	lo, hi []int          // each local rank's rows of a batch
	weight []float64      // the factor of each local rank's loss
	accs   []*array.Array // each local rank's share of the losses since the last read
	losses []*grad.Var
}

// newReplicas builds a replica of init (or of a new model from cfg.Seed)
// on each local device of c, makes them equal to global rank 0's, and
// their optimisers.
func newReplicas(cfg *Config, c *dist.Comm, init *gpt.Model) (*replicas, error) {
	size := c.Size()
	r := &replicas{comm: c, batch: cfg.Batch, ctx: cfg.Model.Context, clip: cfg.Clip}
	var params [][]*grad.Var
	for i, d := range c.Devices() {
		mk := array.On(d)
		m, err := gpt.New(mk.NewRNG(cfg.Seed), cfg.Model)
		if err != nil {
			return nil, err
		}
		if init != nil {
			for j, p := range m.Params() {
				if err := p.Value().Assign(init.Params()[j].Value().To(d)); err != nil {
					return nil, fmt.Errorf("the initial weights on %v: %w", d, err)
				}
			}
		}
		if cfg.BF16 {
			m.Compute = array.BFloat16
		}
		lo, hi := dist.Split(cfg.Batch, size, c.Rank(i))
		w := 1.0
		if cfg.Batch%size != 0 {
			// An uneven split: the Avg of the gradients of losses weighted
			// by each rank's share is the gradient of the batch's mean.
			w = float64((hi-lo)*size) / float64(cfg.Batch)
		}
		r.models = append(r.models, m)
		r.makers = append(r.makers, mk)
		r.lo, r.hi, r.weight = append(r.lo, lo), append(r.hi, hi), append(r.weight, w)
		r.accs = append(r.accs, mk.Zeros(array.Float64).Copy())
		params = append(params, m.Params())
	}
	r.losses = make([]*grad.Var, len(r.models))
	err := c.Group(func() error {
		for j := range params[0] {
			vals := make([]*array.Array, len(params))
			for i := range params {
				vals[i] = params[i][j].Value()
			}
			if err := c.Broadcast(0, vals...); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("the initial weights: %w", err)
	}
	if cfg.ZeRO {
		if err := r.newZeRO(cfg, params); err != nil {
			return nil, err
		}
		return r, nil
	}
	for _, m := range r.models {
		opt, err := newAdamW(cfg, m)
		if err != nil {
			return nil, err
		}
		r.opts = append(r.opts, opt)
	}
	if r.ddp, err = dist.NewDDP(c, dist.DDPOptions{}, params...); err != nil {
		return nil, err
	}
	return r, nil
}

// newAdamW returns the optimiser of m: AdamW without weight decay for
// biases and norms.
func newAdamW(cfg *Config, m *gpt.Model) (*nn.Adam, error) {
	opt := nn.NewAdamW(m.Params(), cfg.LR, cfg.Decay)
	opt.Beta2 = cfg.Beta2
	if _, noDecay := nn.DecayGroups(m); len(noDecay) > 0 {
		if err := opt.SetWeightDecay(noDecay, 0); err != nil {
			return nil, err
		}
	}
	return opt, nil
}

// newZeRO shards the optimiser state: each shard's AdamW decays only the
// elements of the parameters that decay on one device.
func (r *replicas) newZeRO(cfg *Config, params [][]*grad.Var) error {
	z, err := dist.NewZeRO1(r.comm, func(shard []*grad.Var) nn.Optimizer {
		a := nn.NewAdamW(shard, cfg.LR, 0)
		a.Beta2 = cfg.Beta2
		o := &shardAdamW{Adam: a, decay: cfg.Decay}
		r.shards = append(r.shards, o)
		return o
	}, params...)
	if err != nil {
		return err
	}
	z.MaxNorm = cfg.Clip
	r.zero = z
	// The mask of the decayed elements, in ZeRO1's layout: the parameters
	// raveled in order, padded to Size() shards of ShardSize.
	_, noDecay := nn.DecayGroups(r.models[0])
	skip := map[*grad.Var]bool{}
	for _, p := range noDecay {
		skip[p] = true
	}
	k := z.ShardSize()
	mask := make([]bool, k*r.comm.Size())
	off := 0
	for _, p := range params[0] {
		if !skip[p] {
			for e := off; e < off+p.Size(); e++ {
				mask[e] = true
			}
		}
		off += p.Size()
	}
	for i, o := range r.shards {
		rank := r.comm.Rank(i)
		o.mask = array.FromSliceOn(r.makers[i].Device(), mask[rank*k:(rank+1)*k], k).Persist()
	}
	return nil
}

// shardAdamW is AdamW over a ZeRO-1 shard, the raveled elements of several
// parameters: the weight decay applies where mask is true, as the decay
// groups of one device's optimiser say.
type shardAdamW struct {
	*nn.Adam // without weight decay
	decay    float64
	mask     *array.Array
}

// Step decays the masked elements, p·(1 - LR·decay) as AdamW does first,
// and takes the Adam step.
func (o *shardAdamW) Step() error {
	if o.decay != 0 && o.mask != nil {
		for _, p := range o.Params() {
			if p.Grad() == nil {
				continue
			}
			v := p.Value()
			f := float32(1 - o.LR*o.decay)
			if err := v.Assign(array.Where(o.mask, v.Mul(f), v)); err != nil {
				return err
			}
		}
	}
	return o.Adam.Step()
}

// setLR sets every local optimiser's learning rate.
func (r *replicas) setLR(lr float64) error {
	for _, o := range r.opts {
		if err := o.SetLR(lr); err != nil {
			return err
		}
	}
	for _, o := range r.shards {
		if err := o.SetLR(lr); err != nil {
			return err
		}
	}
	return nil
}

// step trains on a global batch: rows holds its windows of ctx+1 tokens.
func (r *replicas) step(rows []byte) error {
	scopes := r.scopes()
	defer closeAll(scopes)
	T := r.ctx
	xs := make([]*array.Array, len(r.models))
	ys := make([]*array.Array, len(r.models))
	for i := range r.models {
		xs[i], ys[i] = Batch(r.makers[i], rows[r.lo[i]*(T+1):r.hi[i]*(T+1)], r.hi[i]-r.lo[i], T)
	}
	return r.stepOn(xs, ys)
}

// scopes opens a scope on each device, here: replicas on one device
// (cpu,cpu) share its scopes.
func (r *replicas) scopes() []*array.Scope {
	var scopes []*array.Scope
	seen := map[*array.Maker]bool{}
	for _, mk := range r.makers {
		if !seen[mk] {
			seen[mk] = true
			scopes = append(scopes, mk.NewScope())
		}
	}
	return scopes
}

func closeAll(scopes []*array.Scope) {
	for k := len(scopes) - 1; k >= 0; k-- {
		scopes[k].Close()
	}
}

// stepOn trains on the local ranks' rows of a global batch: inputs xs[i]
// and targets ys[i] on local rank i's device.
func (r *replicas) stepOn(xs, ys []*array.Array) error {
	errs := make([]error, len(r.models))
	pass := func(i int) {
		loss := r.models[i].Loss(xs[i], ys[i])
		r.losses[i] = loss
		if r.weight[i] != 1 {
			loss = loss.Mul(r.weight[i])
		}
		errs[i] = loss.Backward()
	}
	if len(r.models) == 1 {
		pass(0)
	} else {
		var wg sync.WaitGroup
		for i := range r.models {
			wg.Go(func() { pass(i) })
		}
		wg.Wait()
	}
	err := errors.Join(errs...)
	if r.ddp != nil {
		err = errors.Join(err, r.ddp.Wait()) // also after a failed pass: the next step starts clean
	}
	if err == nil {
		err = r.update()
	}
	if r.zero != nil {
		r.zero.ZeroGrad()
	}
	for _, o := range r.opts {
		o.ZeroGrad()
	}
	for i, l := range r.losses {
		share := float64(r.hi[i]-r.lo[i]) / float64(r.batch)
		if err == nil {
			err = r.accs[i].Assign(r.accs[i].Add(l.Value().AsType(array.Float64).Mul(share)))
		}
		r.losses[i] = nil
	}
	return err
}

// update clips the averaged gradients and takes the optimisers' steps.
func (r *replicas) update() error {
	if r.zero != nil {
		return r.zero.Step()
	}
	for i, m := range r.models {
		if r.clip > 0 {
			// Every replica holds the average: the norm is the global one.
			if _, err := nn.ClipGradNorm(m.Params(), r.clip, nil); err != nil {
				return err
			}
		}
		if err := r.opts[i].Step(); err != nil {
			return err
		}
	}
	return nil
}

// lossSum returns the losses since the last call summed over the steps,
// each step's the mean over its global batch, and clears them: a
// collective, which waits for the devices.
func (r *replicas) lossSum() (float64, error) {
	xs := make([]*array.Array, len(r.accs))
	for i, a := range r.accs {
		xs[i] = a.Copy()
		defer xs[i].Close()
		if err := a.Assign(0); err != nil {
			return 0, err
		}
	}
	if err := r.comm.AllReduce(dist.Sum, xs...); err != nil {
		return 0, err
	}
	return xs[0].Item()
}

// agree returns global rank 0's v on every rank: a collective, so that
// decisions taken from clocks (the steps that fit, stopping) are the same
// everywhere.
func (r *replicas) agree(v float64) (float64, error) {
	xs := make([]*array.Array, len(r.makers))
	for i, mk := range r.makers {
		xs[i] = mk.Full(array.Float64, v).Copy()
		defer xs[i].Close()
	}
	if err := r.comm.Broadcast(0, xs...); err != nil {
		return 0, err
	}
	return xs[0].Item()
}

// sync waits for every local device.
func (r *replicas) sync() error {
	var errs []error
	for _, mk := range r.makers {
		errs = append(errs, mk.Sync())
	}
	return errors.Join(errs...)
}

func (r *replicas) close() error {
	var errs []error
	if r.ddp != nil {
		errs = append(errs, r.ddp.Close())
	}
	for _, a := range r.accs {
		a.Close()
	}
	return errors.Join(errs...)
}

// where says which ranks this process drives and where: "2 ranks,
// data-parallel (host; this process: ranks 0-1 on cpu, cpu)".
func where(c *dist.Comm) string {
	n := len(c.Devices())
	names := make([]string, n)
	for i, d := range c.Devices() {
		names[i] = d.String()
	}
	ranks := fmt.Sprintf("rank %d", c.Rank(0))
	if n > 1 {
		ranks = fmt.Sprintf("ranks %d-%d", c.Rank(0), c.Rank(n-1))
	}
	return fmt.Sprintf("%d ranks, data-parallel (%s; this process: %s on %s)", c.Size(), c.Backend(), ranks, strings.Join(names, ", "))
}

// sameKind reports an error unless devs are of one kind.
func sameKind(devs []*gocu.Device) error {
	for _, d := range devs {
		if d == nil {
			return fmt.Errorf("a nil device in Devices: %w", ErrConfig)
		}
		if d.Kind() != devs[0].Kind() {
			names := make([]string, len(devs))
			for i, d := range devs {
				names[i] = d.String()
			}
			return fmt.Errorf("devices %s: data-parallel replicas run on devices of one kind: %w", strings.Join(names, ", "), ErrConfig)
		}
	}
	return nil
}
