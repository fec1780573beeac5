package dist

import (
	"errors"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"time"

	"github.com/gocu-dev/gocu"
	"github.com/gocu-dev/gocu/array"
	"github.com/gocu-dev/gocu/cuda"
	"github.com/gocu-dev/gocu/nccl"
)

// ncclBackend runs the collectives through NCCL, on each device's default
// stream, where the arrays queue their own operations.
type ncclBackend struct {
	devs  []*gocu.Device
	comms []*nccl.Comm

	mu      sync.Mutex
	depth   int             // Group calls in progress
	keep    []*array.Array  // arrays of collectives recorded in the Group, kept until it is issued
	grouped []func() string // what the open Group issues, for the watchdog

	wd     *watchdog // nil when GOCU_DIST_TIMEOUT is off
	evMu   sync.Mutex
	events [][]*cuda.Event // free events, per local rank
}

func newNCCLAll(devs []*gocu.Device) (*ncclBackend, error) {
	timeout, err := envTimeout()
	if err != nil {
		return nil, err
	}
	cds := make([]*cuda.Device, len(devs))
	for i, d := range devs {
		cds[i] = d.CUDA()
	}
	comms, err := nccl.InitAll(cds)
	if err != nil {
		return nil, fmt.Errorf("dist: New: %w", err)
	}
	b := &ncclBackend{devs: devs, comms: comms}
	b.watch(timeout, fmt.Sprintf("ranks 0 to %d", len(devs)-1))
	return b, nil
}

func newNCCLRank(id nccl.UniqueID, nranks, rank int, dev *gocu.Device) (*ncclBackend, error) {
	timeout, err := envTimeout()
	if err != nil {
		return nil, err
	}
	comm, err := nccl.InitRank(id, nranks, rank, dev.CUDA())
	if err != nil {
		return nil, fmt.Errorf("dist: Join: %w", err)
	}
	b := &ncclBackend{devs: []*gocu.Device{dev}, comms: []*nccl.Comm{comm}}
	b.watch(timeout, fmt.Sprintf("rank %d of %d", rank, nranks))
	return b, nil
}

// watch starts the watchdog, unless timeout is 0 (off).
func (b *ncclBackend) watch(timeout time.Duration, desc string) {
	b.events = make([][]*cuda.Event, len(b.comms))
	if timeout <= 0 {
		return
	}
	b.wd = newWatchdog(timeout, desc, b.asyncErr, func() { _ = b.abortComms() })
}

// asyncErr returns NCCL's asynchronous error of the first local rank that
// has one.
func (b *ncclBackend) asyncErr() error {
	for _, c := range b.comms {
		if err := c.AsyncError(); err != nil && !errors.Is(err, nccl.ErrDestroyed) {
			return err
		}
	}
	return nil
}

func (b *ncclBackend) failure() error { return b.wd.failure() }

// track has the watchdog wait for what was just queued on the local
// ranks' streams (nil: the default streams).
func (b *ncclBackend) track(what func() string, streams []*cuda.Stream) error {
	if b.wd == nil {
		return nil
	}
	evs := make([]*cuda.Event, 0, len(b.comms))
	for i, d := range b.devs {
		e, err := b.event(i)
		if err == nil {
			s := d.Stream().CUDA()
			if streams != nil {
				s = streams[i]
			}
			err = e.Record(s)
		}
		if err != nil {
			b.putEvents(evs)
			return fmt.Errorf("dist: %s: the watchdog's event: %w", what(), err)
		}
		evs = append(evs, e)
	}
	b.wd.add(what, func() (bool, error) {
		for _, e := range evs {
			if ok, err := e.Query(); err != nil || !ok {
				return false, err
			}
		}
		return true, nil
	}, func() { b.putEvents(evs) })
	return nil
}

// event returns a free event of local rank i.
func (b *ncclBackend) event(i int) (*cuda.Event, error) {
	b.evMu.Lock()
	if n := len(b.events[i]); n > 0 {
		e := b.events[i][n-1]
		b.events[i] = b.events[i][:n-1]
		b.evMu.Unlock()
		return e, nil
	}
	b.evMu.Unlock()
	return b.devs[i].CUDA().NewEvent(cuda.EventDisableTiming)
}

