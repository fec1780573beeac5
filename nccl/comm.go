package nccl

import (
	"errors"
	"fmt"
	"sync/atomic"
	"unsafe"

	"github.com/gocu-dev/gocu/cuda"
	"github.com/gocu-dev/gocu/internal/dynlib"
)

// Comm is one rank of an NCCL communicator: the rank, the number of ranks,
// and the CUDA device the rank runs on. A process holds one Comm per rank
// it drives (InitAll returns one per device; InitRank one).
//
// Methods may be called from any goroutine: each runs on a locked OS
// thread with the device's primary context current. Collectives on one
// communicator must be issued in the same order on every rank; calls on one
// Comm from several goroutines at once are not ordered, so serialise them.
// Destroy must not run while another call on the Comm is in progress;
// Abort may (that is what it is for).
type Comm struct {
	lib     *lib
	handle  uintptr // ncclComm_t
	rank    int
	size    int
	dev     *cuda.Device // nil only in this package's tests
	ordinal int

	state atomic.Int32
	cause atomic.Pointer[error] // why a stateFailed comm failed
	id    UniqueID              // InitRank's, kept for a Group that issues it later
}

const (
	stateLive      = 0
	stateDestroyed = 1
	stateAborted   = 2
	stateFailed    = 3 // created in a Group that failed: NCCL never made it
	statePending   = 4 // created by InitRank in a Group not issued yet
)

// Rank returns the comm's rank, 0 to Size()-1.
func (c *Comm) Rank() int { return c.rank }

// Size returns the number of ranks in the communicator.
func (c *Comm) Size() int { return c.size }

// Device returns the CUDA device the rank runs on.
func (c *Comm) Device() *cuda.Device { return c.dev }

// Handle returns the ncclComm_t, for calling NCCL functions this package
// does not bind.
func (c *Comm) Handle() uintptr { return c.handle }

func (c *Comm) String() string {
	if c == nil {
		return "nccl.Comm(nil)"
	}
	return fmt.Sprintf("nccl.Comm(%s)", c.desc())
}

// desc names the comm in errors: "rank 1 of 4 on cuda:1".
func (c *Comm) desc() string {
	return fmt.Sprintf("rank %d of %d on cuda:%d", c.rank, c.size, c.ordinal)
}

// usable returns why the comm cannot be used, or nil.
func (c *Comm) usable(fn string) error {
	if c == nil {
		return argErr(fn, "nil *Comm")
	}
	switch c.state.Load() {
	case stateLive:
		return nil
	case stateAborted:
		return &ArgError{Func: fn, Msg: "the communicator (" + c.desc() + ") was aborted", Err: ErrDestroyed}
	case stateFailed:
		msg := "the communicator (" + c.desc() + ") was never created: the Group that created it failed"
		if p := c.cause.Load(); p != nil {
			msg += " (" + (*p).Error() + ")"
		}
		return &ArgError{Func: fn, Msg: msg, Err: ErrDestroyed}
	case statePending:
		return argErr(fn, "the communicator (%s) is created by the Group that is open: use it after the Group has returned", c.desc())
	default:
		return &ArgError{Func: fn, Msg: "the communicator (" + c.desc() + ") was destroyed", Err: ErrDestroyed}
	}
}

// run calls an NCCL function on a locked OS thread with the comm's device
// context current. The arguments are device addresses, handles and
// numbers: nothing in them points into Go memory.
func (c *Comm) run(fn string, sym uintptr, args ...uintptr) error {
	var r Result
	var before errMark
	err := withDevice(c.dev, func() error {
		before = c.lib.mark()
		r = Result(dynlib.Call(sym, args...))
		return nil
	})
	if err != nil {
		return err
	}
	return c.lib.error(fn, r, c.desc(), before)
}

// call is run for the calls that join a Group: inside one it records the
// call (the arguments were checked), outside it runs it.
func (c *Comm) call(fn string, sym uintptr, args ...uintptr) error {
	if g := openGroup(); g != nil {
		g.record(call{fn: fn, comm: c, sym: sym, args: args})
		return nil
	}
	return c.run(fn, sym, args...)
}

