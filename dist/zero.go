package dist

import (
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/gocu-dev/gocu/array"
	"github.com/gocu-dev/gocu/grad"
	"github.com/gocu-dev/gocu/nn"
)

// ZeRO1 is a data-parallel optimiser step with the optimiser's state
// sharded across the ranks (ZeRO stage 1, as llm.c's zero.cuh): the
// parameters are seen as one flat array cut into Size() equal shards, and
// each rank keeps the state (Adam's two moments) of its shard only, 1/Size()
// of the whole. A Step reduce-scatters the flattened gradients (each rank
// gets the average of its shard), updates its shard of the parameters and
// moments with the optimiser, and all-gathers the parameters: every
// replica ends with the same parameters an ordinary data-parallel step
// (all-reduce, then the optimiser on every rank) gives, to float rounding,
// for any optimiser that updates each element on its own (all of nn's).
//
// It implements nn.Optimizer: after the replicas' Backward, Step; then
// ZeroGrad. A parameter without a gradient counts as zeros.
type ZeRO1 struct {
	// MaxNorm, when > 0, clips the averaged gradients to this total
	// 2-norm before the update, as nn.ClipGradNorm over all parameters
	// would: each rank sums the squares of its shard and one all-reduce
	// of a scalar makes the total.
	MaxNorm float64

	c        *Comm
	replicas [][]*grad.Var
	dt       array.DType
	n, k     int            // elements of all parameters; of a shard
	offs     []int          // each parameter's offset in the flat array
	shards   []*grad.Var    // local rank i's shard of the parameters
	opts     []nn.Optimizer // local rank i's, over shards[i]
}

// NewZeRO1 shards the parameters of replicas, one list per local rank of
// c (in the order of c.Devices()), of one float dtype, with the same
// shapes in the same order on every rank, starting equal (Broadcast them
// first). newOpt makes the optimiser of one shard, such as
//
//	func(p []*grad.Var) nn.Optimizer { return nn.NewAdamW(p, 3e-4, 0.1) }
func NewZeRO1(c *Comm, newOpt func(shard []*grad.Var) nn.Optimizer, replicas ...[]*grad.Var) (*ZeRO1, error) {
	if err := c.live("NewZeRO1"); err != nil {
		return nil, err
	}
	if newOpt == nil {
		return nil, errors.New("dist: NewZeRO1: nil optimiser constructor")
	}
	if len(replicas) != len(c.devs) {
		return nil, fmt.Errorf("dist: NewZeRO1: %d replicas for %d local ranks (%s): pass one parameter list per rank", len(replicas), len(c.devs), names(c.devs))
	}
	ps := replicas[0]
	if len(ps) == 0 {
		return nil, errors.New("dist: NewZeRO1: no parameters")
	}
	z := &ZeRO1{c: c, replicas: replicas, dt: ps[0].DType()}
	if !z.dt.IsFloat() {
		return nil, fmt.Errorf("dist: NewZeRO1: parameters are %v: want floats: %w", z.dt, array.ErrDType)
	}
	for i, r := range replicas {
		if len(r) != len(ps) {
			return nil, fmt.Errorf("dist: NewZeRO1: replica %d has %d parameters, replica 0 %d", i, len(r), len(ps))
		}
		for j, p := range r {
			switch {
			case p == nil || !p.IsLeaf() || !p.RequiresGrad():
				return nil, fmt.Errorf("dist: NewZeRO1: replica %d, parameter %d is not a parameter (grad.Param)", i, j)
			case p.Value().Device() != c.devs[i]:
				return nil, fmt.Errorf("dist: NewZeRO1: replica %d, parameter %d is on %v, local rank %d on %v: %w", i, j, p.Value().Device(), i, c.devs[i], array.ErrDevice)
			case p.DType() != z.dt:
				return nil, fmt.Errorf("dist: NewZeRO1: replica %d, parameter %d is %v, parameter 0 %v: shard parameters of one dtype: %w", i, j, p.DType(), z.dt, array.ErrDType)
			case !slices.Equal(p.Shape(), ps[j].Shape()):
				return nil, fmt.Errorf("dist: NewZeRO1: replica %d, parameter %d has shape %v, replica 0's %v: %w", i, j, p.Shape(), ps[j].Shape(), array.ErrShape)
			}
		}
	}
	for _, p := range ps {
		z.offs = append(z.offs, z.n)
		z.n += p.Size()
	}
	z.k = (z.n + c.size - 1) / c.size
	for i, r := range replicas {
		flat, err := z.flatten(i, func(j int) *array.Array { return r[j].Value() })
		if err != nil {
			return nil, err
		}
		rank := c.ranks[i]
		shard := flat.Slice(array.S(rank*z.k, (rank+1)*z.k)).Copy()
		flat.Close()
		if err := shard.Err(); err != nil {
			return nil, fmt.Errorf("dist: NewZeRO1: %w", err)
		}
		v := grad.Param(shard)
		z.shards = append(z.shards, v)
		z.opts = append(z.opts, newOpt([]*grad.Var{v}))
	}
	return z, nil
}

