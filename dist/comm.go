package dist

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/gocu-dev/gocu"
	"github.com/gocu-dev/gocu/array"
	"github.com/gocu-dev/gocu/nccl"
)

// Op is how a reduction combines the ranks' elements.
type Op int

// The reductions, NCCL's.
const (
	Sum  Op = Op(nccl.Sum)
	Prod Op = Op(nccl.Prod)
	Max  Op = Op(nccl.Max)
	Min  Op = Op(nccl.Min)
	Avg  Op = Op(nccl.Avg) // the sum divided by the number of ranks
)

// String returns the reduction's name, such as "sum".
func (op Op) String() string { return nccl.RedOp(op).String() }

func (op Op) valid() bool { return op >= Sum && op <= Avg }

// Errors of this package; errors of arrays (array.ErrShape, array.ErrDType,
// array.ErrDevice, ...) and of NCCL (nccl.ErrInvalidUsage, ...) are
// wrapped as they are and match with errors.Is too.
var (
	// ErrClosed: the communicator was closed.
	ErrClosed = errors.New("dist: communicator closed")
	// ErrPeer: another rank failed, left, or called a different
	// collective (the host backend reports it; on GPUs the watchdog
	// reports NCCL's asynchronous error, see Comm.Err).
	ErrPeer = errors.New("dist: another rank failed or disagreed")
	// ErrTimeout: a rank did not join, or call a collective, within
	// GOCU_DIST_TIMEOUT of the others (on GPUs: a collective did not
	// complete in that time); ErrPeer matches too.
	ErrTimeout error = timeoutError{}
)

// Comm connects ranks, one per device, across which arrays are reduced
// and broadcast. A process holds the ranks it drives, its local ranks: all
// of them for a Comm from New, one for a Comm from Join. Methods take one
// array per local rank, in the order of Devices.
//
// A Comm may be used from any goroutine, one call at a time: collectives
// must be called in the same order on every rank.
type Comm struct {
	devs  []*gocu.Device // the local ranks' devices
	ranks []int          // their global ranks
	size  int
	be    backend

	mu       sync.Mutex
	closed   bool
	grouping int // Group calls in progress
}

// backend is what moves the data: NCCL on GPUs, the host otherwise.
type backend interface {
	name() string
	// allReduce and broadcast get checked arrays, one per local rank,
	// contiguous, of one dtype and shape.
	allReduce(xs []*array.Array, op Op) error
	broadcast(xs []*array.Array, root int) error
	// reduceScatter and allGather get checked arrays: sends of one dtype
	// and shape, recvs too, with the sizes the collective needs.
	reduceScatter(sends, recvs []*array.Array, op Op) error
	allGather(sends, recvs []*array.Array) error
	// allToAll gets checked pieces, sends[i][j] from local rank i to
	// rank j, and returns the received ones alike.
	allToAll(sends [][]*array.Array) ([][]*array.Array, error)
	// group runs fn so that the collectives it calls are issued together.
	group(fn func() error) error
	close() error
	abort() error
	// failure is the error that ended the communicator: a rank that
	// failed, left or timed out.
	failure() error
}

// New returns a communicator of len(devs) ranks driven by this process,
// rank i on devs[i]. GPUs communicate through NCCL (nccl.InitAll); the CPU
// and the simulator through host memory (the host backend), where a device
// may be listed several times: several ranks on the CPU, which is how the
// data-parallel code is tested without GPUs. GPUs and host devices do not
// mix. NCCL 2.5 to 2.29 refuse a GPU listed twice (nccl.ErrInvalidUsage;
// see package nccl).
func New(devs ...*gocu.Device) (*Comm, error) {
	if len(devs) == 0 {
		return nil, errors.New("dist: New: no devices")
	}
	gpus := 0
	for i, d := range devs {
		if d == nil {
			return nil, fmt.Errorf("dist: New: devs[%d] is nil", i)
		}
		if d.IsGPU() {
			gpus++
		}
	}
	c := &Comm{devs: slices.Clone(devs), size: len(devs)}
	for i := range devs {
		c.ranks = append(c.ranks, i)
	}
	switch gpus {
	case 0:
		c.be = &hostLocal{devs: c.devs}
	case len(devs):
		be, err := newNCCLAll(c.devs)
		if err != nil {
			return nil, err
		}
		c.be = be
	default:
		return nil, fmt.Errorf("dist: New: %s: GPUs and host devices cannot be ranks of one communicator", names(devs))
	}
	return c, nil
}

