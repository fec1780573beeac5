package sim

import (
	"fmt"

	"github.com/gocu-dev/gocu/kernel"
)

// Named barriers (kernel.BarSync, kernel.BarArrive) and register
// reallocation (kernel.SetMaxNReg).
//
// A named barrier counts arrivals per phase. BarArrive adds one and goes
// on; BarSync adds one and, unless that completes the phase, waits. The
// arrival that completes a phase releases its waiters; the barrier then
// starts its next phase. Arrivals and releases happen on the block's one
// scheduler thread, so they need no locks.
//
// For race detection (checked mode) a block that uses named barriers
// switches from counting barriers to vector clocks (happens): each thread
// has a clock, which its accesses record, and knows for every thread the
// clock below which that thread's accesses are ordered before its own next
// one. An arrival releases what the arriving thread knows, its own
// accesses so far included, into the barrier's phase; the threads waiting
// at BarSync acquire it all when the phase completes. SyncThreads and
// SyncWarp join what their threads know. So exactly the accesses that a
// chain of barriers orders count as ordered.

var _ kernel.BarrierExecutor = (*thread)(nil)

// stNamed is the state of a thread waiting at a named barrier.
const stNamed = stExited + 1

// namedBarrier is the current phase of one named barrier.
type namedBarrier struct {
	threads int32   // the count its arrivals passed; 0 before the first
	ranks   []int32 // the threads that arrived, in order
	waiting []int32 // those waiting at BarSync
}

// The registers per thread a warpgroup asked for, call by call.
type nregCall struct {
	n   int32
	inc bool
	pcs site
}

// NamedBarrier implements kernel.BarrierExecutor.
func (th *thread) NamedBarrier(_ *kernel.Thread, id, threads int32, wait bool) {
	op := "BarArrive"
	if wait {
		op = "BarSync"
	}
	if useFP {
		fpCallers(&th.pcs)
	} else {
		slowCallers(&th.pcs)
	}
	trim(&th.pcs)
	b := th.b
	if b.l.expired.Load() {
		th.fail(&Error{Kind: KindTimeout, Pos: posOf(th.pcs[:]), Op: op})
	}
	usage := func(format string, a ...any) {
		th.fail(&Error{Kind: KindUsage, Pos: posOf(th.pcs[:]), Op: op, Msg: fmt.Sprintf(format, a...)})
	}
	warps := (b.n + 31) / 32 * 32
	switch {
	case id < 1 || id > 15:
		usage("%s on barrier %d: named barriers are 1 to 15 (SyncThreads uses barrier 0)", op, id)
	case threads <= 0 || threads%32 != 0:
		usage("%s on barrier %d with a count of %d threads: the count must be a positive multiple of 32, since whole warps arrive", op, id, threads)
	case threads > warps:
		usage("%s on barrier %d with a count of %d threads, more than the block's %d: it could never complete", op, id, threads, b.n)
	}
	nb := &b.named[id]
	if nb.threads != 0 && nb.threads != threads {
		o := nb.ranks[0]
		th.fail(&Error{Kind: KindUsage, Pos: posOf(th.pcs[:]), Op: op, Other: &Party{Block: b.coord, Thread: b.threadCoord(o), Op: "arrive"},
			Msg: fmt.Sprintf("%s on barrier %d with a count of %d threads, but thread %v arrived at it with a count of %d in the same phase: every arrival must pass the same count",
				op, id, threads, b.threadCoord(o), nb.threads)})
	}
	nb.threads = threads
	nb.ranks = append(nb.ranks, th.rank)
	if b.l.checked {
		if !b.hb.on {
			b.hb.start(b)
		}
		b.hb.arrive(id, th.rank)
	}
	if int32(len(nb.ranks)) == threads {
		th.completeNamed(id, op, wait)
		return
	}
	if !wait {
		return
	}
	nb.waiting = append(nb.waiting, th.rank)
	th.wait, th.nid = stNamed, id
	if !th.co.yield(evSync) || th.abort { // stopped or aborted: unwind
		panic(abortSignal{})
	}
}