// putEvents returns events, one per local rank in order, to the pool.
func (b *ncclBackend) putEvents(evs []*cuda.Event) {
	b.evMu.Lock()
	defer b.evMu.Unlock()
	for i, e := range evs {
		b.events[i] = append(b.events[i], e)
	}
}

func (b *ncclBackend) name() string { return "nccl" }

// ncclType is the NCCL type of an array dtype.
func ncclType(dt array.DType) (nccl.DataType, error) {
	switch dt {
	case array.Uint8:
		return nccl.Uint8, nil
	case array.Int8:
		return nccl.Int8, nil
	case array.Int32:
		return nccl.Int32, nil
	case array.Int64:
		return nccl.Int64, nil
	case array.Uint32:
		return nccl.Uint32, nil
	case array.Uint64:
		return nccl.Uint64, nil
	case array.Float16:
		return nccl.Float16, nil
	case array.BFloat16:
		return nccl.BFloat16, nil
	case array.Float32:
		return nccl.Float32, nil
	case array.Float64:
		return nccl.Float64, nil
	case array.Float8E4M3:
		return nccl.Float8E4M3, nil
	case array.Float8E5M2:
		return nccl.Float8E5M2, nil
	}
	return 0, fmt.Errorf("dist: no NCCL type for %v: %w", dt, array.ErrDType)
}

// memories returns the device memory of every array, after evaluating the
// pending expressions that read it (the collective writes it in place).
func memories(xs []*array.Array) ([]*cuda.Memory, error) {
	ms := make([]*cuda.Memory, len(xs))
	for i, x := range xs {
		if err := x.EvalReaders(); err != nil {
			return nil, err
		}
		arg, err := x.KernelArg(x.Device())
		if err != nil {
			return nil, err
		}
		m, ok := arg.(interface{ Memory() *cuda.Memory })
		if !ok || (m.Memory() == nil && x.Size() > 0) {
			return nil, fmt.Errorf("dist: array %d has no device memory: %w", i, array.ErrDevice)
		}
		ms[i] = m.Memory()
	}
	return ms, nil
}

func (b *ncclBackend) allReduce(xs []*array.Array, op Op) error {
	x := xs[0]
	return b.allReduceOn(xs, op, nil, func() string { return describe("AllReduce", op, x) })
}

// allReduceOn is allReduce on the given streams, one per local rank (nil:
// the default streams).
func (b *ncclBackend) allReduceOn(xs []*array.Array, op Op, streams []*cuda.Stream, what func() string) error {
	dt, err := ncclType(xs[0].DType())
	if err != nil {
		return err
	}
	ms, err := memories(xs)
	if err != nil {
		return err
	}
	n := xs[0].Size()
	return b.issue(xs, what, streams, func() error {
		for i, c := range b.comms {
			s := b.devs[i].Stream().CUDA()
			if streams != nil {
				s = streams[i]
			}
			if err := c.AllReduce(ms[i], ms[i], n, dt, nccl.RedOp(op), s); err != nil {
				return fmt.Errorf("dist: AllReduce: %w", err)
			}
		}
		return nil
	})
}

func (b *ncclBackend) broadcast(xs []*array.Array, root int) error {
	dt, err := ncclType(xs[0].DType())
	if err != nil {
		return err
	}
	ms, err := memories(xs)
	if err != nil {
		return err
	}
	n := xs[0].Size()
	x := xs[0]
	what := func() string { return fmt.Sprintf("Broadcast from %d of %v %v", root, x.DType(), x.Shape()) }
	return b.issue(xs, what, nil, func() error {
		for i, c := range b.comms {
			if err := c.Broadcast(ms[i], ms[i], n, dt, root, b.devs[i].Stream().CUDA()); err != nil {
				return fmt.Errorf("dist: Broadcast: %w", err)
			}
		}
		return nil
	})
}

