package sim

import (
	"fmt"
	"math"
	"unsafe"

	"github.com/gocu-dev/gocu/kernel"
)

// Warpgroup MMAs (kernel.WGMMABF16). Each warp of the warpgroup runs its
// 16 rows as a warp collective (the rows of one warp depend on nothing the
// other three hold); lane 0 of each warp gathers the operands through the
// descriptors, which records the shared memory the operation reads.
//
// The operation is asynchronous on the GPU, so the simulator keeps its
// result back: the accumulator is filled with NaN at issue and receives
// the result at the WGWait that completes its group. Until then the 16-byte
// chunks it read are marked (wgRead), and a copy or a checked store into
// them is reported. Chunks written by a CpAsync, or by a store in checked
// mode, are marked unfenced until the writing thread calls
// FenceProxyAsync; a WGMMA that reads an unfenced chunk is reported, since
// the tensor cores read shared memory through the async proxy.

var _ kernel.WarpgroupExecutor = (*thread)(nil)

// wgResult is a queued warpgroup MMA result of one thread.
type wgResult struct {
	acc unsafe.Pointer
	d   []float32
}

// wgState is a thread's warpgroup MMA state.
type wgState struct {
	fenced  bool       // WGFence since the start or the last WGWait
	results []wgResult // issued, not yet delivered
	groups  []int      // end index in results of each committed group
	reads   []uint32   // lane 0: chunks read by issued MMAs (arena offset / 16)
	rgroups []int      // end index in reads of each committed group
	written []uint32   // chunks this thread wrote through the generic proxy since its last FenceProxyAsync
}

func (th *thread) wgCallers(op string) site {
	var pcs site
	if useFP {
		fpCallers(&pcs)
	} else {
		slowCallers(&pcs)
	}
	trim(&pcs)
	return pcs
}

// SharedAddr implements kernel.WarpgroupExecutor.
func (th *thread) SharedAddr(_ *kernel.Thread, op string, p unsafe.Pointer) uint32 {
	off, ok := th.b.sharedOff(p, 1)
	if !ok {
		pcs := th.wgCallers(op)
		th.fail(&Error{Kind: KindUsage, Op: op, Memory: th.memoryName(p), Pos: posOf(pcs[:]),
			Msg: fmt.Sprintf("%s describes shared memory only, but %#x is not in the block's shared memory", op, uintptr(p))})
	}
	return uint32(off)
}

// ReadAsync implements kernel.WarpgroupExecutor.
func (th *thread) ReadAsync(_ *kernel.Thread, op string, addr uint32) unsafe.Pointer {
	b := th.b
	off := uintptr(addr)
	if off%16 != 0 || off+16 > b.next {
		pcs := th.wgCallers(op)
		th.fail(&Error{Kind: KindUsage, Op: op, Pos: posOf(pcs[:]),
			Msg: fmt.Sprintf("%s reads 16 bytes at shared address %#x, outside the block's %d bytes of shared memory (check the descriptor's start and byte offsets)", op, addr, b.next)})
	}
	if len(b.pend) > 0 {
		pcs := th.wgCallers(op)
		th.checkPendingAt(nil, &pcs, op, off, 16)
	}
	c := off / 16
	if c < uintptr(len(b.unfenced)) && b.unfenced[c] != 0 {
		pcs := th.wgCallers(op)
		w := b.unfenced[c] - 1
		mem, start, _ := b.sharedMemory(off)
		th.fail(&Error{Kind: KindAsyncCopy, Op: op, Memory: mem, Index: int(off - start), Pos: posOf(pcs[:]),
			Other: &Party{Block: b.coord, Thread: b.threadCoord(w), Op: "write"},
			Msg: fmt.Sprintf("%s reads %s bytes %d-%d through the async proxy, but thread %v wrote them through the generic proxy (a store or a CpAsync) and did not call FenceProxyAsync after it (fence, then SyncThreads, then WGMMA)",
				op, mem, off-start, off-start+15, b.threadCoord(w))})
	}
	if b.l.checked {
		pcs := th.wgCallers(op)
		s := th.siteOfPCs(pcs)
		for i := uintptr(0); i < 16; i += 2 {
			th.sharedAccess(off+i, 2, kernel.Read, s)
		}
	}
	if need := int((b.next + 15) / 16); len(b.wgRead) < need {
		b.wgRead = append(b.wgRead, make([]int32, need-len(b.wgRead))...)
	}
	b.wgRead[c]++
	th.wg.reads = append(th.wg.reads, uint32(c))
	return unsafe.Pointer(&b.w.arena.buf[off])
}

// IssueMMA implements kernel.WarpgroupExecutor.
func (th *thread) IssueMMA(_ *kernel.Thread, op string, acc unsafe.Pointer, d []float32) {
	if !th.wg.fenced {
		pcs := th.wgCallers(op)
		th.fail(&Error{Kind: KindUsage, Op: op, Pos: posOf(pcs[:]),
			Msg: op + " without a WGFence before it (since the kernel started or the last WGWait): the tensor cores could read accumulator registers the warp is still writing"})
	}
	th.wg.results = append(th.wg.results, wgResult{acc: acc, d: d})
	a := unsafe.Slice((*float32)(acc), len(d))
	for i := range a {
		a[i] = float32(math.NaN())
	}
}

