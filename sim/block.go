package sim

import (
	"fmt"
	"math/bits"

	"github.com/gocu-dev/gocu/kernel"
)

// Block execution modes.
const (
	modeFast    = iota // the block's threads run one after another as plain calls
	modeBarrier        // each thread has a coroutine; they meet at barriers
)

// block is the state of the block a worker is running.
//
// Every block starts on the fast path: one coroutine (the worker's runner)
// calls the kernel for each thread in turn, in a seeded order. If no thread
// reaches a barrier or a warp operation, that is all: plain calls in a
// loop. The first thread that reaches one suspends the runner, and the block
// switches to barrier mode: that thread keeps the runner, every thread not
// yet started gets a coroutine of its own, and the threads that already
// returned stay returned (so a barrier they skipped is a divergent barrier,
// reported once every other thread has stopped). In barrier mode the
// scheduler runs each runnable thread until it waits or returns, in an
// order shuffled per barrier interval, releases a barrier when every thread
// of the block waits at the same one, and completes a warp operation when
// every lane of its mask has reached it.
type block struct {
	w     *worker
	l     *launch
	f     func(*kernel.Thread)
	idx   uint64      // linear block index
	pos   uint64      // position in the launch's block order
	coord kernel.Dim3 // BlockIdx

	n, bx, by int32 // threads per block and block dimensions

	mode   int
	seqPos int32 // fast path: threads started so far
	order  affine

	state   []uint8
	threads []*thread
	coros   []*coro // coroutines taken for this block (not the runner)
	queue   []int32
	qi      int

	nExited, nBarrier, nWarp int32
	count                    int32 // predicates passed true at the current barrier

	epoch uint32   // barriers passed, for race detection
	wep   []uint32 // per warp: warp-level synchronisations, for race detection
	gen   uint32   // generation of the worker's shared shadow for this block

	decls        []decl
	static, next uintptr // static shared bytes declared; arena bytes in use

	rng rng
	err *Error

	pend []int32 // per 16 bytes of the arena: asynchronous copies pending into them
	// Per 16 bytes of the arena: warpgroup MMAs still reading them, and
	// the thread (rank+1) that wrote them through the generic proxy
	// without FenceProxyAsync since, or 0.
	wgRead, unfenced []int32

	named     [16]namedBarrier  // named barriers; 0 is unused
	hb        happens           // vector clocks for race detection, once named barriers are used
	nNamed    int32             // threads waiting at named barriers
	nregCount []int32           // per thread: SetMaxNReg calls; nil if none
	nregCalls [][]nregCall      // per warpgroup: the calls of its first thread to make them
	mbars     map[uintptr]*mbar // memory barriers by arena offset
	nMBar     int32             // threads waiting at memory barriers
}

// run executes block idx (at position pos of the launch order) and returns
// its first error.
func (b *block) run(idx, pos uint64) *Error {
	l := b.l
	b.idx, b.pos, b.err = idx, pos, nil
	gx, gy := uint64(l.grid.X), uint64(l.grid.Y)
	b.coord = kernel.Dim3{X: int32(idx % gx), Y: int32(idx / gx % gy), Z: int32(idx / (gx * gy))}
	b.rng = rng{mix(l.seed, idx)}
	b.order = newAffine(&b.rng, uint64(b.n))
	b.mode, b.seqPos = modeFast, 0
	b.nExited, b.nBarrier, b.nWarp, b.count, b.epoch = 0, 0, 0, 0, 0
	b.queue, b.qi = b.queue[:0], 0
	clear(b.wep)
	if b.gen++; b.gen > genMax { // wrapped: stale shadow entries could look current
		clear(b.w.shadow)
		b.gen = 1
	}
	b.resetShared()
	clear(b.pend)
	clear(b.wgRead)
	clear(b.unfenced)
	for i := range b.named {
		nb := &b.named[i]
		nb.threads, nb.ranks, nb.waiting = 0, nb.ranks[:0], nb.waiting[:0]
	}
	b.nNamed, b.nregCount, b.nregCalls = 0, nil, nil
	clear(b.mbars)
	b.nMBar = 0
	b.hb.on = false

	r := b.w.runner
	b.w.running.Store(r.th)
	r.th.BlockIdx = b.coord
	r.seq = true
	if r.resume() == evSync && b.err == nil {
		b.barrierMode()
	}
	if b.err == nil && b.nregCount != nil {
		b.checkNReg()
	}
	if b.err != nil {
		b.abort()
	}
	b.w.idle = append(b.w.idle, b.coros...)
	b.coros = b.coros[:0]
	return b.err
}