func (b *ncclBackend) reduceScatter(sends, recvs []*array.Array, op Op) error {
	dt, err := ncclType(sends[0].DType())
	if err != nil {
		return err
	}
	ss, err := memories(sends)
	if err != nil {
		return err
	}
	rs, err := memories(recvs)
	if err != nil {
		return err
	}
	n := recvs[0].Size()
	x := sends[0]
	what := func() string { return describe("ReduceScatter", op, x) }
	return b.issue(append(slices.Clone(sends), recvs...), what, nil, func() error {
		for i, c := range b.comms {
			if err := c.ReduceScatter(ss[i], rs[i], n, dt, nccl.RedOp(op), b.devs[i].Stream().CUDA()); err != nil {
				return fmt.Errorf("dist: ReduceScatter: %w", err)
			}
		}
		return nil
	})
}

func (b *ncclBackend) allGather(sends, recvs []*array.Array) error {
	dt, err := ncclType(sends[0].DType())
	if err != nil {
		return err
	}
	ss, err := memories(sends)
	if err != nil {
		return err
	}
	rs, err := memories(recvs)
	if err != nil {
		return err
	}
	n := sends[0].Size()
	x := sends[0]
	what := func() string { return fmt.Sprintf("AllGather of %v %v", x.DType(), x.Shape()) }
	return b.issue(append(slices.Clone(sends), recvs...), what, nil, func() error {
		for i, c := range b.comms {
			if err := c.AllGather(ss[i], rs[i], n, dt, b.devs[i].Stream().CUDA()); err != nil {
				return fmt.Errorf("dist: AllGather: %w", err)
			}
		}
		return nil
	})
}

// describe names a reduction for errors: "AllReduce sum of float32 [1024]".
func describe(fn string, op Op, x *array.Array) string {
	return fmt.Sprintf("%s %v of %v %v", fn, op, x.DType(), x.Shape())
}

// issue runs the calls of one collective in an NCCL group (the ranks of
// this process together), on streams (nil: the default streams). Inside
// Comm.Group the group joins the outer one, issued later: the arrays are
// kept alive until then. what names the collective in the watchdog's
// errors; it runs only then, keeping Sprintf off the path of every call.
func (b *ncclBackend) issue(xs []*array.Array, what func() string, streams []*cuda.Stream, calls func() error) error {
	b.mu.Lock()
	inGroup := b.depth > 0
	if inGroup {
		b.keep = append(b.keep, xs...)
		b.grouped = append(b.grouped, what)
	}
	b.mu.Unlock()
	err := nccl.Group(calls)
	runtime.KeepAlive(xs)
	if err == nil && !inGroup {
		err = b.track(what, streams)
	}
	return err
}

func (b *ncclBackend) group(fn func() error) error {
	b.mu.Lock()
	b.depth++
	b.mu.Unlock()
	err := nccl.Group(fn)
	b.mu.Lock()
	b.depth--
	var keep []*array.Array
	var grouped []func() string
	if b.depth == 0 {
		keep, b.keep = b.keep, nil
		grouped, b.grouped = b.grouped, nil
	}
	b.mu.Unlock()
	runtime.KeepAlive(keep)
	if err == nil && len(grouped) > 0 {
		what := grouped[0]
		if len(grouped) > 1 {
			what = func() string {
				return fmt.Sprintf("a Group of %d collectives, the first %s", len(grouped), grouped[0]())
			}
		}
		err = b.track(what, nil)
	}
	return err
}

// close waits for the collectives issued (or for the watchdog to abort
// them: Destroy would wait forever for a rank that is gone), then frees
// the communicators.
func (b *ncclBackend) close() error {
	b.wd.drain()
	b.wd.close()
	var errs []error
	for _, c := range b.comms {
		if err := c.Destroy(); err != nil && !errors.Is(err, nccl.ErrDestroyed) {
			errs = append(errs, err)
		}
	}
	b.freeEvents()
	return errors.Join(errs...)
}

func (b *ncclBackend) freeEvents() {
	b.evMu.Lock()
	defer b.evMu.Unlock()
	for i, evs := range b.events {
		for _, e := range evs {
			_ = e.Close()
		}
		b.events[i] = nil
	}
}

func (b *ncclBackend) abort() error {
	err := b.abortComms()
	b.wd.close()
	b.freeEvents()
	return err
}

func (b *ncclBackend) abortComms() error {
	var errs []error
	for _, c := range b.comms {
		if err := c.Abort(); err != nil && !errors.Is(err, nccl.ErrDestroyed) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
