package sim

import (
	"fmt"
	"unsafe"

	"github.com/gocu-dev/gocu/kernel"
)

// Memory barriers (kernel.MBarrier) and bulk copies (kernel.CpAsyncBulk).
//
// The block keeps each barrier's state by its shared-memory offset: the
// count of arrivals per phase, the arrivals still pending, the
// transaction bytes still expected, and the number of completed phases.
// A bulk copy is queued on its barrier and performed once the phase has
// all its arrivals (or at once, when it already has), the latest moment
// the GPU could deliver it; its bytes then count down the transactions.
// The phase completes when both counts are zero, releasing the threads
// that wait for it.
//
// For race detection a block that uses memory barriers switches to vector
// clocks, as for named barriers (see named.go): an arrival releases what
// the thread knows into the phase, and so does a copy's issue, at which
// the copy's accesses are recorded; a thread that waits for the phase
// acquires it all.

var _ kernel.MBarrierExecutor = (*thread)(nil)

// stMBar is the state of a thread waiting at a memory barrier.
const stMBar = stNamed + 1

// mbar is one memory barrier of the running block.
type mbar struct {
	off     uintptr // its arena offset
	count   int32   // arrivals per phase
	pending int32   // arrivals the current phase still needs
	tx      int64   // transaction bytes the current phase still expects
	phase   uint32  // completed phases
	waiting []int32 // threads waiting for the current phase
	copies  []bulkCopy
	rel     []uint32 // what the current phase's arrivals and copies released
	done    []uint32 // what the last completed phase released
}

// bulkCopy is a queued bulk copy.
type bulkCopy struct {
	dst, src unsafe.Pointer
	n        uintptr
}

// mbarAt returns the initialised barrier at p, failing th for op when
// there is none.
func (th *thread) mbarAt(p *kernel.MBarrier, op string, pcs *site) *mbar {
	b := th.b
	off, ok := b.sharedOff(unsafe.Pointer(p), 8)
	if !ok {
		th.fail(&Error{Kind: KindUsage, Pos: posOf(pcs[:]), Op: op, Memory: th.memoryName(unsafe.Pointer(p)),
			Msg: fmt.Sprintf("%s on a barrier at %#x, which is not in the block's shared memory: declare barriers with kernel.Shared", op, uintptr(unsafe.Pointer(p)))})
	}
	m := b.mbars[off]
	if m == nil {
		mem, start, _ := b.sharedMemory(off)
		th.fail(&Error{Kind: KindUsage, Pos: posOf(pcs[:]), Op: op, Memory: mem, Index: int(off - start),
			Msg: fmt.Sprintf("%s on the barrier at byte %d of %s, which MBarInit has not initialised (initialise it in one thread, then SyncThreads)", op, off-start, mem)})
	}
	return m
}