// flatten concatenates local rank i's arrays of every parameter (at(j),
// nil for zeros), raveled, with zeros up to Size() shards.
func (z *ZeRO1) flatten(i int, at func(j int) *array.Array) (*array.Array, error) {
	m := array.On(z.c.devs[i])
	parts := make([]*array.Array, 0, len(z.offs)+1)
	for j, p := range z.replicas[i] {
		a := at(j)
		if a == nil {
			a = m.Zeros(z.dt, p.Size())
		}
		parts = append(parts, a.Reshape(-1))
	}
	if pad := z.k*z.c.size - z.n; pad > 0 {
		parts = append(parts, m.Zeros(z.dt, pad))
	}
	flat := array.Concat(0, parts...)
	for _, p := range parts {
		p.Close() // views and zeros: frees in stream order, after the copy
	}
	if err := flat.Err(); err != nil {
		return nil, fmt.Errorf("dist: ZeRO1: local rank %d: %w", i, err)
	}
	return flat, nil
}

// clip scales the shards of the averaged gradients, gs, by
// min(MaxNorm/(norm+1e-6), 1), the factor of nn.ClipGradNorm.
func (z *ZeRO1) clip(gs []*array.Array) error {
	if math.IsNaN(z.MaxNorm) || math.IsInf(z.MaxNorm, 0) {
		return fmt.Errorf("dist: ZeRO1: MaxNorm %v: want a finite number (0: no clipping)", z.MaxNorm)
	}
	sums := make([]*array.Array, len(gs))
	for i, g := range gs {
		sums[i] = g.AsType(array.Float32).Square().Sum().Copy() // padding adds zeros
		defer sums[i].Close()
	}
	if err := z.c.AllReduce(Sum, sums...); err != nil {
		return fmt.Errorf("dist: ZeRO1: the gradients' norm: %w", err)
	}
	for i, g := range gs {
		norm := sums[i].Sqrt()
		coef := array.On(z.c.devs[i]).Full(array.Float32, z.MaxNorm).Div(norm.Add(1e-6)).Minimum(1)
		if err := g.Assign(g.Mul(coef.AsType(g.DType()))); err != nil {
			return fmt.Errorf("dist: ZeRO1: clipping local rank %d's gradients: %w", i, err)
		}
	}
	return nil
}

// ShardSize returns the elements of the parameters (and of each moment)
// that one rank updates: the total divided by Size(), rounded up.
func (z *ZeRO1) ShardSize() int { return z.k }

// Optimizers returns the optimisers of the local ranks' shards (to set
// the learning rate, say).
func (z *ZeRO1) Optimizers() []nn.Optimizer { return slices.Clone(z.opts) }

// Params returns local rank 0's parameters (nn.Optimizer).
func (z *ZeRO1) Params() []*grad.Var { return z.replicas[0] }

// ZeroGrad clears every local replica's gradients and closes them, as nn's
// optimisers do.
func (z *ZeRO1) ZeroGrad() {
	for _, r := range z.replicas {
		for _, p := range r {
			if g := p.Grad(); g != nil {
				g.Close()
			}
			p.ZeroGrad()
		}
	}
}

// Step reduce-scatters the gradients (their average), updates each local
// rank's shard and all-gathers the parameters into every replica.
func (z *ZeRO1) Step() error {
	nl := len(z.c.devs)
	flats := make([]*array.Array, nl)
	gs := make([]*array.Array, nl)
	defer func() {
		for i := range nl {
			flats[i].Close()
			gs[i].Close()
		}
	}()
	for i, r := range z.replicas {
		var err error
		flats[i], err = z.flatten(i, func(j int) *array.Array {
			if g := r[j].Grad(); g != nil {
				return g
			}
			return nil
		})
		if err != nil {
			return err
		}
		gs[i] = array.On(z.c.devs[i]).Empty(z.dt, z.k)
	}
	if err := z.c.ReduceScatter(Avg, flats, gs); err != nil {
		return fmt.Errorf("dist: ZeRO1: the gradients: %w", err)
	}
	if z.MaxNorm > 0 {
		if err := z.clip(gs); err != nil {
			return err
		}
	}
	for i, o := range z.opts {
		flats[i].Close()
		z.shards[i].SetGrad(gs[i])
		err := o.Step()
		z.shards[i].SetGrad(nil)
		if err != nil {
			return fmt.Errorf("dist: ZeRO1: the update of local rank %d's shard: %w", i, err)
		}
		flats[i] = array.On(z.c.devs[i]).Empty(z.dt, z.k*z.c.size)
	}
	vals := make([]*array.Array, nl)
	for i, s := range z.shards {
		vals[i] = s.Value()
	}
	if err := z.c.AllGather(vals, flats); err != nil {
		return fmt.Errorf("dist: ZeRO1: the parameters: %w", err)
	}
	for i, r := range z.replicas {
		for j, p := range r {
			part := flats[i].Slice(array.S(z.offs[j], z.offs[j]+p.Size())).Reshape(p.Shape()...)
			err := p.Value().Assign(part)
			part.Close()
			if err != nil {
				return fmt.Errorf("dist: ZeRO1: parameter %d of local rank %d: %w", j, i, err)
			}
		}
	}
	return nil
}
