package nccl

import (
	"math"

	"github.com/gocu-dev/gocu/cuda"
)

// The collectives and point-to-point calls queue their work on a stream and
// return: the result is there when the stream has reached it (synchronise
// the stream, record an event, or queue later work on the same stream).
// A nil stream is the device's default stream. Buffers are device memory on
// the communicator's device; send and recv may be the same Memory (in
// place), and a Memory.View passes part of an allocation. Every argument is
// checked before NCCL sees it: an error matching ErrInvalidArgument names
// the argument and what is wrong with it.

// AllReduce reduces count elements of send across all ranks with op and
// leaves the result in recv on every rank (ncclAllReduce).
func (c *Comm) AllReduce(send, recv *cuda.Memory, count int, dt DataType, op RedOp, s *cuda.Stream) error {
	return c.allReduce(memOf(send), memOf(recv), count, dt, op, streamOf(s))
}

// Broadcast copies count elements of send on rank root into recv on every
// rank (ncclBroadcast). send is read on the root only and may be nil on
// the others.
func (c *Comm) Broadcast(send, recv *cuda.Memory, count int, dt DataType, root int, s *cuda.Stream) error {
	return c.broadcast(memOf(send), memOf(recv), count, dt, root, streamOf(s))
}

// Reduce reduces count elements of send across all ranks with op into recv
// on rank root (ncclReduce). recv is written on the root only and may be
// nil on the others.
func (c *Comm) Reduce(send, recv *cuda.Memory, count int, dt DataType, op RedOp, root int, s *cuda.Stream) error {
	return c.reduce(memOf(send), memOf(recv), count, dt, op, root, streamOf(s))
}

// AllGather gathers sendCount elements of send from every rank into recv,
// rank r's at element r*sendCount, on every rank (ncclAllGather): recv
// holds Size()*sendCount elements.
func (c *Comm) AllGather(send, recv *cuda.Memory, sendCount int, dt DataType, s *cuda.Stream) error {
	return c.allGather(memOf(send), memOf(recv), sendCount, dt, streamOf(s))
}

// ReduceScatter reduces Size()*recvCount elements of send across all ranks
// with op and leaves block r of the result, recvCount elements, in recv on
// rank r (ncclReduceScatter).
func (c *Comm) ReduceScatter(send, recv *cuda.Memory, recvCount int, dt DataType, op RedOp, s *cuda.Stream) error {
	return c.reduceScatter(memOf(send), memOf(recv), recvCount, dt, op, streamOf(s))
}

// Send sends count elements of buf to rank peer, which calls Recv with the
// same count and type (ncclSend). A Send and the Recv that matches it, or
// sends and receives between several ranks, go in one Group.
func (c *Comm) Send(buf *cuda.Memory, count int, dt DataType, peer int, s *cuda.Stream) error {
	return c.sendRecv("ncclSend", memOf(buf), count, dt, peer, streamOf(s))
}

// Recv receives count elements from rank peer into buf (ncclRecv).
func (c *Comm) Recv(buf *cuda.Memory, count int, dt DataType, peer int, s *cuda.Stream) error {
	return c.sendRecv("ncclRecv", memOf(buf), count, dt, peer, streamOf(s))
}

// mem is what the checks need to know about a *cuda.Memory; tests make
// them without a GPU.
type mem struct {
	isNil  bool
	freed  bool
	ptr    uintptr
	size   int
	device int
}

func memOf(m *cuda.Memory) mem {
	if m == nil {
		return mem{isNil: true}
	}
	return mem{freed: m.Freed(), ptr: uintptr(m.Ptr()), size: m.Size(), device: m.Device().Ordinal()}
}

// stream is what the checks need to know about a *cuda.Stream.
type stream struct {
	isNil  bool // the device's default stream
	closed bool
	handle uintptr
	device int
}

func streamOf(s *cuda.Stream) stream {
	if s == nil {
		return stream{isNil: true}
	}
	return stream{closed: s.Closed(), handle: s.Handle(), device: s.Device().Ordinal()}
}