// Join makes this process's rank of an nranks-rank communicator on dev:
// one process per device, on one host or many. Every rank calls it with
// the same id (from NewID in one process, passed to the others out of
// band) and its own rank, 0 to nranks-1; it returns when all have joined.
// The id says the backend: NCCL for GPUs (nccl.InitRank), the host
// backend for the CPU and the simulator.
func Join(id ID, nranks, rank int, dev *gocu.Device) (*Comm, error) {
	if dev == nil {
		return nil, errors.New("dist: Join: nil device")
	}
	if nranks < 1 || rank < 0 || rank >= nranks {
		return nil, fmt.Errorf("dist: Join: rank %d of %d ranks", rank, nranks)
	}
	if nranks > maxRanks {
		return nil, fmt.Errorf("dist: Join: %d ranks: at most %d", nranks, maxRanks)
	}
	c := &Comm{devs: []*gocu.Device{dev}, ranks: []int{rank}, size: nranks}
	switch {
	case id.ncclID != nil:
		if !dev.IsGPU() {
			return nil, fmt.Errorf("dist: Join: the id is NCCL's (GPUs) and the device is %v: make the id for the devices' kind (NewID(gocu.%v))", dev, dev.Kind())
		}
		be, err := newNCCLRank(*id.ncclID, nranks, rank, dev)
		if err != nil {
			return nil, err
		}
		c.be = be
	case id.addr != "":
		if dev.IsGPU() {
			return nil, fmt.Errorf("dist: Join: the id is the host backend's and the device is %v: make the id with NewID(gocu.CUDA)", dev)
		}
		be, err := joinHub(id, nranks, rank, dev)
		if err != nil {
			return nil, err
		}
		c.be = be
	default:
		return nil, errors.New("dist: Join: empty id: make one with NewID")
	}
	return c, nil
}

func names(devs []*gocu.Device) string {
	s := make([]string, len(devs))
	for i, d := range devs {
		s[i] = d.ID()
	}
	return strings.Join(s, ", ")
}

// timeoutError is ErrTimeout, which matches ErrPeer too.
type timeoutError struct{}

func (timeoutError) Error() string        { return "dist: a rank did not respond in time" }
func (timeoutError) Is(target error) bool { return target == ErrPeer }

// Size returns the number of ranks in all processes.
func (c *Comm) Size() int { return c.size }

// Devices returns the devices of this process's ranks, in the order the
// methods take arrays.
func (c *Comm) Devices() []*gocu.Device { return slices.Clone(c.devs) }

// Rank returns the global rank (0 to Size()-1) of local rank i.
func (c *Comm) Rank(i int) int { return c.ranks[i] }

// Backend returns "nccl" or "host".
func (c *Comm) Backend() string { return c.be.name() }

// NCCL returns the NCCL communicators of the local ranks, or nil for the
// host backend.
func (c *Comm) NCCL() []*nccl.Comm {
	if b, ok := c.be.(*ncclBackend); ok {
		return slices.Clone(b.comms)
	}
	return nil
}

func (c *Comm) String() string {
	return fmt.Sprintf("dist.Comm(%s, %d of %d ranks here: %s)", c.be.name(), len(c.devs), c.size, names(c.devs))
}