// runSeq is the fast path: it runs the block's threads one after another on
// the runner thread th, until they all return or one of them waits.
func (b *block) runSeq(th *thread) {
	// Step through the seeded permutation r = (a*k + c) mod n by additions.
	a, n := int32(b.order.a), b.n
	r := int32(b.order.at(uint64(b.seqPos)))
	for b.seqPos < n {
		b.seqPos++
		th.setRank(r)
		callKernel(b.f, &th.Thread)
		if b.mode != modeFast {
			return // th was the thread that switched the block to barrier mode
		}
		if th.pendingAsync() {
			th.finishAsync()
		}
		if r += a; r >= n {
			r -= n
		}
	}
}

// barrierMode switches the block to barrier mode when the runner's current
// thread waits, and runs the block to the end.
func (b *block) barrierMode() {
	w := b.w
	b.mode = modeBarrier
	cur := w.runner.th
	for i := range b.state {
		b.state[i] = stExited
		b.threads[i] = nil
	}
	b.nExited = b.seqPos - 1
	b.threads[cur.rank] = cur
	cur.started, cur.abort, cur.synced = true, false, site{}
	for j := b.seqPos; j < b.n; j++ {
		r := int32(b.order.at(uint64(j)))
		th := w.thread(r)
		th.BlockIdx = b.coord
		th.nShared, th.started, th.abort, th.synced = 0, false, false, site{}
		th.resetAsync()
		c := w.coro()
		c.th, c.seq = th, false
		th.co = c
		b.coros = append(b.coros, c)
		b.threads[r] = th
		b.state[r] = stReady
		b.queue = append(b.queue, r)
	}
	b.arrive(cur)
	b.schedule()
}

// schedule runs threads until every thread has returned or the block
// fails.
func (b *block) schedule() {
	for b.err == nil {
		for b.qi < len(b.queue) {
			r := b.queue[b.qi]
			b.qi++
			th := b.threads[r]
			b.state[r] = stRunning
			th.started = true
			b.w.running.Store(th)
			ev := th.co.resume()
			if b.err != nil {
				b.state[r] = stExited
				return
			}
			if ev == evDone {
				b.state[r] = stExited
				b.nExited++
				if th.pendingAsync() {
					th.finishAsync()
				}
				continue
			}
			b.arrive(th)
			if b.err != nil {
				return
			}
		}
		b.queue, b.qi = b.queue[:0], 0
		switch {
		case b.nExited == b.n:
			return
		case b.nWarp == 0 && b.nBarrier == b.n:
			b.release()
		default:
			b.stuck()
		}
	}
}

// arrive records that th waits at a barrier or warp operation.
func (b *block) arrive(th *thread) {
	if th.wait == stBarrier {
		b.state[th.rank] = stBarrier
		b.nBarrier++
		if th.pred {
			b.count++
		}
		return
	}
	if th.wait == stNamed {
		b.state[th.rank] = stNamed
		b.nNamed++
		return
	}
	if th.wait == stMBar {
		b.state[th.rank] = stMBar
		b.nMBar++
		return
	}
	b.state[th.rank] = stWarp
	b.nWarp++
	b.warpArrive(th)
}

// release lets every thread pass the barrier they all wait at, after
// checking that it is the same barrier.
func (b *block) release() {
	first := b.threads[0]
	for r := int32(1); r < b.n; r++ {
		if b.threads[r].pcs != first.pcs {
			b.divergent()
			return
		}
	}
	var res uint64
	switch first.kind {
	case kernel.SyncCount:
		res = uint64(b.count)
	case kernel.SyncAnd:
		res = b2u(b.count == b.n)
	case kernel.SyncOr:
		res = b2u(b.count > 0)
	}
	if b.hb.on {
		b.epoch = b.hb.full()
	} else {
		b.epoch++
	}
	for r := range b.n {
		th := b.threads[r]
		th.result = res
		th.synced = th.pcs
		b.state[r] = stReady
		b.queue = append(b.queue, r)
	}
	b.rng.shuffle(b.queue)
	b.nBarrier, b.count = 0, 0
}

func b2u(v bool) uint64 {
	if v {
		return 1
	}
	return 0
}

