package gpu

import (
	"sync/atomic"
	"time"
)

// A Go collection is what frees the device memory of arrays that were
// dropped without Close (their storages' cleanups free it), but the
// collector paces itself by the Go heap only: a program with a large heap
// (a data set in host memory, a benchmark's references) and little host
// allocation per step runs a collection rarely, the dropped arrays' device
// memory piles up, and the caching allocator keeps asking the driver for
// more (an eager training step at batch 1024 ran 2.5x slower so on an
// H100). The pacer gives device memory a say, as GOGC=100 does for the
// heap: when the backend has allocated as many bytes since the last
// collection it started as survived that collection (and at least
// gcMinGrowth), it starts one in the background. It costs a program that
// closes its arrays one collection per gcMinGrowth of allocation at most.
type pacer struct {
	live    atomic.Int64 // bytes of Alloc's buffers not yet freed
	total   atomic.Int64 // bytes Alloc has ever handed out
	goal    atomic.Int64 // total at which the next collection starts; 0 before the first
	running atomic.Bool
	done    atomic.Pointer[chan struct{}] // closed when the running collection ends
	cycles  atomic.Int64                  // collections the pacer started
	minimum atomic.Int64                  // the least growth; 0 for gcMinGrowth
}

// gcMinGrowth is the least allocation between two collections: small
// enough to keep the cache from growing by much, large enough that a
// collection (a few hundred microseconds of CPU for a heap of plain
// buffers) is rare next to the work that allocated it.
const gcMinGrowth = 256 << 20

func (p *pacer) least() int64 {
	if n := p.minimum.Load(); n > 0 {
		return n
	}
	return gcMinGrowth
}

// alloc counts n bytes allocated and starts a collection when the
// allocations since the last one have reached the goal.
func (p *pacer) alloc(n int64) {
	p.live.Add(n)
	total, goal := p.total.Add(n), p.goal.Load()
	if goal == 0 {
		goal = p.least()
	}
	if total < goal {
		return
	}
	if p.running.CompareAndSwap(false, true) {
		ch := make(chan struct{})
		p.done.Store(&ch)
		p.cycles.Add(1)
		go p.collect(ch)
		return
	}
	// A collection is under way and the allocations have outrun it by
	// another gcMinGrowth: wait for it (briefly: a cleanup it waits for
	// may need a lock the caller holds), as the collector makes a
	// goroutine that allocates too fast assist it.
	if total >= goal+p.least() {
		if ch := p.done.Load(); ch != nil {
			select {
			case <-*ch:
			case <-time.After(50 * time.Millisecond):
			}
		}
	}
}

// free counts n bytes freed.
func (p *pacer) free(n int64) { p.live.Add(-n) }

// collect runs a collection, waits (briefly) for the cleanups it queued to
// run, and sets the next goal: as much allocation again as the memory that
// survived (what is live now, less what was allocated meanwhile), and at
// least gcMinGrowth.
func (p *pacer) collect(finished chan struct{}) {
	defer func() {
		p.running.Store(false)
		close(finished)
	}()
	start := p.total.Load()
	collectAndWait(100 * time.Millisecond)
	end := p.total.Load()
	kept := max(p.live.Load()-(end-start), 0)
	p.goal.Store(end + max(p.least(), kept))
}

// GCCycles is the number of collections the backend started because
// device memory grew (the pacer), for tests.
func (b *Backend) GCCycles() int64 { return b.pace.cycles.Load() }

// SetGCMinGrowth sets the least growth of live device memory that starts a
// collection (gcMinGrowth by default), for tests.
func (b *Backend) SetGCMinGrowth(n int64) { b.pace.minimum.Store(n) }
