package dist

import (
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/gocu-dev/gocu/array"
	"github.com/gocu-dev/gocu/cuda"
	"github.com/gocu-dev/gocu/grad"
)

// DefaultBucketBytes is the size of DDP's buckets without
// DDPOptions.BucketBytes: PyTorch's bucket_cap_mb of 25.
const DefaultBucketBytes = 25 << 20

// DDPOptions configures NewDDP; the zero value is PyTorch's defaults.
type DDPOptions struct {
	// BucketBytes bounds the gradients reduced together in one
	// collective (DefaultBucketBytes when 0). A parameter larger than it
	// has a bucket of its own.
	BucketBytes int
	// Sum adds the ranks' gradients instead of averaging them.
	Sum bool
}

// DDP reduces the gradients of data-parallel replicas while the backward
// pass runs, as PyTorch's DistributedDataParallel: the parameters are cut
// into buckets of about BucketBytes, in reverse order (the backward pass
// finishes the last layers first), and as soon as every gradient of a
// bucket is final (grad.Var.OnGradReady) the bucket is flattened into one
// array and all-reduced, so that communication overlaps the rest of the
// backward pass. Buckets are reduced in the same order on every rank.
//
// On GPUs the reductions run on a communication stream of each device,
// ordered after the gradients by events, while the default stream goes on
// with the backward pass; Wait makes the default stream wait for them,
// without waiting on the host. On the host backend a bucket is reduced at
// once, in the same order, with the same results.
//
// A step is: the replicas' Backward (on any goroutines), then Wait, then
// the optimiser's step. A parameter that a rank's pass did not reach is
// reduced as zeros: after Wait every parameter has the same gradient on
// every rank (zeros if no rank used it, where PyTorch leaves none).
type DDP struct {
	c        *Comm
	replicas [][]*grad.Var
	op       Op
	buckets  []*bucket
	where    []int // param index -> bucket
	removes  []func()
	streams  []*cuda.Stream // communication streams (GPUs)

	mu    sync.Mutex
	ready [][]bool // local rank, param: ready in this step
	next  int      // the next bucket to reduce
	err   error
}

// bucket is parameters reduced together: one dtype, contiguous in flat.
type bucket struct {
	params []int
	offs   []int // element offset of each in flat
	n      int
	dt     array.DType
	count  []int          // parameters ready, per local rank
	flats  []*array.Array // per local rank, between launch and Wait
	filled []*cuda.Event  // the flat is written (default stream)
	done   []*cuda.Event  // the reduction is done (communication stream)
}