// MBarrier implements kernel.MBarrierExecutor.
func (th *thread) MBarrier(_ *kernel.Thread, op kernel.MBarOp, p *kernel.MBarrier, n int32, parity uint32) {
	name := [...]string{"MBarInit", "MBarArrive", "MBarArriveExpectTx", "MBarWait"}[op]
	if useFP {
		fpCallers(&th.pcs)
	} else {
		slowCallers(&th.pcs)
	}
	trim(&th.pcs)
	b := th.b
	if b.l.expired.Load() {
		th.fail(&Error{Kind: KindTimeout, Pos: posOf(th.pcs[:]), Op: name})
	}
	usage := func(format string, a ...any) {
		th.fail(&Error{Kind: KindUsage, Pos: posOf(th.pcs[:]), Op: name, Msg: fmt.Sprintf(format, a...)})
	}
	if b.l.checked && !b.hb.on {
		b.hb.start(b)
	}
	if op == kernel.MBarInitOp {
		if n < 1 || n >= 1<<20 {
			usage("MBarInit with a count of %d: the count must be from 1 to 2^20-1", n)
		}
		off, ok := b.sharedOff(unsafe.Pointer(p), 8)
		if !ok {
			th.mbarAt(p, name, &th.pcs) // fails
		}
		if uintptr(unsafe.Pointer(p))%8 != 0 {
			usage("MBarInit on a barrier at %#x, which is not 8-byte aligned", uintptr(unsafe.Pointer(p)))
		}
		if m := b.mbars[off]; m != nil && (len(m.waiting) > 0 || len(m.copies) > 0) {
			usage("MBarInit on a barrier that threads wait at or copies still deliver bytes to")
		}
		m := &mbar{off: off, count: n, pending: n}
		if b.mbars == nil {
			b.mbars = make(map[uintptr]*mbar)
		}
		b.mbars[off] = m
		*p = kernel.MBarrier(n) // the GPU keeps state in the word; no kernel reads it
		return
	}
	m := th.mbarAt(p, name, &th.pcs)
	switch op {
	case kernel.MBarArriveOp, kernel.MBarArriveTxOp:
		if op == kernel.MBarArriveTxOp {
			if n < 0 || n >= 1<<20 {
				usage("MBarArriveExpectTx of %d bytes: the bytes must be from 0 to 2^20-1", n)
			}
			m.tx += int64(n)
		}
		if m.pending == 0 {
			usage("%s at a barrier whose phase %d already has all its %d arrivals and waits for %d transaction bytes: more threads arrive than MBarInit's count",
				name, m.phase, m.count, m.tx)
		}
		m.pending--
		if b.hb.on {
			b.hb.release(th.mrel(m), th.rank)
		}
		th.tryComplete(m, name)
	case kernel.MBarWaitOp:
		if parity > 1 {
			usage("MBarWait with parity %d: the parity is 0 or 1", parity)
		}
		if m.phase&1 != parity {
			if b.hb.on && m.done != nil {
				b.hb.acquireFrom(m.done, th.rank)
			}
			return
		}
		m.waiting = append(m.waiting, th.rank)
		th.wait, th.mb = stMBar, m
		if !th.co.yield(evSync) || th.abort { // stopped or aborted: unwind
			panic(abortSignal{})
		}
	}
}

// mrel returns m's release vector for the current phase.
func (th *thread) mrel(m *mbar) []uint32 {
	if len(m.rel) != int(th.b.n) {
		m.rel = make([]uint32, th.b.n)
	}
	return m.rel
}

// tryComplete performs m's queued copies once its phase has all its
// arrivals, and completes the phase once they have delivered the
// expected bytes.
func (th *thread) tryComplete(m *mbar, op string) {
	if m.pending > 0 {
		return
	}
	b := th.b
	for _, c := range m.copies {
		copy(unsafe.Slice((*byte)(c.dst), c.n), unsafe.Slice((*byte)(c.src), c.n))
		off := uintptr(c.dst) - b.w.arena.base
		for i := range c.n / 16 {
			b.pend[off/16+i]--
		}
		m.tx -= int64(c.n)
	}
	m.copies = m.copies[:0]
	if m.tx < 0 {
		mem, start, _ := b.sharedMemory(m.off)
		th.fail(&Error{Kind: KindUsage, Pos: posOf(th.pcs[:]), Op: op, Memory: mem, Index: int(m.off - start),
			Msg: fmt.Sprintf("the copies to phase %d of the barrier at byte %d of %s delivered %d bytes more than MBarArriveExpectTx announced (a transaction count underflow)",
				m.phase, m.off-start, mem, -m.tx)})
	}
	if m.tx > 0 {
		return
	}
	m.phase++
	m.pending = m.count
	hb := &b.hb
	if hb.on {
		m.done = append(m.done[:0], th.mrel(m)...)
		clear(m.rel)
	}
	for _, r := range m.waiting {
		o := b.threads[r]
		o.synced = o.pcs
		o.mb = nil
		b.state[r] = stReady
		b.queue = append(b.queue, r)
		if hb.on {
			hb.acquireFrom(m.done, r)
		}
	}
	b.nMBar -= int32(len(m.waiting))
	m.waiting = m.waiting[:0]
}

