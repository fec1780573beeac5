package dist

import (
	"errors"
	"fmt"
	"runtime"
	"sync"

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

	mu    sync.Mutex
	depth int            // Group calls in progress
	keep  []*array.Array // arrays of collectives recorded in the Group, kept until it is issued
}

func newNCCLAll(devs []*gocu.Device) (*ncclBackend, error) {
	cds := make([]*cuda.Device, len(devs))
	for i, d := range devs {
		cds[i] = d.CUDA()
	}
	comms, err := nccl.InitAll(cds)
	if err != nil {
		return nil, fmt.Errorf("dist: New: %w", err)
	}
	return &ncclBackend{devs: devs, comms: comms}, nil
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
	dt, err := ncclType(xs[0].DType())
	if err != nil {
		return err
	}
	ms, err := memories(xs)
	if err != nil {
		return err
	}
	n := xs[0].Size()
	return b.issue(xs, func() error {
		for i, c := range b.comms {
			if err := c.AllReduce(ms[i], ms[i], n, dt, nccl.RedOp(op), b.devs[i].Stream().CUDA()); err != nil {
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
	return b.issue(xs, func() error {
		for i, c := range b.comms {
			if err := c.Broadcast(ms[i], ms[i], n, dt, root, b.devs[i].Stream().CUDA()); err != nil {
				return fmt.Errorf("dist: Broadcast: %w", err)
			}
		}
		return nil
	})
}

// issue runs the calls of one collective in an NCCL group (the ranks of
// this process together). Inside Comm.Group the group joins the outer one,
// issued later: the arrays are kept alive until then.
func (b *ncclBackend) issue(xs []*array.Array, calls func() error) error {
	b.mu.Lock()
	inGroup := b.depth > 0
	if inGroup {
		b.keep = append(b.keep, xs...)
	}
	b.mu.Unlock()
	err := nccl.Group(calls)
	runtime.KeepAlive(xs)
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
	if b.depth == 0 {
		keep, b.keep = b.keep, nil
	}
	b.mu.Unlock()
	runtime.KeepAlive(keep)
	return err
}

func (b *ncclBackend) close() error {
	var errs []error
	for _, c := range b.comms {
		if err := c.Destroy(); err != nil && !errors.Is(err, nccl.ErrDestroyed) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

func (b *ncclBackend) abort() error {
	var errs []error
	for _, c := range b.comms {
		if err := c.Abort(); err != nil && !errors.Is(err, nccl.ErrDestroyed) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
