package gpu

import (
	"sync/atomic"
	"time"
)

// A Go collection is what frees the device memory of arrays dropped
// without Close: their storages' cleanups free it. The collector paces
// itself by the Go heap only, so a program with a large heap and little
// host allocation per step collects rarely, and dropped device memory
// piles up (an eager training step at batch 1024 ran 2.5x slower so on an
// H100).
//
// The pacer gives device memory a say, as GOGC=100 does for the heap. It
// watches live device bytes: allocated and not yet freed. Only they can
// hold garbage. When live bytes reach twice what survived the last
// collection (and grew by at least gcMinGrowth), it starts a collection in
// the background.
//
// A program that frees what it allocates (Close, scopes, the lazy
// intermediates freed in stream order) keeps live bytes flat and never
// pays for a collection. Counting every allocation instead once started
// one per 256 MiB allocated, and the collector's pauses stalled the
// stream: a fused chain on an H200 ran at a third of its speed.
type pacer struct {
	live    atomic.Int64 // bytes of Alloc's buffers not yet freed
	goal    atomic.Int64 // live bytes at which the next collection starts; 0 before the first
	running atomic.Bool
	done    atomic.Pointer[chan struct{}] // closed when the running collection ends
	cycles  atomic.Int64                  // collections the pacer started
	minimum atomic.Int64                  // the least growth; 0 for gcMinGrowth
}

// gcMinGrowth is the least growth of live bytes between two collections:
// small enough to keep dropped memory from piling up by much, large
// enough that a collection is rare next to the work that allocated it.
const gcMinGrowth = 256 << 20

func (p *pacer) least() int64 {
	if n := p.minimum.Load(); n > 0 {
		return n
	}
	return gcMinGrowth
}

// alloc counts n bytes allocated and starts a collection when live bytes
// have reached the goal.
func (p *pacer) alloc(n int64) {
	live, goal := p.live.Add(n), p.goal.Load()
	if goal == 0 {
		goal = p.least()
	}
	if live < goal {
		return
	}
	if p.running.CompareAndSwap(false, true) {
		ch := make(chan struct{})
		p.done.Store(&ch)
		p.cycles.Add(1)
		go p.collect(ch)
		return
	}
	// A collection is under way and live bytes outgrew its goal by
	// another gcMinGrowth: wait for it, briefly (a cleanup it waits for
	// may need a lock the caller holds), as the collector makes a
	// goroutine that allocates too fast assist it.
	if live >= goal+p.least() {
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

// collect runs a collection, waits briefly for the cleanups it queued,
// and sets the next goal: twice the live bytes that survived, and at least
// gcMinGrowth more.
func (p *pacer) collect(finished chan struct{}) {
	defer func() {
		p.running.Store(false)
		close(finished)
	}()
	collectAndWait(100 * time.Millisecond)
	kept := max(p.live.Load(), 0)
	p.goal.Store(kept + max(p.least(), kept))
}

// GCCycles is the number of collections the backend started because
// live device memory grew (the pacer), for tests.
func (b *Backend) GCCycles() int64 { return b.pace.cycles.Load() }

// SetGCMinGrowth sets the least growth of live device memory that starts a
// collection (gcMinGrowth by default), for tests. It also forgets the
// current goal, so that the next one is computed with it.
func (b *Backend) SetGCMinGrowth(n int64) {
	b.pace.minimum.Store(n)
	b.pace.goal.Store(0)
}