// InitAll creates a communicator of len(devices) ranks inside this process,
// rank i on devices[i] (ncclCommInitAll), and returns the ranks in order.
// It is the way for one process to drive several GPUs; it cannot span
// hosts. Issue collectives on the ranks together inside Group. InitAll
// runs at once even inside a Group (it makes all the ranks in one call).
//
// Listing a device twice asks for several ranks on one GPU, which NCCL
// refuses from 2.5 on (ErrInvalidUsage), and from 2.30 on allows only with
// NCCL_MULTI_RANK_GPU_ENABLE=1 in the environment; see the package
// documentation.
func InitAll(devices []*cuda.Device) ([]*Comm, error) {
	const fn = "ncclCommInitAll"
	if len(devices) == 0 {
		return nil, argErr(fn, "no devices")
	}
	ords := make([]int32, len(devices))
	for i, d := range devices {
		if d == nil {
			return nil, argErr(fn, "devices[%d] is nil", i)
		}
		ords[i] = int32(d.Ordinal())
	}
	l, err := load()
	if err != nil {
		return nil, err
	}
	return initAll(l, devices, ords)
}

func initAll(l *lib, devices []*cuda.Device, ords []int32) ([]*Comm, error) {
	const fn = "ncclCommInitAll"
	handles := make([]uintptr, len(ords))
	var r Result
	var before errMark
	err := withDevice(devices[0], func() error {
		before = l.mark()
		r = Result(dynlib.Call(l.commInitAll, uintptr(unsafe.Pointer(&handles[0])), uintptr(len(ords)), uintptr(unsafe.Pointer(&ords[0]))))
		return nil
	})
	if err != nil {
		return nil, err
	}
	if r != Success {
		err := l.error(fn, r, "", before)
		// ncclCommInitAll leaves the ranks it did create to the caller.
		for i, h := range handles {
			if h != 0 {
				_ = withDevice(devices[i], func() error { dynlib.Call(l.commAbort, h); return nil })
			}
		}
		return nil, err
	}
	comms := make([]*Comm, len(ords))
	for i, h := range handles {
		comms[i] = &Comm{lib: l, handle: h, rank: i, size: len(ords), dev: devices[i], ordinal: int(ords[i])}
	}
	return comms, nil
}

// InitRank creates this process's rank of an nranks-rank communicator on
// dev (ncclCommInitRank). Every rank calls it with the same id, from
// NewUniqueID in one of the processes, and its own rank; it returns when
// all nranks have joined. This is the multi-process, multi-host way: one
// process (or one goroutine) per GPU. A process that creates several ranks
// calls InitRank for each from its own goroutine, or all of them inside one
// Group, which creates them when it is issued (see Group).
func InitRank(id UniqueID, nranks, rank int, dev *cuda.Device) (*Comm, error) {
	const fn = "ncclCommInitRank"
	if dev == nil {
		return nil, argErr(fn, "nil device")
	}
	if err := checkRanks(fn, nranks, rank); err != nil {
		return nil, err
	}
	l, err := load()
	if err != nil {
		return nil, err
	}
	return initRank(l, id, nranks, rank, dev, dev.Ordinal())
}

func checkRanks(fn string, nranks, rank int) error {
	if nranks < 1 || nranks > 1<<30 {
		return argErr(fn, "nranks is %d; it must be at least 1", nranks)
	}
	if rank < 0 || rank >= nranks {
		return argErr(fn, "rank %d is out of range [0, %d)", rank, nranks)
	}
	return nil
}

