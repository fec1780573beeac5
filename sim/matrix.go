package sim

import (
	"fmt"
	"sync"
	"unsafe"

	"github.com/gocu-dev/gocu/kernel"
)

// The warp-wide matrix operations (kernel.MMABF16, kernel.LdMatrixX4, ...)
// and the asynchronous copies (kernel.CpAsync).
//
// A matrix operation is a warp operation like a shuffle: each lane stops at
// it, and once every lane of the warp has arrived, the operation runs once
// for the whole warp on all lanes' operands (kernel.Collective's do), with
// the fragment ownership of the PTX ISA, which package kernel implements.
// A lane elsewhere (returned, at a barrier, at another warp operation) is
// reported like a partial shuffle; so is a partial last warp.
//
// An asynchronous copy is queued in its thread's current group and
// performed when a CpAsyncWait completes the group (or when the thread
// returns): that is the first moment the GPU guarantees the data, and the
// moment the simulator records the write for race detection, so that
// another thread that reads after the wait and a SyncThreads is ordered
// after it, and one that reads without the barrier races with it. Until
// then the 16 destination bytes are filled with the poison pattern and
// marked pending: an LdMatrix of them is always reported, and so is any
// access in checked mode.

var _ kernel.MatrixExecutor = (*thread)(nil)

// asyncCopy is a queued copy of 16 bytes.
type asyncCopy struct {
	dst, src unsafe.Pointer // src nil: zero fill
	elem     uintptr        // element size, for race detection
	pcs      site
}

// Collective implements kernel.MatrixExecutor.
func (th *thread) Collective(_ *kernel.Thread, op string, arg any, do func(args *[kernel.WarpSize]any)) {
	if useFP {
		fpCallers(&th.pcs)
	} else {
		slowCallers(&th.pcs)
	}
	trim(&th.pcs)
	th.wait, th.wop, th.mask, th.bits, th.arg = stWarp, kernel.WarpCollective, kernel.FullMask, 0, 0
	th.cop, th.carg, th.cdo = op, arg, do
	if !th.co.yield(evSync) || th.abort {
		panic(abortSignal{})
	}
	th.carg, th.cdo = nil, nil
}

// collective completes a collective operation whose lanes have all
// arrived; warpArrive calls it.
func (b *block) collective(lead *thread, base int32) {
	if n := b.n - base; n < 32 {
		b.err = &Error{Kind: KindWarp, Block: b.coord, Thread: lead.ThreadIdx, Pos: posOf(lead.pcs[:]), Op: lead.cop,
			Msg: fmt.Sprintf("%s needs a full warp of 32 lanes, but the block's last warp has %d (make the block size a multiple of 32)", lead.cop, n)}
		return
	}
	var args [kernel.WarpSize]any
	for l := range int32(32) {
		args[l] = b.threads[base+l].carg
	}
	lead.cdo(&args)
	for l := range int32(32) {
		o := b.threads[base+l]
		b.state[o.rank] = stReady
		b.queue = append(b.queue, o.rank)
	}
	b.nWarp -= 32
}

// opName names the warp operation th waits at.
func (th *thread) opName() string {
	if th.wop == kernel.WarpCollective {
		return th.cop
	}
	return warpName(th.wop)
}

// sharedOff returns the arena offset of the n bytes at p, or false when
// they are not the running block's shared memory.
func (b *block) sharedOff(p unsafe.Pointer, n uintptr) (uintptr, bool) {
	if b.w.arena.buf == nil {
		return 0, false
	}
	off := uintptr(p) - b.w.arena.base
	return off, off < b.next && off+n <= b.next
}

// SharedRead implements kernel.MatrixExecutor.
func (th *thread) SharedRead(_ *kernel.Thread, op string, p unsafe.Pointer, n uintptr) {
	var pcs site
	if useFP {
		fpCallers(&pcs)
	} else {
		slowCallers(&pcs)
	}
	trim(&pcs)
	b := th.b
	off, ok := b.sharedOff(p, n)
	if !ok {
		th.fail(&Error{Kind: KindUsage, Op: op, Memory: th.memoryName(p), Pos: posOf(pcs[:]),
			Msg: fmt.Sprintf("%s reads shared memory only, but lane %d's row address %#x is not in the block's shared memory", op, th.rank&31, uintptr(p))})
	}
	if len(b.pend) > 0 {
		th.checkPendingAt(nil, &pcs, op, off, n)
	}
	if b.l.checked {
		s := th.siteOfPCs(pcs)
		for i := uintptr(0); i < n; i += 2 {
			th.sharedAccess(off+i, 2, kernel.Read, s)
		}
	}
}

// checkPendingAt reports an access to shared bytes an asynchronous copy is
// still writing, made at site s or, when s is nil, at the call site pcs.
func (th *thread) checkPendingAt(s *kernel.Site, pcs *site, op string, off, n uintptr) {
	b := th.b
	if len(b.pend) == 0 {
		return
	}
	for c := off / 16; c <= (off+n-1)/16 && c < uintptr(len(b.pend)); c++ {
		if b.pend[c] == 0 {
			continue
		}
		mem, start, _ := b.sharedMemory(c * 16)
		e := &Error{Kind: KindAsyncCopy, Op: op, Memory: mem, Index: int(c*16 - start),
			Msg: fmt.Sprintf("%s of %s bytes %d-%d, which a CpAsync is still copying into: wait for its group with CpAsyncWait (and SyncThreads, if another thread issued it) first",
				op, mem, c*16-start, c*16-start+15)}
		if s != nil {
			e.Pos = siteOf(s)
		} else if pcs != nil {
			e.Pos = posOf(pcs[:])
		}
		if r, pcs, ok := b.pendingIssuer(c * 16); ok {
			e.Other = &Party{Block: b.coord, Thread: b.threadCoord(r), Pos: posOf(pcs[:]), Op: "CpAsync"}
		}
		th.fail(e)
	}
}