// CopyBulk implements kernel.MBarrierExecutor.
func (th *thread) CopyBulk(_ *kernel.Thread, dst, src unsafe.Pointer, n, elem uintptr, p *kernel.MBarrier) {
	const op = "CpAsyncBulk"
	var pcs site
	if useFP {
		fpCallers(&pcs)
	} else {
		slowCallers(&pcs)
	}
	trim(&pcs)
	b := th.b
	m := th.mbarAt(p, op, &pcs)
	off, ok := b.sharedOff(dst, n)
	if !ok {
		th.fail(&Error{Kind: KindUsage, Op: op, Memory: th.memoryName(dst), Pos: posOf(pcs[:]),
			Msg: fmt.Sprintf("%s copies into shared memory only, but its destination %#x is not in the block's shared memory", op, uintptr(dst))})
	}
	if _, shared := b.sharedOff(src, n); shared {
		th.fail(&Error{Kind: KindUsage, Op: op, Pos: posOf(pcs[:]), Msg: op + " copies from global memory, but its source is shared memory"})
	}
	if len(b.pend) > 0 {
		th.checkPendingAt(nil, &pcs, op, off, n)
	}
	if len(b.wgRead) > 0 {
		th.checkMMARead(op, &pcs, nil, off, n)
	}
	if need := int((b.next + 15) / 16); len(b.pend) < need {
		b.pend = append(b.pend, make([]int32, need-len(b.pend))...)
	}
	for i := range n / 16 {
		b.pend[off/16+i]++
	}
	fill(unsafe.Slice((*byte)(dst), n))
	if b.l.checked {
		if !b.hb.on {
			b.hb.start(b)
		}
		s := th.siteOfPCs(pcs)
		elem = max(elem, 1)
		for i := uintptr(0); i < n; i += elem {
			th.Access(&th.Thread, unsafe.Add(src, i), elem, kernel.Read, s)
			th.sharedAccess(off+i, elem, kernel.Write, s)
		}
		b.hb.release(th.mrel(m), th.rank)
	}
	m.copies = append(m.copies, bulkCopy{dst: dst, src: src, n: n})
	th.pcs = pcs
	th.tryComplete(m, op)
}

// release releases what thread r knows into the phase vector bk.
func (h *happens) release(bk []uint32, r int32) {
	row := h.vc[r*h.n : (r+1)*h.n]
	for i, v := range row {
		bk[i] = max(bk[i], v)
	}
	bk[r] = max(bk[r], h.clk[r]+1)
	h.tick(r)
}

// acquireFrom gives thread r what the phase vector bk released.
func (h *happens) acquireFrom(bk []uint32, r int32) {
	row := h.vc[r*h.n : (r+1)*h.n]
	for i, v := range bk {
		row[i] = max(row[i], v)
	}
}

// mbarStuck reports the lowest-ranked thread waiting at a memory barrier
// whose phase nothing can complete; it reports false when none waits.
func (b *block) mbarStuck() bool {
	var a *thread
	for r := range b.n {
		if b.state[r] == stMBar {
			a = b.threads[r]
			break
		}
	}
	if a == nil {
		return false
	}
	m := a.mb
	mem, start, _ := b.sharedMemory(m.off)
	why := fmt.Sprintf("lacks %d of its %d arrivals", m.pending, m.count)
	if m.pending == 0 {
		why = fmt.Sprintf("has its arrivals but expects %d more transaction bytes, which no copy delivers", m.tx)
	} else if m.tx > 0 {
		why += fmt.Sprintf(" and it expects %d transaction bytes", m.tx)
	}
	e := &Error{Kind: KindDivergentBarrier, Block: b.coord, Thread: a.ThreadIdx, Pos: posOf(a.pcs[:]), Op: "MBarWait", Memory: mem, Index: int(m.off - start),
		Msg: fmt.Sprintf("MBarWait(parity %d) on the barrier at byte %d of %s waits forever: its phase %d %s, and no thread that can still run is left to complete it",
			m.phase&1, m.off-start, mem, m.phase, why)}
	for r := range b.n {
		if b.state[r] == stMBar && b.threads[r].mb == m {
			continue
		}
		e.Other = b.party(r)
		break
	}
	b.err = e
	return true
}