// NewDDP registers the hooks on the parameters of replicas, one slice per
// local rank of c (in the order of c.Devices()), each with the same
// shapes and dtypes in the same order on every rank. The replicas must
// start equal (Broadcast them). Close removes the hooks.
func NewDDP(c *Comm, opts DDPOptions, replicas ...[]*grad.Var) (*DDP, error) {
	if err := c.live("NewDDP"); err != nil {
		return nil, err
	}
	if len(replicas) != len(c.devs) {
		return nil, fmt.Errorf("dist: NewDDP: %d replicas for %d local ranks (%s): pass one parameter list per rank", len(replicas), len(c.devs), names(c.devs))
	}
	if opts.BucketBytes < 0 {
		return nil, fmt.Errorf("dist: NewDDP: BucketBytes %d is negative", opts.BucketBytes)
	}
	if opts.BucketBytes == 0 {
		opts.BucketBytes = DefaultBucketBytes
	}
	ps := replicas[0]
	for i, r := range replicas {
		if len(r) != len(ps) {
			return nil, fmt.Errorf("dist: NewDDP: replica %d has %d parameters, replica 0 %d", i, len(r), len(ps))
		}
		for j, p := range r {
			if p == nil || !p.IsLeaf() || !p.RequiresGrad() {
				return nil, fmt.Errorf("dist: NewDDP: replica %d, parameter %d is not a parameter (grad.Param)", i, j)
			}
			if err := p.Err(); err != nil {
				return nil, fmt.Errorf("dist: NewDDP: replica %d, parameter %d: %w", i, j, err)
			}
			if p.Value().Device() != c.devs[i] {
				return nil, fmt.Errorf("dist: NewDDP: replica %d, parameter %d is on %v, local rank %d on %v: %w", i, j, p.Value().Device(), i, c.devs[i], array.ErrDevice)
			}
			if p.DType() != ps[j].DType() || !slices.Equal(p.Shape(), ps[j].Shape()) {
				return nil, fmt.Errorf("dist: NewDDP: replica %d, parameter %d is %v %v, replica 0's %v %v: %w", i, j, p.DType(), p.Shape(), ps[j].DType(), ps[j].Shape(), array.ErrShape)
			}
			if !p.DType().IsFloat() {
				return nil, fmt.Errorf("dist: NewDDP: parameter %d is %v: gradients are floats: %w", j, p.DType(), array.ErrDType)
			}
		}
	}
	op := Avg
	if opts.Sum {
		op = Sum
	}
	d := &DDP{c: c, replicas: replicas, op: op, where: make([]int, len(ps))}
	d.buckets = makeBuckets(ps, opts.BucketBytes, len(c.devs))
	for k, b := range d.buckets {
		for _, j := range b.params {
			d.where[j] = k
		}
	}
	d.ready = make([][]bool, len(replicas))
	for i := range d.ready {
		d.ready[i] = make([]bool, len(ps))
	}
	if _, ok := c.be.(*ncclBackend); ok {
		for _, dev := range c.devs {
			s, err := dev.CUDA().NewStream(cuda.StreamNonBlocking)
			if err != nil {
				d.closeStreams()
				return nil, fmt.Errorf("dist: NewDDP: the communication stream: %w", err)
			}
			d.streams = append(d.streams, s)
		}
	}
	for i, r := range replicas {
		for j, p := range r {
			d.removes = append(d.removes, p.OnGradReady(func(*grad.Var) { d.onReady(i, j) }))
		}
	}
	return d, nil
}

// makeBuckets cuts the parameters, last first, into buckets of one dtype
// of at most limit bytes (a larger parameter alone).
func makeBuckets(ps []*grad.Var, limit, local int) []*bucket {
	var out []*bucket
	var cur *bucket
	for j := len(ps) - 1; j >= 0; j-- {
		p := ps[j]
		n := p.Size()
		bytes := n * p.DType().Size()
		if cur == nil || cur.dt != p.DType() || (cur.n > 0 && (cur.n+n)*cur.dt.Size() > limit) {
			cur = &bucket{dt: p.DType(), count: make([]int, local), flats: make([]*array.Array, local)}
			out = append(out, cur)
		}
		cur.params = append(cur.params, j)
		cur.offs = append(cur.offs, cur.n)
		cur.n += n
		if bytes >= limit {
			cur = nil
		}
	}
	return out
}

// Buckets returns the parameter indices of each bucket, in the order they
// are reduced.
func (d *DDP) Buckets() [][]int {
	out := make([][]int, len(d.buckets))
	for k, b := range d.buckets {
		out[k] = slices.Clone(b.params)
	}
	return out
}

// Launched returns how many buckets have been reduced, or queued for
// reduction, in the step under way.
func (d *DDP) Launched() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.next
}

// onReady is the hook of parameter j of local rank i.
func (d *DDP) onReady(i, j int) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.ready[i][j] {
		if d.err == nil {
			d.err = fmt.Errorf("dist: DDP: parameter %d of local rank %d got a second gradient before Wait: call Wait after every Backward", j, i)
		}
		return
	}
	d.ready[i][j] = true
	b := d.buckets[d.where[j]]
	b.count[i]++
	for d.next < len(d.buckets) && d.err == nil && d.full(d.buckets[d.next]) {
		d.err = d.launch(d.buckets[d.next])
		d.next++
	}
}

func (d *DDP) full(b *bucket) bool {
	for _, n := range b.count {
		if n < len(b.params) {
			return false
		}
	}
	return true
}