// pendingIssuer finds the thread that queued the copy into the 16 bytes at
// arena offset off.
func (b *block) pendingIssuer(off uintptr) (int32, site, bool) {
	ths := b.threads
	if b.mode != modeBarrier {
		ths = []*thread{&b.w.runTh}
	}
	for _, o := range ths {
		if o == nil {
			continue
		}
		for _, c := range o.async {
			if uintptr(c.dst)-b.w.arena.base == off {
				return o.rank, c.pcs, true
			}
		}
	}
	return 0, site{}, false
}

func (th *thread) siteOfPCs(pcs site) *kernel.Site { return th.b.l.siteAt(posOf(pcs[:])) }

// asyncSites interns the sites of matrix operations and copies, which gocu
// gen does not instrument, for the race detector.
type asyncSites struct {
	mu sync.Mutex
	m  map[Pos]*kernel.Site
}

func (l *launch) siteAt(p Pos) *kernel.Site {
	l.async.mu.Lock()
	defer l.async.mu.Unlock()
	if s := l.async.m[p]; s != nil {
		return s
	}
	if l.async.m == nil {
		l.async.m = make(map[Pos]*kernel.Site)
	}
	s := &kernel.Site{File: p.File, Line: int32(p.Line), Col: int32(p.Col)}
	l.async.m[p] = s
	return s
}

// memoryName names the memory at p for an error.
func (th *thread) memoryName(p unsafe.Pointer) string {
	if name, _, _ := th.b.memoryOf(uintptr(p)); name != "" {
		return name
	}
	return "global or local memory"
}

// CopyAsync implements kernel.MatrixExecutor.
func (th *thread) CopyAsync(_ *kernel.Thread, op string, dst, src unsafe.Pointer, n, elem uintptr) {
	c := asyncCopy{dst: dst, src: src, elem: max(elem, 1)}
	if useFP {
		fpCallers(&c.pcs)
	} else {
		slowCallers(&c.pcs)
	}
	trim(&c.pcs)
	b := th.b
	off, ok := b.sharedOff(dst, n)
	if !ok {
		th.fail(&Error{Kind: KindUsage, Op: op, Memory: th.memoryName(dst), Pos: posOf(c.pcs[:]),
			Msg: fmt.Sprintf("%s copies into shared memory only, but its destination %#x is not in the block's shared memory", op, uintptr(dst))})
	}
	if src != nil {
		if _, shared := b.sharedOff(src, n); shared {
			th.fail(&Error{Kind: KindUsage, Op: op, Pos: posOf(c.pcs[:]), Msg: fmt.Sprintf("%s copies from global memory, but its source is shared memory", op)})
		}
	}
	if len(b.pend) > 0 {
		th.checkPendingAt(nil, &c.pcs, op, off, n)
	}
	if len(b.wgRead) > 0 {
		th.checkMMARead(op, &c.pcs, nil, off, n)
	}
	if need := int((b.next + 15) / 16); len(b.pend) < need {
		b.pend = append(b.pend, make([]int32, need-len(b.pend))...)
	}
	for i := range n / 16 {
		b.pend[off/16+i]++
	}
	fill(unsafe.Slice((*byte)(dst), n))
	th.async = append(th.async, c)
}

// CommitAsync implements kernel.MatrixExecutor.
func (th *thread) CommitAsync(*kernel.Thread) {
	th.groups = append(th.groups, len(th.async))
}

// WaitAsync implements kernel.MatrixExecutor.
func (th *thread) WaitAsync(_ *kernel.Thread, n int) {
	if n < 0 {
		n = 0
	}
	k := len(th.groups) - n
	if k <= 0 {
		return
	}
	th.completeAsync(th.groups[k-1]) // shifts every group's end down
	th.groups = append(th.groups[:0], th.groups[k:]...)
}

// completeAsync performs th's first n queued copies.
func (th *thread) completeAsync(n int) {
	b := th.b
	for _, c := range th.async[:n] {
		dst := unsafe.Slice((*byte)(c.dst), 16)
		if c.src == nil {
			clear(dst)
		} else {
			copy(dst, unsafe.Slice((*byte)(c.src), 16))
		}
		off := uintptr(c.dst) - b.w.arena.base
		b.pend[off/16]--
		th.markUnfenced(off)
		if b.l.checked {
			s := th.siteOfPCs(c.pcs)
			if c.src != nil {
				th.Access(&th.Thread, c.src, 16, kernel.Read, s)
			}
			for i := uintptr(0); i < 16; i += c.elem {
				th.sharedAccess(off+i, c.elem, kernel.Write, s)
			}
		}
	}
	rest := copy(th.async, th.async[n:])
	th.async = th.async[:rest]
	for i := range th.groups {
		th.groups[i] -= n
	}
}

// pendingAsync reports whether th has copies or warpgroup MMA state to
// finish when it returns.
func (th *thread) pendingAsync() bool {
	return len(th.async) > 0 || len(th.wg.results) > 0 || len(th.wg.reads) > 0 || th.wg.fenced || len(th.wg.written) > 0
}

// finishAsync completes every copy th queued, when it returns from the
// kernel (the GPU completes them too), and its warpgroup MMAs.
func (th *thread) finishAsync() {
	if len(th.async) > 0 {
		th.completeAsync(len(th.async))
	}
	th.groups = th.groups[:0]
	th.finishMMA()
}

// resetAsync forgets th's copies and warpgroup MMAs, when it starts a new
// block or its block failed.
func (th *thread) resetAsync() {
	th.async, th.groups = th.async[:0], th.groups[:0]
	th.resetMMA()
}