// completeNamed ends the current phase of barrier id, which th's arrival
// completed: it checks that whole warps arrived and releases the waiters
// (th among them when wait).
func (th *thread) completeNamed(id int32, op string, wait bool) {
	b := th.b
	nb := &b.named[id]
	counts := make(map[int32]int32, len(nb.ranks)/32+1)
	for _, r := range nb.ranks {
		counts[r/32]++
	}
	for _, r := range nb.ranks {
		w := r / 32
		lanes := min(b.n-32*w, 32)
		if counts[w] == lanes {
			continue
		}
		msg := fmt.Sprintf("barrier %d completed its count of %d threads with %d of the %d lanes of warp %d (thread %v among them): every lane of a warp arrives together",
			id, nb.threads, counts[w], lanes, w, b.threadCoord(r))
		if counts[w] > lanes {
			msg = fmt.Sprintf("barrier %d completed its count of %d threads with %d arrivals from the %d lanes of warp %d (thread %v among them): a warp arrived twice in one phase, so more threads arrive than the count before the barrier completes",
				id, nb.threads, counts[w], lanes, w, b.threadCoord(r))
		}
		th.fail(&Error{Kind: KindUsage, Pos: posOf(th.pcs[:]), Op: op, Msg: msg})
	}
	hb := &b.hb
	for _, r := range nb.waiting {
		o := b.threads[r]
		o.synced = o.pcs
		b.state[r] = stReady
		b.queue = append(b.queue, r)
		if hb.on {
			hb.acquire(id, r)
		}
	}
	if hb.on {
		if wait {
			hb.acquire(id, th.rank)
		}
		clear(hb.bk[id])
	}
	b.nNamed -= int32(len(nb.waiting))
	nb.threads, nb.ranks, nb.waiting = 0, nb.ranks[:0], nb.waiting[:0]
	th.synced = th.pcs
}

// happens is a block's happens-before state for race detection once it
// uses named barriers.
type happens struct {
	on    bool
	n     int32
	clk   []uint32     // per thread: its clock, which its accesses record
	vc    []uint32     // vc[c·n+p]: accesses of p with a clock below it are ordered before c's next
	bk    [16][]uint32 // per named barrier: what the arrivals of its phase released
	floor uint32       // clocks below it are ordered before every thread: the last SyncThreads
	max   uint32       // the largest clock
}

// start switches block b to vector clocks: every thread is at the
// block's epoch, which every earlier barrier interval is below.
func (h *happens) start(b *block) {
	n := b.n
	h.on, h.n, h.floor, h.max = true, n, b.epoch, b.epoch
	h.clk = grow(h.clk, int(n))
	for i := range h.clk {
		h.clk[i] = b.epoch
	}
	h.vc = grow(h.vc, int(n*n))
	clear(h.vc)
	for i := range h.bk {
		h.bk[i] = grow(h.bk[i], int(n))
		clear(h.bk[i])
	}
}

// grow returns s with length n, reusing its memory when it can.
func grow(s []uint32, n int) []uint32 {
	if cap(s) < n {
		return make([]uint32, n)
	}
	return s[:n]
}

// tick advances thread r's clock, so that its next accesses are not
// covered by what it released.
func (h *happens) tick(r int32) {
	h.clk[r]++
	h.max = max(h.max, h.clk[r])
}

// arrive releases what thread r knows into barrier id's phase.
func (h *happens) arrive(id, r int32) {
	bk, row := h.bk[id], h.vc[r*h.n:(r+1)*h.n]
	for i, v := range row {
		bk[i] = max(bk[i], v)
	}
	bk[r] = max(bk[r], h.clk[r]+1)
	h.tick(r)
}

// acquire gives thread r what barrier id's phase released.
func (h *happens) acquire(id, r int32) {
	bk, row := h.bk[id], h.vc[r*h.n:(r+1)*h.n]
	for i, v := range bk {
		row[i] = max(row[i], v)
	}
}

// full orders every access before a SyncThreads of the whole block.
func (h *happens) full() uint32 {
	h.max++
	h.floor = h.max
	for i := range h.clk {
		h.clk[i] = h.max
	}
	return h.max
}

// join makes the lanes of mask in the warp at rank base know what each
// of them knows, at a SyncWarp.
func (h *happens) join(base int32, mask uint32) {
	var lanes []int32
	for l := range int32(32) {
		if mask&(1<<l) != 0 && base+l < h.n {
			lanes = append(lanes, base+l)
		}
	}
	k := make([]uint32, h.n)
	for _, r := range lanes {
		for i, v := range h.vc[r*h.n : (r+1)*h.n] {
			k[i] = max(k[i], v)
		}
		k[r] = max(k[r], h.clk[r]+1)
	}
	for _, r := range lanes {
		copy(h.vc[r*h.n:(r+1)*h.n], k)
		h.tick(r)
	}
}