// stuck reports why no thread can run although some have not returned:
// a warp operation waiting for lanes that are elsewhere, or a barrier that
// not every thread reaches.
func (b *block) stuck() {
	if b.nWarp > 0 {
		for r := range b.n {
			if b.state[r] != stWarp {
				continue
			}
			a := b.threads[r]
			base := r &^ 31
			group := a.mask & b.lanes(base)
			for m := group; m != 0; m &= m - 1 {
				o := base + int32(bits.TrailingZeros32(m))
				if b.state[o] != stWarp {
					e := &Error{Kind: KindWarp, Block: b.coord, Thread: a.ThreadIdx, Pos: posOf(a.pcs[:]), Op: a.opName(),
						Other: b.party(o)}
					e.Msg = fmt.Sprintf("%s with mask %#08x is reached by only part of the warp: lane %d of the mask %s",
						a.opName(), a.mask, o-base, b.whereIs(o))
					if a.wop == kernel.WarpCollective {
						e.Msg = fmt.Sprintf("%s is reached by only part of the warp (a warp matrix operation needs every lane): lane %d %s",
							a.opName(), o-base, b.whereIs(o))
					}
					b.err = e
					return
				}
			}
		}
	}
	if b.nNamed > 0 && b.namedStuck() {
		return
	}
	if b.nMBar > 0 && b.mbarStuck() {
		return
	}
	b.divergent()
}

// divergent reports a barrier that not every thread reaches: the
// lowest-ranked thread waiting at a barrier, and the lowest-ranked thread
// that is not waiting at the same one. Both are independent of the
// schedule, so the error is the same for every seed.
func (b *block) divergent() {
	var a *thread
	for r := range b.n {
		if b.state[r] == stBarrier {
			a = b.threads[r]
			break
		}
	}
	if a == nil {
		b.err = &Error{Kind: KindDivergentBarrier, Block: b.coord, Msg: "internal error: no thread can run and none waits"}
		return
	}
	for r := range b.n {
		if b.state[r] == stBarrier && b.threads[r].pcs == a.pcs {
			continue
		}
		e := &Error{Kind: KindDivergentBarrier, Block: b.coord, Thread: a.ThreadIdx, Pos: posOf(a.pcs[:]),
			Op: syncName(a.kind), Other: b.party(r)}
		if b.state[r] == stBarrier {
			// Two calls of one device function that synchronises: name the
			// calls.
			e.Pos, e.Other.Pos = distinctPos(a.pcs, b.threads[r].pcs)
		}
		b.err = e
		return
	}
}

// party describes thread r for an error: where it waits, or that it
// returned and where it last synchronised.
func (b *block) party(r int32) *Party {
	p := &Party{Block: b.coord, Thread: b.threadCoord(r)}
	th := b.threads[r]
	switch b.state[r] {
	case stBarrier, stWarp, stNamed, stMBar:
		p.Pos, p.Op = posOf(th.pcs[:]), th.waitName()
	default:
		p.Op = "returned"
		if th != nil && th.synced[0] != 0 {
			p.Pos = posOf(th.synced[:])
		}
	}
	return p
}

// whereIs says in words where thread r is, for warp errors.
func (b *block) whereIs(r int32) string {
	p := b.party(r)
	if p.Op == "returned" {
		return "returned from the kernel"
	}
	return fmt.Sprintf("waits at %s at %s", p.Op, p.Pos.short())
}

// threadCoord returns the ThreadIdx of rank r.
func (b *block) threadCoord(r int32) kernel.Dim3 {
	q := r / b.bx
	return kernel.Dim3{X: r - q*b.bx, Y: q % b.by, Z: q / b.by}
}

// lanes returns the mask of lanes that exist in the warp starting at rank
// base: all 32, except in a partial last warp.
func (b *block) lanes(base int32) uint32 {
	if b.n-base >= 32 {
		return ^uint32(0)
	}
	return 1<<uint(b.n-base) - 1
}

// abort unwinds every thread still suspended in kernel code after the
// block failed, so that its coroutine can be reused.
func (b *block) abort() {
	if b.mode != modeBarrier {
		return
	}
	for r := range b.n {
		th := b.threads[r]
		if th == nil || !th.started || b.state[r] == stExited || b.state[r] == stRunning {
			continue
		}
		th.abort = true
		b.state[r] = stRunning
		for th.co.resume() != evDone {
			// The kernel recovered the abort and waits again: keep
			// unwinding.
		}
		b.state[r] = stExited
	}
}
