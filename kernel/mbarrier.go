package kernel

import (
	"fmt"
	"unsafe"
)

// Memory barriers (PTX mbarrier) and bulk asynchronous copies (PTX
// cp.async.bulk): the way Hopper kernels hand tiles from producer threads,
// or the copy engine, to consumer threads.
//
// An MBarrier lives in shared memory, declared with kernel.Shared, and is
// initialised by one thread with MBarInit followed by SyncThreads. It
// counts phases. A phase completes once its count of arrivals has arrived
// (MBarArrive, MBarArriveExpectTx) and every transaction byte announced by
// MBarArriveExpectTx has been delivered by the bulk copies that name the
// barrier (CpAsyncBulk); then the next phase begins, with the same count.
// MBarWait(bar, parity) waits until the phase of that parity (0 for the
// first phase, 1 for the second, 0 again for the third) has completed.
// Writes made before an arrival, and the bytes of the phase's copies, are
// visible to the threads that waited for the phase.
//
// The simulator runs the barriers exactly and reports misuse as errors: a
// count outside 1 to 2^20-1, an arrival at or a wait on a barrier that
// MBarInit has not initialised, more arrivals than the count in one phase,
// copies that deliver more bytes than announced, and a thread waiting for
// a phase that no remaining thread or copy can complete (a deadlock).
// Barriers and bulk copies need sm_90; elsewhere they trap.

// MBarrier is a barrier object in shared memory (PTX mbarrier, 8 bytes).
// Declare barriers as a shared array, kernel.Shared[[2]kernel.MBarrier](t),
// and use them only through MBarInit and the functions after it.
type MBarrier uint64

// MBarInit initialises bar for phases of count arrivals (PTX
// mbarrier.init); count must be from 1 to 2^20-1. One thread initialises
// a barrier, then the block synchronises before any thread uses it.
func MBarInit(t *Thread, bar *MBarrier, count int32) {
	t.mbarriers("MBarInit").MBarrier(t, MBarInitOp, bar, count, 0)
}

// MBarArrive arrives at bar's current phase and goes on without waiting
// (PTX mbarrier.arrive).
func MBarArrive(t *Thread, bar *MBarrier) {
	t.mbarriers("MBarArrive").MBarrier(t, MBarArriveOp, bar, 0, 0)
}

// MBarArriveExpectTx announces that bulk copies will deliver bytes more
// bytes to bar's current phase, then arrives at it (PTX
// mbarrier.arrive.expect_tx). The phase completes only once they have.
func MBarArriveExpectTx(t *Thread, bar *MBarrier, bytes int32) {
	t.mbarriers("MBarArriveExpectTx").MBarrier(t, MBarArriveTxOp, bar, bytes, 0)
}

// MBarWait waits until the phase of bar with the given parity has
// completed (a loop of PTX mbarrier.try_wait.parity). parity is 0 or 1:
// a thread that waits for every phase in turn flips it after each wait.
// It returns at once when the barrier's current phase has the other
// parity, since the phase asked for then is the one just completed.
func MBarWait(t *Thread, bar *MBarrier, parity uint32) {
	t.mbarriers("MBarWait").MBarrier(t, MBarWaitOp, bar, 0, parity)
}

// CpAsyncBulk starts copying len(dst) elements from global memory at src to
// shared memory at dst through the copy engine, and delivers their bytes
// to bar's current phase as transaction bytes (PTX
// cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes). Both
// addresses are 16-byte aligned and the size is a positive multiple of 16
// bytes. One thread issues it, usually after MBarArriveExpectTx announced
// the bytes; the data is there for the threads that waited at bar for the
// phase. Until then dst must not be read or written.
func CpAsyncBulk[T any](t *Thread, dst, src []T, bar *MBarrier) {
	const op = "CpAsyncBulk"
	ex := t.mbarriers(op)
	var z T
	size := unsafe.Sizeof(z)
	n := uintptr(len(dst)) * size
	switch {
	case n == 0 || n%16 != 0:
		panic(&Fault{Op: op, Msg: fmt.Sprintf("copies %d bytes (%d elements of %T): the size must be a positive multiple of 16 bytes", n, len(dst), z)})
	case len(src) < len(dst):
		panic(&Fault{Op: op, Msg: fmt.Sprintf("src has %d elements, fewer than dst's %d", len(src), len(dst))})
	}
	d, s := unsafe.Pointer(unsafe.SliceData(dst)), unsafe.Pointer(unsafe.SliceData(src))
	if uintptr(d)%16 != 0 || uintptr(s)%16 != 0 {
		panic(&Fault{Op: op, Misaligned: true, Msg: fmt.Sprintf("addresses %#x (dst) and %#x (src) must both be 16-byte aligned (a misaligned address on the GPU)", uintptr(d), uintptr(s))})
	}
	ex.CopyBulk(t, d, s, n, size, bar)
}

// MBarOp names a memory-barrier operation.
type MBarOp uint8

// The memory-barrier operations.
const (
	MBarInitOp     MBarOp = iota // MBarInit: n is the count
	MBarArriveOp                 // MBarArrive
	MBarArriveTxOp               // MBarArriveExpectTx: n is the bytes
	MBarWaitOp                   // MBarWait: parity
)

// MBarrierExecutor is the part of an executor that runs memory barriers
// and bulk copies. Package sim implements it.
type MBarrierExecutor interface {
	// MBarrier performs op on bar; MBarWaitOp returns once the phase of
	// the given parity has completed.
	MBarrier(t *Thread, op MBarOp, bar *MBarrier, n int32, parity uint32)
	// CopyBulk queues a copy of n bytes from src to dst whose bytes
	// complete transactions of bar; elem is the size of the elements.
	CopyBulk(t *Thread, dst, src unsafe.Pointer, n, elem uintptr, bar *MBarrier)
}

func (t *Thread) mbarriers(op string) MBarrierExecutor {
	if b, ok := t.exec(op).(MBarrierExecutor); ok {
		return b
	}
	panic(&Fault{Op: op, Msg: "the executor does not run memory barriers"})
}
