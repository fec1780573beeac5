package sim

import (
	"fmt"
	"unsafe"

	"github.com/gocu-dev/gocu/kernel"
)

// Thread states within a block.
const (
	stReady   uint8 = iota // runnable: not started yet, or released from a barrier or warp operation
	stRunning              // running now
	stBarrier              // waiting at a barrier
	stWarp                 // waiting at a warp operation
	stExited               // returned from the kernel
)

// thread is one simulated GPU thread. It embeds the kernel.Thread the
// kernel sees and is that thread's kernel.Executor, so the executor methods
// find their state through the receiver.
type thread struct {
	kernel.Thread
	b       *block
	co      *coro // the coroutine running this thread
	rank    int32 // linear index within the block
	nShared int32 // number of kernel.Shared calls executed so far
	started bool  // the coroutine has started running this thread
	abort   bool  // unwind: the block failed

	// The operation the thread waits at, while it waits.
	wait   uint8 // stBarrier, stWarp or stNamed
	nid    int32 // the named barrier, with stNamed
	mb     *mbar // the memory barrier, with stMBar
	kind   kernel.SyncKind
	wop    kernel.WarpOp
	pred   bool
	mask   uint32
	arg    int32
	bits   uint64
	result uint64
	pcs    site // its call site
	synced site // the last barrier the thread passed; zero if none

	// A collective matrix operation it waits at (wop WarpCollective).
	cop  string
	carg any
	cdo  func(*[kernel.WarpSize]any)

	// Asynchronous copies queued and not yet performed; groups holds the
	// end index in async of each committed group.
	async  []asyncCopy
	groups []int

	wg wgState // warpgroup MMAs
}

var _ kernel.Executor = (*thread)(nil)

// failure is the panic value that carries an error found in a thread's
// executor call back to the block's recover.
type failure struct{ err *Error }

// abortSignal unwinds a thread whose block has failed.
type abortSignal struct{}

// fail stops the thread with e, filling in its coordinates.
func (th *thread) fail(e *Error) {
	e.Block, e.Thread = th.BlockIdx, th.ThreadIdx
	panic(failure{e})
}

// setRank makes th the thread of the given rank in its block.
func (th *thread) setRank(r int32) {
	storeRank(&th.rank, r)
	th.nShared = 0
	if len(th.async) > 0 || len(th.groups) > 0 {
		th.resetAsync()
	}
	if th.wg.fenced || len(th.wg.results) > 0 || len(th.wg.reads) > 0 || len(th.wg.written) > 0 {
		th.resetMMA()
	}
	b := th.b
	if b.bx == b.n {
		th.ThreadIdx = kernel.Dim3{X: r, Y: 0, Z: 0}
	} else {
		q := r / b.bx
		th.ThreadIdx = kernel.Dim3{X: r - q*b.bx, Y: q % b.by, Z: q / b.by}
	}
}

// Barrier implements kernel.Executor.
func (th *thread) Barrier(_ *kernel.Thread, kind kernel.SyncKind, pred bool) int32 {
	if useFP {
		fpCallers(&th.pcs)
	} else {
		slowCallers(&th.pcs)
	}
	trim(&th.pcs)
	if th.b.l.expired.Load() {
		th.fail(&Error{Kind: KindTimeout, Pos: posOf(th.pcs[:]), Op: syncName(kind)})
	}
	th.wait, th.kind, th.pred = stBarrier, kind, pred
	if !th.co.yield(evSync) || th.abort { // stopped or aborted: unwind
		panic(abortSignal{})
	}
	return int32(th.result)
}

// Warp implements kernel.Executor.
func (th *thread) Warp(_ *kernel.Thread, op kernel.WarpOp, mask uint32, bits uint64, arg int32) uint64 {
	if useFP {
		fpCallers(&th.pcs)
	} else {
		slowCallers(&th.pcs)
	}
	trim(&th.pcs)
	if th.b.l.expired.Load() {
		th.fail(&Error{Kind: KindTimeout, Pos: posOf(th.pcs[:]), Op: warpName(op)})
	}
	if lane := th.rank & 31; mask&(1<<lane) == 0 {
		th.fail(&Error{Kind: KindWarp, Pos: posOf(th.pcs[:]), Op: warpName(op),
			Msg: fmt.Sprintf("lane %d calls %s with mask %#08x, which does not name it", lane, warpName(op), mask)})
	}
	th.wait, th.wop, th.mask, th.bits, th.arg = stWarp, op, mask, bits, arg
	if !th.co.yield(evSync) || th.abort { // stopped or aborted: unwind
		panic(abortSignal{})
	}
	return th.result
}

// OutOfRange implements kernel.Executor.
func (th *thread) OutOfRange(_ *kernel.Thread, index, length int, base unsafe.Pointer, s *kernel.Site) {
	var pos Pos
	if s != nil {
		pos = siteOf(s)
	} else {
		var pcs site
		if useFP {
			fpCallers(&pcs)
		} else {
			slowCallers(&pcs)
		}
		pos = posOf(pcs[:])
	}
	e := &Error{Kind: KindOutOfRange, Pos: pos, Op: "index", Index: index, Length: length}
	if base != nil {
		e.Memory, _, _ = th.b.memoryOf(uintptr(base))
	}
	th.fail(e)
}

// Loop implements kernel.Executor: the checked twin calls it first in every
// loop body, and it stops the thread there once the launch has run out of
// time.
func (th *thread) Loop(_ *kernel.Thread, s *kernel.Site) {
	if th.b.l.expired.Load() {
		th.fail(&Error{Kind: KindTimeout, Pos: siteOf(s), Op: "loop"})
	}
}

// Access implements kernel.Executor.
func (th *thread) Access(_ *kernel.Thread, addr unsafe.Pointer, size uintptr, acc kernel.Access, s *kernel.Site) {
	b := th.b
	if !b.l.checked {
		return
	}
	a := uintptr(addr)
	if off := a - b.w.arena.base; off < b.next {
		if len(b.pend) > 0 {
			th.checkPendingAt(s, nil, accessName(acc), off, size)
		}
		th.sharedAccess(off, size, acc, s)
		return
	}
	if g := b.l.global; g != nil {
		if r := b.l.argAt(a); r != nil {
			th.globalAccess(g, r, a, size, acc, s)
		}
	}
}

func syncName(k kernel.SyncKind) string {
	switch k {
	case kernel.SyncCount:
		return "SyncThreadsCount"
	case kernel.SyncAnd:
		return "SyncThreadsAnd"
	case kernel.SyncOr:
		return "SyncThreadsOr"
	}
	return "SyncThreads"
}

func warpName(op kernel.WarpOp) string {
	switch op {
	case kernel.WarpSync:
		return "SyncWarp"
	case kernel.ShflIdx:
		return "ShflSync"
	case kernel.ShflUpOp:
		return "ShflUp"
	case kernel.ShflDownOp:
		return "ShflDown"
	case kernel.ShflXorOp:
		return "ShflXor"
	case kernel.VoteBallot:
		return "Ballot"
	case kernel.VoteAny:
		return "Any"
	case kernel.VoteAll:
		return "All"
	}
	return fmt.Sprintf("WarpOp(%d)", op)
}

// waitName names the operation th waits at.
func (th *thread) waitName() string {
	switch th.wait {
	case stBarrier:
		return syncName(th.kind)
	case stNamed:
		return fmt.Sprintf("BarSync(barrier %d)", th.nid)
	case stMBar:
		return "MBarWait"
	}
	return th.opName()
}