// launch flattens the bucket's gradients (zeros for those not ready) and
// starts reducing them; d.mu is held.
func (d *DDP) launch(b *bucket) error {
	for i, r := range d.replicas {
		parts := make([]*array.Array, len(b.params))
		for k, j := range b.params {
			p := r[j]
			if g := p.Grad(); g != nil && d.ready[i][j] {
				parts[k] = g.Reshape(-1)
			} else {
				parts[k] = array.On(d.c.devs[i]).Zeros(b.dt, p.Size())
			}
		}
		flat := array.Concat(0, parts...) // new memory, even for one part
		for _, p := range parts {
			p.Close() // views and zeros: frees in stream order, after the copy
		}
		if err := flat.Err(); err != nil {
			return fmt.Errorf("dist: DDP: local rank %d: %w", i, err)
		}
		b.flats[i] = flat
	}
	what := fmt.Sprintf("DDP bucket of %d parameters", len(b.params))
	nb, ok := d.c.be.(*ncclBackend)
	if !ok {
		if err := d.c.AllReduce(d.op, b.flats...); err != nil {
			return fmt.Errorf("dist: %s: %w", what, err)
		}
		return nil
	}
	if err := d.c.live(what); err != nil {
		return err
	}
	if _, err := memories(b.flats); err != nil { // queue the flattening first
		return err
	}
	if b.filled == nil {
		for _, dev := range d.c.devs {
			f, err := dev.CUDA().NewEvent(cuda.EventDisableTiming)
			if err != nil {
				return err
			}
			b.filled = append(b.filled, f)
			e, err := dev.CUDA().NewEvent(cuda.EventDisableTiming)
			if err != nil {
				return err
			}
			b.done = append(b.done, e)
		}
	}
	for i, dev := range d.c.devs {
		if err := b.filled[i].Record(dev.Stream().CUDA()); err != nil {
			return err
		}
		if err := d.streams[i].WaitEvent(b.filled[i]); err != nil {
			return err
		}
	}
	if err := nb.allReduceOn(b.flats, d.op, d.streams, func() string { return what }); err != nil {
		return err
	}
	for i := range d.c.devs {
		if err := b.done[i].Record(d.streams[i]); err != nil {
			return err
		}
	}
	return nil
}

// Wait reduces the buckets the backward pass did not complete (parameters
// it did not reach count as zeros), orders the default streams after the
// reductions, and gives every parameter its reduced gradient: a view of
// the bucket's array, replacing (and closing) the one Backward left. Call
// it after every Backward of every local replica, before the optimiser's
// step. It does not wait on the host.
func (d *DDP) Wait() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	err := d.err
	for err == nil && d.next < len(d.buckets) {
		err = d.launch(d.buckets[d.next])
		d.next++
	}
	launched := d.buckets[:d.next]
	for _, b := range launched {
		for i, dev := range d.c.devs {
			if b.flats[i] == nil {
				continue
			}
			if err == nil && b.done != nil {
				err = dev.Stream().CUDA().WaitEvent(b.done[i])
			}
			if err == nil {
				d.scatter(b, i)
			}
			b.flats[i].Close() // the views keep the memory
			b.flats[i] = nil
		}
	}
	for _, b := range d.buckets {
		clear(b.count)
	}
	for _, r := range d.ready {
		clear(r)
	}
	d.next, d.err = 0, nil
	return err
}

// scatter gives local rank i's parameters of b their reduced gradients.
func (d *DDP) scatter(b *bucket, i int) {
	for k, j := range b.params {
		p := d.replicas[i][j]
		g := b.flats[i].Slice(array.S(b.offs[k], b.offs[k]+p.Size())).Reshape(p.Shape()...)
		old := p.Grad()
		p.SetGrad(g)
		if old != nil {
			old.Close()
		}
	}
}

// Close removes the hooks and releases the communication streams; the
// Comm stays open.
func (d *DDP) Close() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, r := range d.removes {
		r()
	}
	d.removes = nil
	var errs []error
	for _, b := range d.buckets {
		for k := range b.filled {
			errs = append(errs, b.filled[k].Close(), b.done[k].Close())
		}
		b.filled, b.done = nil, nil
	}
	errs = append(errs, d.closeStreams())
	return errors.Join(errs...)
}

func (d *DDP) closeStreams() error {
	var errs []error
	for _, s := range d.streams {
		errs = append(errs, s.Close())
	}
	d.streams = nil
	return errors.Join(errs...)
}