func initRank(l *lib, id UniqueID, nranks, rank int, dev *cuda.Device, ordinal int) (*Comm, error) {
	c := &Comm{lib: l, rank: rank, size: nranks, dev: dev, ordinal: ordinal, id: id}
	if g := openGroup(); g != nil {
		c.state.Store(statePending)
		g.record(call{fn: "ncclCommInitRank", comm: c})
		g.created = append(g.created, c)
		return c, nil
	}
	if err := c.initNow(); err != nil {
		if h := c.handle; h != 0 {
			// An init that failed after NCCL made the communicator leaves
			// it to the caller, who frees it with ncclCommAbort.
			_ = withDevice(dev, func() error { dynlib.Call(l.commAbort, h); return nil })
		}
		return nil, err
	}
	return c, nil
}

// initNow calls ncclCommInitRank for c, which fills c.handle.
func (c *Comm) initNow() error {
	var r Result
	var before errMark
	err := withDevice(c.dev, func() error {
		before = c.lib.mark()
		r = Result(c.lib.commInitRank(&c.handle, int32(c.size), cUniqueID{internal: c.id}, int32(c.rank)))
		return nil
	})
	if err != nil {
		return err
	}
	return c.lib.error("ncclCommInitRank", r, c.desc(), before)
}

// Destroy waits for the work queued on the communicator and frees it
// (ncclCommDestroy). It frees this rank only; the other ranks destroy
// theirs. Later use of c returns an error matching ErrDestroyed.
func (c *Comm) Destroy() error {
	const fn = "ncclCommDestroy"
	if c == nil {
		return argErr(fn, "nil *Comm")
	}
	if c.state.CompareAndSwap(stateFailed, stateDestroyed) {
		return nil // NCCL never made it: nothing to free
	}
	if !c.state.CompareAndSwap(stateLive, stateDestroyed) {
		return c.usable(fn)
	}
	return c.run(fn, c.lib.commDestroy, c.handle)
}

// Finalize completes the communicator's outstanding work and releases the
// resources shared with the other ranks (ncclCommFinalize); Destroy then
// frees the local ones. It is collective: every rank calls it. Destroy
// alone does both.
func (c *Comm) Finalize() error {
	const fn = "ncclCommFinalize"
	if err := c.usable(fn); err != nil {
		return err
	}
	return c.run(fn, c.lib.commFinalize, c.handle)
}

// Abort stops the communicator's outstanding work and frees it
// (ncclCommAbort), without waiting for the other ranks. It is the way out
// of a collective that hangs (a rank died, the network failed) or of a
// communicator that reported an error: call it from another goroutine if
// one is blocked. The process stays usable: new communicators can be made.
// Later use of c returns an error matching ErrDestroyed.
func (c *Comm) Abort() error {
	const fn = "ncclCommAbort"
	if c == nil {
		return argErr(fn, "nil *Comm")
	}
	if c.state.CompareAndSwap(stateFailed, stateAborted) {
		return nil
	}
	if !c.state.CompareAndSwap(stateLive, stateAborted) {
		return c.usable(fn)
	}
	return c.run(fn, c.lib.commAbort, c.handle)
}

// AsyncError returns an error that NCCL found in the communicator's work
// after the call that queued it returned (ncclCommGetAsyncError): a remote
// rank that failed, a network error. nil means none so far. A communicator
// with an error should be aborted.
func (c *Comm) AsyncError() error {
	const fn = "ncclCommGetAsyncError"
	if err := c.usable(fn); err != nil {
		return err
	}
	var async int32
	var r Result
	var before errMark
	err := withDevice(c.dev, func() error {
		before = c.lib.mark()
		r = Result(dynlib.Call(c.lib.commGetAsyncError, c.handle, uintptr(unsafe.Pointer(&async))))
		return nil
	})
	if err != nil {
		return err
	}
	if err := c.lib.error(fn, r, c.desc(), before); err != nil {
		return err
	}
	return c.lib.asyncError("asynchronous error", Result(async), c.desc())
}

// markFailed records why comms of a Group that failed were never made.
func markFailed(comms []*Comm, cause error) {
	if cause == nil {
		cause = errors.New("unknown cause")
	}
	for _, c := range comms {
		c.cause.Store(&cause)
		c.state.CompareAndSwap(statePending, stateFailed)
		c.state.CompareAndSwap(stateLive, stateFailed)
	}
}