// PendingMMA implements kernel.WarpgroupExecutor.
func (th *thread) PendingMMA(_ *kernel.Thread, acc unsafe.Pointer) []float32 {
	for i := len(th.wg.results) - 1; i >= 0; i-- {
		if th.wg.results[i].acc == acc {
			return th.wg.results[i].d
		}
	}
	return nil
}

// FenceMMA implements kernel.WarpgroupExecutor.
func (th *thread) FenceMMA(*kernel.Thread) { th.wg.fenced = true }

// CommitMMA implements kernel.WarpgroupExecutor.
func (th *thread) CommitMMA(*kernel.Thread) {
	th.wg.groups = append(th.wg.groups, len(th.wg.results))
	th.wg.rgroups = append(th.wg.rgroups, len(th.wg.reads))
}

// WaitMMA implements kernel.WarpgroupExecutor.
func (th *thread) WaitMMA(_ *kernel.Thread, n int) {
	th.wg.fenced = false
	if n < 0 {
		n = 0
	}
	k := len(th.wg.groups) - n
	if k <= 0 {
		return
	}
	th.deliverMMA(th.wg.groups[k-1], th.wg.rgroups[k-1])
	th.wg.groups = append(th.wg.groups[:0], th.wg.groups[k:]...)
	th.wg.rgroups = append(th.wg.rgroups[:0], th.wg.rgroups[k:]...)
}

// deliverMMA writes th's first n queued results into their accumulators
// and releases its first r recorded reads.
func (th *thread) deliverMMA(n, r int) {
	for _, res := range th.wg.results[:n] {
		copy(unsafe.Slice((*float32)(res.acc), len(res.d)), res.d)
	}
	rest := copy(th.wg.results, th.wg.results[n:])
	clear(th.wg.results[rest:])
	th.wg.results = th.wg.results[:rest]
	for i := range th.wg.groups {
		th.wg.groups[i] -= n
	}
	b := th.b
	for _, c := range th.wg.reads[:r] {
		b.wgRead[c]--
	}
	rest = copy(th.wg.reads, th.wg.reads[r:])
	th.wg.reads = th.wg.reads[:rest]
	for i := range th.wg.rgroups {
		th.wg.rgroups[i] -= r
	}
}

// FenceProxyAsync implements kernel.WarpgroupExecutor.
func (th *thread) FenceProxyAsync(*kernel.Thread) {
	b := th.b
	for _, c := range th.wg.written {
		if b.unfenced[c] == th.rank+1 {
			b.unfenced[c] = 0
		}
	}
	th.wg.written = th.wg.written[:0]
}

// markUnfenced records that th wrote the 16-byte chunk at arena offset
// off through the generic proxy.
func (th *thread) markUnfenced(off uintptr) {
	b := th.b
	if need := int((b.next + 15) / 16); len(b.unfenced) < need {
		b.unfenced = append(b.unfenced, make([]int32, need-len(b.unfenced))...)
	}
	c := off / 16
	if b.unfenced[c] != th.rank+1 {
		b.unfenced[c] = th.rank + 1
		th.wg.written = append(th.wg.written, uint32(c))
	}
}

// checkMMARead reports a write of the n bytes at arena offset off while a
// warpgroup MMA still reads them.
func (th *thread) checkMMARead(op string, pcs *site, s *kernel.Site, off, n uintptr) {
	b := th.b
	for c := off / 16; c <= (off+n-1)/16 && c < uintptr(len(b.wgRead)); c++ {
		if b.wgRead[c] == 0 {
			continue
		}
		mem, start, _ := b.sharedMemory(c * 16)
		e := &Error{Kind: KindAsyncCopy, Op: op, Memory: mem, Index: int(c*16 - start),
			Msg: fmt.Sprintf("%s writes %s bytes %d-%d, which a WGMMA is still reading: wait for its group with WGWait (and SyncThreads, if another warpgroup issued it) first",
				op, mem, c*16-start, c*16-start+15)}
		if s != nil {
			e.Pos = siteOf(s)
		} else if pcs != nil {
			e.Pos = posOf(pcs[:])
		}
		th.fail(e)
	}
}

// resetMMA forgets th's warpgroup MMA state (a new block, or a failed
// one); finishMMA first delivers its results and releases its reads, when
// it returns from the kernel (the chunks it left unfenced stay so).
func (th *thread) resetMMA() {
	th.wg.fenced = false
	clear(th.wg.results)
	th.wg.results, th.wg.groups = th.wg.results[:0], th.wg.groups[:0]
	th.wg.reads, th.wg.rgroups, th.wg.written = th.wg.reads[:0], th.wg.rgroups[:0], th.wg.written[:0]
}

func (th *thread) finishMMA() {
	if len(th.wg.results) > 0 || len(th.wg.reads) > 0 {
		th.deliverMMA(len(th.wg.results), len(th.wg.reads))
	}
	th.resetMMA()
}