// AllReduce reduces xs across all ranks with op and leaves the result in
// every array, in place: xs[i] is local rank i's array, on Devices()[i];
// all have one shape and dtype (the same on every rank). Bool arrays are
// refused.
//
// On GPUs the reduction is queued on each device's default stream (the
// stream the arrays' own operations use), after the operations that
// produced xs and before those that follow, without waiting on the host.
// Like a kernel writing an array through array.AsBuffer, it writes the
// arrays' memory directly: a pending expression that reads one of them and
// is evaluated later sees the result (Eval it first if it must not).
// The arrays must be contiguous (x.Contiguous() when they are not): the
// reduction works in their memory.
//
// Float Avg multiplies each rank's values by 1/Size() and sums, as NCCL
// does; integer Avg divides the sum, truncating.
func (c *Comm) AllReduce(op Op, xs ...*array.Array) error {
	const fn = "AllReduce"
	if !op.valid() {
		return fmt.Errorf("dist: %s: unknown reduction %d", fn, int(op))
	}
	if err := c.check(fn, xs); err != nil {
		return err
	}
	return c.be.allReduce(xs, op)
}

// Broadcast copies the array of rank root into every rank's array, in
// place: xs as for AllReduce. It is how replicas start from the same
// parameters.
func (c *Comm) Broadcast(root int, xs ...*array.Array) error {
	const fn = "Broadcast"
	if root < 0 || root >= c.size {
		return fmt.Errorf("dist: %s: root %d is out of range [0, %d)", fn, root, c.size)
	}
	if err := c.check(fn, xs); err != nil {
		return err
	}
	return c.be.broadcast(xs, root)
}

// ReduceScatter reduces the sends across all ranks with op and leaves
// part r of the result in rank r's recv: the elements r*k to (r+1)*k-1
// of the reduction in row-major order, with k the recv's size, shaped as
// the recv (torch's reduce_scatter_tensor, NCCL's ncclReduceScatter).
// sends[i] and recvs[i] are local rank i's; every send has Size() times
// as many elements as a recv, of the same dtype. Sharded optimisers
// reduce gradients this way: each rank gets the sum of its shard.
func (c *Comm) ReduceScatter(op Op, sends, recvs []*array.Array) error {
	const fn = "ReduceScatter"
	if !op.valid() {
		return fmt.Errorf("dist: %s: unknown reduction %d", fn, int(op))
	}
	if err := c.checkPair(fn, sends, recvs, false); err != nil {
		return err
	}
	return c.be.reduceScatter(sends, recvs, op)
}

// AllGather concatenates every rank's send, in rank order, into every
// rank's recv (row-major, shaped as the recv: torch's
// all_gather_into_tensor, NCCL's ncclAllGather). sends[i] and recvs[i]
// are local rank i's; every recv has Size() times as many elements as a
// send, of the same dtype.
func (c *Comm) AllGather(sends, recvs []*array.Array) error {
	const fn = "AllGather"
	if err := c.checkPair(fn, sends, recvs, true); err != nil {
		return err
	}
	return c.be.allGather(sends, recvs)
}

// checkPair checks the arrays of ReduceScatter (gather false) and
// AllGather: each list as check wants, one dtype, and the larger list's
// size Size() times the smaller's.
func (c *Comm) checkPair(fn string, sends, recvs []*array.Array, gather bool) error {
	if err := c.check(fn+" (send)", sends); err != nil {
		return err
	}
	if err := c.check(fn+" (recv)", recvs); err != nil {
		return err
	}
	s, r := sends[0], recvs[0]
	if s.DType() != r.DType() {
		return fmt.Errorf("dist: %s: send is %v, recv %v: %w", fn, s.DType(), r.DType(), array.ErrDType)
	}
	small, large, ls, ll := r, s, "recv", "send"
	if gather {
		small, large, ls, ll = s, r, "send", "recv"
	}
	if small.Size()*c.size != large.Size() {
		return fmt.Errorf("dist: %s: %s has %d elements, %s %d: want %d ranks × %d: %w", fn, ll, large.Size(), ls, small.Size(), c.size, small.Size(), array.ErrShape)
	}
	for i := range sends {
		if sends[i] == recvs[i] {
			return fmt.Errorf("dist: %s: array %d is both send and recv: they differ in size: %w", fn, i, array.ErrValue)
		}
	}
	return nil
}