// byteCount returns count*mult elements of dt in bytes, refusing a
// negative count and one whose size overflows.
func byteCount(fn, what string, count, mult int, dt DataType) (int, error) {
	if count < 0 {
		return 0, argErr(fn, "%s is negative (%d)", what, count)
	}
	es := dt.Size()
	if mult > 0 && count > math.MaxInt/mult/es {
		return 0, argErr(fn, "%s %d × %d %v elements overflows the address space", what, count, mult, dt)
	}
	return count * mult * es, nil
}

// buffer checks one buffer that must hold need bytes on the comm's device,
// and returns its address. A nil buffer is accepted when it needs no
// bytes, or when optional (not read or written on this rank).
func (c *Comm) buffer(fn, name string, m mem, need int, optional bool) (uintptr, error) {
	if m.isNil {
		if need == 0 || optional {
			return 0, nil
		}
		return 0, argErr(fn, "%s is nil", name)
	}
	if m.freed {
		return 0, &ArgError{Func: fn, Msg: name + " was freed", Err: cuda.ErrFreed}
	}
	if m.device != c.ordinal {
		return 0, argErr(fn, "%s is on cuda:%d, the communicator (%s) on cuda:%d", name, m.device, c.desc(), c.ordinal)
	}
	if m.size < need {
		return 0, argErr(fn, "%s holds %d bytes, the call needs %d", name, m.size, need)
	}
	return m.ptr, nil
}

// streamHandle checks the stream and returns its handle (0 for nil, the
// legacy default stream).
func (c *Comm) streamHandle(fn string, s stream) (uintptr, error) {
	if s.isNil {
		return 0, nil
	}
	if s.closed {
		return 0, &ArgError{Func: fn, Msg: "the stream was closed", Err: cuda.ErrClosed}
	}
	if s.device != c.ordinal {
		return 0, argErr(fn, "the stream is on cuda:%d, the communicator (%s) on cuda:%d", s.device, c.desc(), c.ordinal)
	}
	return s.handle, nil
}

// checkRoot checks a root or peer rank.
func (c *Comm) checkRank(fn, what string, r int) error {
	if r < 0 || r >= c.size {
		return argErr(fn, "%s %d is out of range [0, %d)", what, r, c.size)
	}
	return nil
}

// prelude runs the checks every call shares: the comm, the type, and the
// op when there is one (op < 0: none).
func (c *Comm) prelude(fn string, dt DataType, op RedOp, hasOp bool) error {
	if err := c.usable(fn); err != nil {
		return err
	}
	if err := dt.check(fn, c.lib); err != nil {
		return err
	}
	if hasOp {
		return op.check(fn)
	}
	return nil
}

func (c *Comm) allReduce(send, recv mem, count int, dt DataType, op RedOp, s stream) error {
	const fn = "ncclAllReduce"
	if err := c.prelude(fn, dt, op, true); err != nil {
		return err
	}
	n, err := byteCount(fn, "count", count, 1, dt)
	if err != nil {
		return err
	}
	sp, err := c.buffer(fn, "send", send, n, false)
	if err != nil {
		return err
	}
	rp, err := c.buffer(fn, "recv", recv, n, false)
	if err != nil {
		return err
	}
	sh, err := c.streamHandle(fn, s)
	if err != nil {
		return err
	}
	return c.call(fn, c.lib.allReduce, sp, rp, uintptr(count), uintptr(dt), uintptr(op), c.handle, sh)
}