// ordered reports whether the access of thread p at clock pc is ordered
// before the next access of thread c.
func (h *happens) ordered(pc uint32, p, c int32) bool {
	return pc < max(h.floor, h.vc[c*h.n+p])
}

// namedStuck reports the lowest-ranked thread waiting at a named barrier
// that nothing can complete, and the lowest-ranked thread not waiting
// there; it reports false when no thread waits at a named barrier.
func (b *block) namedStuck() bool {
	var a *thread
	for r := range b.n {
		if b.state[r] == stNamed {
			a = b.threads[r]
			break
		}
	}
	if a == nil {
		return false
	}
	nb := &b.named[a.nid]
	e := &Error{Kind: KindDivergentBarrier, Block: b.coord, Thread: a.ThreadIdx, Pos: posOf(a.pcs[:]), Op: "BarSync",
		Msg: fmt.Sprintf("BarSync on barrier %d waits forever: %d of its %d threads arrived, and no thread that can still run is left to arrive",
			a.nid, len(nb.ranks), nb.threads)}
	for r := range b.n {
		if b.state[r] == stNamed && b.threads[r].nid == a.nid {
			continue
		}
		e.Other = b.party(r)
		break
	}
	b.err = e
	return true
}

// SetMaxNReg implements kernel.BarrierExecutor.
func (th *thread) SetMaxNReg(_ *kernel.Thread, n int32, inc bool) {
	const op = "SetMaxNReg"
	var pcs site
	if useFP {
		fpCallers(&pcs)
	} else {
		slowCallers(&pcs)
	}
	trim(&pcs)
	b := th.b
	usage := func(other *Party, format string, a ...any) {
		th.fail(&Error{Kind: KindUsage, Pos: posOf(pcs[:]), Op: op, Other: other, Msg: fmt.Sprintf(format, a...)})
	}
	if n < 24 || n > 256 || n%8 != 0 {
		usage(nil, "SetMaxNReg(%d): the count of registers must be a multiple of 8 from 24 to 256", n)
	}
	wg := th.rank / 128
	if b.n < 128*(wg+1) {
		usage(nil, "SetMaxNReg in warpgroup %d, which has only %d of its 128 threads: make the block size a multiple of 128", wg, b.n-128*wg)
	}
	if b.nregCount == nil {
		b.nregCount = make([]int32, b.n)
		b.nregCalls = make([][]nregCall, (b.n+127)/128)
	}
	calls := b.nregCalls[wg]
	k := b.nregCount[th.rank]
	b.nregCount[th.rank]++
	if int(k) < len(calls) {
		if c := calls[k]; c.n != n || c.inc != inc {
			usage(&Party{Block: b.coord, Pos: posOf(c.pcs[:]), Op: op}, "SetMaxNReg(%d, inc %v) differs from call %d of another thread of warpgroup %d, SetMaxNReg(%d, inc %v): the whole warpgroup makes the same calls",
				n, inc, k+1, wg, c.n, c.inc)
		}
		return
	}
	if k > 0 {
		p := calls[k-1]
		if inc && n < p.n || !inc && n > p.n {
			usage(nil, "SetMaxNReg(%d, inc %v) after SetMaxNReg(%d): an increase cannot lower the count, nor a decrease raise it", n, inc, p.n)
		}
	}
	b.nregCalls[wg] = append(calls, nregCall{n: n, inc: inc, pcs: pcs})
}

// checkNReg reports, when the block has ended, a thread that made fewer
// SetMaxNReg calls than another thread of its warpgroup.
func (b *block) checkNReg() {
	for r := range b.n {
		wg := r / 128
		if int(b.nregCount[r]) != len(b.nregCalls[wg]) {
			c := b.nregCalls[wg][b.nregCount[r]]
			b.err = &Error{Kind: KindUsage, Block: b.coord, Thread: b.threadCoord(r), Op: "SetMaxNReg",
				Other: &Party{Block: b.coord, Pos: posOf(c.pcs[:]), Op: "SetMaxNReg"},
				Msg: fmt.Sprintf("thread %v made %d SetMaxNReg calls, but another thread of warpgroup %d made %d: the whole warpgroup makes the same calls",
					b.threadCoord(r), b.nregCount[r], wg, len(b.nregCalls[wg]))}
			return
		}
	}
}