// Group runs fn so that the collectives it calls on c are issued together:
// on GPUs one NCCL group (nccl.Group), which launches them at once and,
// if fn fails, drops them all. Reducing every gradient of a model in one
// Group costs about as much as reducing one. Array operations called
// inside fn on the arrays being reduced run before the reductions (those
// are issued when fn returns): read the results after Group.
func (c *Comm) Group(fn func() error) error {
	if fn == nil {
		return errors.New("dist: Group: nil function")
	}
	if err := c.live("Group"); err != nil {
		return err
	}
	c.mu.Lock()
	c.grouping++
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		c.grouping--
		c.mu.Unlock()
	}()
	return c.be.group(fn)
}

// Close releases the communicator (nccl.Comm.Destroy, which waits for the
// work queued on it, or the host backend's connection). Every rank closes
// its own.
func (c *Comm) Close() error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil
	}
	c.closed = true
	c.mu.Unlock()
	return c.be.close()
}

// Abort releases the communicator without waiting for the other ranks
// (nccl.Comm.Abort): the way out of a collective that does not complete
// because a rank is gone. Call it from another goroutine.
func (c *Comm) Abort() error {
	c.mu.Lock()
	c.closed = true
	c.mu.Unlock()
	return c.be.abort()
}

// Err returns the error that ended the communicator, or nil: on GPUs, a
// collective that did not complete within GOCU_DIST_TIMEOUT or an error
// NCCL found while one ran (a rank crashed), after which the watchdog
// aborted the communicator; on the host backend, a rank that failed, left
// or did not call in time. Every later call returns it too. A loop that
// reads results from the device (which return once the communicator is
// aborted) checks Err to tell them from garbage.
func (c *Comm) Err() error {
	if c == nil {
		return errors.New("dist: Err: nil *Comm")
	}
	return c.be.failure()
}

func (c *Comm) live(fn string) error {
	if c == nil {
		return fmt.Errorf("dist: %s: nil *Comm", fn)
	}
	if err := c.be.failure(); err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return fmt.Errorf("dist: %s: %w", fn, ErrClosed)
	}
	return nil
}

// check refuses what no backend can reduce: a count of arrays that is not
// the local ranks', a failed, non-contiguous or bool array, one on another
// device, or arrays that differ in dtype or shape.
func (c *Comm) check(fn string, xs []*array.Array) error {
	if err := c.live(fn); err != nil {
		return err
	}
	if len(xs) != len(c.devs) {
		return fmt.Errorf("dist: %s: %d arrays for %d local ranks (%s): pass one per rank", fn, len(xs), len(c.devs), names(c.devs))
	}
	for i, x := range xs {
		if x == nil {
			return fmt.Errorf("dist: %s: array %d is nil: %w", fn, i, array.ErrValue)
		}
		if err := x.Err(); err != nil {
			return fmt.Errorf("dist: %s: array %d: %w", fn, i, err)
		}
		if x.Device() != c.devs[i] {
			return fmt.Errorf("dist: %s: array %d is on %v, rank %d on %v: %w", fn, i, x.Device(), c.ranks[i], c.devs[i], array.ErrDevice)
		}
		if x.DType() == array.Bool {
			return fmt.Errorf("dist: %s: bool arrays cannot be reduced (AsType(array.Uint8)): %w", fn, array.ErrDType)
		}
		if !x.IsContiguous() {
			return fmt.Errorf("dist: %s: array %d is a strided view: the reduction works in the array's memory: pass x.Contiguous(): %w", fn, i, array.ErrValue)
		}
		if i > 0 {
			if x.DType() != xs[0].DType() {
				return fmt.Errorf("dist: %s: array %d is %v, array 0 %v: %w", fn, i, x.DType(), xs[0].DType(), array.ErrDType)
			}
			if !slices.Equal(x.Shape(), xs[0].Shape()) {
				return fmt.Errorf("dist: %s: array %d has shape %v, array 0 %v: %w", fn, i, x.Shape(), xs[0].Shape(), array.ErrShape)
			}
		}
	}
	return nil
}

// Split returns the part of n items that part i of parts gets, [lo, hi):
// contiguous, in order, the first n%parts parts one item longer. Data
// parallelism splits each batch this way across the ranks.
func Split(n, parts, i int) (lo, hi int) {
	q, r := n/parts, n%parts
	lo = i*q + min(i, r)
	hi = lo + q
	if i < r {
		hi++
	}
	return lo, hi
}