func (c *Comm) broadcast(send, recv mem, count int, dt DataType, root int, s stream) error {
	const fn = "ncclBroadcast"
	if err := c.prelude(fn, dt, 0, false); err != nil {
		return err
	}
	if err := c.checkRank(fn, "root", root); err != nil {
		return err
	}
	n, err := byteCount(fn, "count", count, 1, dt)
	if err != nil {
		return err
	}
	sp, err := c.buffer(fn, "send", send, n, c.rank != root)
	if err != nil {
		return err
	}
	rp, err := c.buffer(fn, "recv", recv, n, false)
	if err != nil {
		return err
	}
	sh, err := c.streamHandle(fn, s)
	if err != nil {
		return err
	}
	return c.call(fn, c.lib.broadcast, sp, rp, uintptr(count), uintptr(dt), uintptr(root), c.handle, sh)
}

func (c *Comm) reduce(send, recv mem, count int, dt DataType, op RedOp, root int, s stream) error {
	const fn = "ncclReduce"
	if err := c.prelude(fn, dt, op, true); err != nil {
		return err
	}
	if err := c.checkRank(fn, "root", root); err != nil {
		return err
	}
	n, err := byteCount(fn, "count", count, 1, dt)
	if err != nil {
		return err
	}
	sp, err := c.buffer(fn, "send", send, n, false)
	if err != nil {
		return err
	}
	rp, err := c.buffer(fn, "recv", recv, n, c.rank != root)
	if err != nil {
		return err
	}
	sh, err := c.streamHandle(fn, s)
	if err != nil {
		return err
	}
	return c.call(fn, c.lib.reduce, sp, rp, uintptr(count), uintptr(dt), uintptr(op), uintptr(root), c.handle, sh)
}

func (c *Comm) allGather(send, recv mem, sendCount int, dt DataType, s stream) error {
	const fn = "ncclAllGather"
	if err := c.prelude(fn, dt, 0, false); err != nil {
		return err
	}
	n, err := byteCount(fn, "sendCount", sendCount, 1, dt)
	if err != nil {
		return err
	}
	total, err := byteCount(fn, "sendCount", sendCount, c.size, dt)
	if err != nil {
		return err
	}
	sp, err := c.buffer(fn, "send", send, n, false)
	if err != nil {
		return err
	}
	rp, err := c.buffer(fn, "recv", recv, total, false)
	if err != nil {
		return err
	}
	sh, err := c.streamHandle(fn, s)
	if err != nil {
		return err
	}
	return c.call(fn, c.lib.allGather, sp, rp, uintptr(sendCount), uintptr(dt), c.handle, sh)
}

func (c *Comm) reduceScatter(send, recv mem, recvCount int, dt DataType, op RedOp, s stream) error {
	const fn = "ncclReduceScatter"
	if err := c.prelude(fn, dt, op, true); err != nil {
		return err
	}
	n, err := byteCount(fn, "recvCount", recvCount, 1, dt)
	if err != nil {
		return err
	}
	total, err := byteCount(fn, "recvCount", recvCount, c.size, dt)
	if err != nil {
		return err
	}
	sp, err := c.buffer(fn, "send", send, total, false)
	if err != nil {
		return err
	}
	rp, err := c.buffer(fn, "recv", recv, n, false)
	if err != nil {
		return err
	}
	sh, err := c.streamHandle(fn, s)
	if err != nil {
		return err
	}
	return c.call(fn, c.lib.reduceScatter, sp, rp, uintptr(recvCount), uintptr(dt), uintptr(op), c.handle, sh)
}

func (c *Comm) sendRecv(fn string, buf mem, count int, dt DataType, peer int, s stream) error {
	if err := c.prelude(fn, dt, 0, false); err != nil {
		return err
	}
	if err := c.checkRank(fn, "peer", peer); err != nil {
		return err
	}
	n, err := byteCount(fn, "count", count, 1, dt)
	if err != nil {
		return err
	}
	p, err := c.buffer(fn, "buf", buf, n, false)
	if err != nil {
		return err
	}
	sh, err := c.streamHandle(fn, s)
	if err != nil {
		return err
	}
	sym := c.lib.send
	if fn == "ncclRecv" {
		sym = c.lib.recv
	}
	return c.call(fn, sym, p, uintptr(count), uintptr(dt), uintptr(peer), c.handle, sh)
}
