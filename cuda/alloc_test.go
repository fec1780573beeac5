package cuda

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
)

// fakeBackend simulates the driver for the allocator: a device of a fixed
// capacity and streams whose queued work finishes only when the test says.
type fakeBackend struct {
	mu       sync.Mutex
	capacity int64
	used     int64
	next     uintptr
	live     map[uintptr]int64
	queued   map[uintptr]int // work items queued per stream
	finished map[uintptr]int // work items finished per stream
	events   map[uintptr]fakeEvent
	nextEv   uintptr
	mallocs  int
	frees    int
	records  int
	syncs    int
	released int
}

type fakeEvent struct {
	stream uintptr
	at     int // the stream's queued count when recorded
}

func newFake(capacity int64) *fakeBackend {
	return &fakeBackend{capacity: capacity, next: 1 << 32, live: map[uintptr]int64{},
		queued: map[uintptr]int{}, finished: map[uintptr]int{}, events: map[uintptr]fakeEvent{}}
}

func (f *fakeBackend) malloc(size int64) (uintptr, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.used+size > f.capacity {
		return 0, &Error{Func: "cuMemAlloc_v2", Code: 2, Name: "CUDA_ERROR_OUT_OF_MEMORY", Msg: "out of memory"}
	}
	p := f.next
	f.next += uintptr(roundUp(size+4096, 512)) // a gap, so neighbouring segments are not contiguous
	f.used += size
	f.live[p] = size
	f.mallocs++
	return p, nil
}

func (f *fakeBackend) free(p uintptr) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	size, ok := f.live[p]
	if !ok {
		return fmt.Errorf("fake: free of unknown pointer %#x", p)
	}
	delete(f.live, p)
	f.used -= size
	f.frees++
	return nil
}

func (f *fakeBackend) record(s uintptr) (uintptr, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.nextEv++
	f.events[f.nextEv] = fakeEvent{stream: s, at: f.queued[s]}
	f.records++
	return f.nextEv, nil
}

func (f *fakeBackend) done(ev uintptr) (bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	e, ok := f.events[ev]
	if !ok {
		return false, errors.New("fake: query of unknown event")
	}
	return f.finished[e.stream] >= e.at, nil
}

func (f *fakeBackend) release(ev uintptr) {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.events, ev)
	f.released++
}

func (f *fakeBackend) sync() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	for s, n := range f.queued {
		f.finished[s] = n
	}
	f.syncs++
	return nil
}

// work queues one item on stream s; finish completes everything queued on s.
func (f *fakeBackend) work(s uintptr) {
	f.mu.Lock()
	f.queued[s]++
	f.mu.Unlock()
}

func (f *fakeBackend) finish(s uintptr) {
	f.mu.Lock()
	f.finished[s] = f.queued[s]
	f.mu.Unlock()
}

const (
	s1 uintptr = 0x100
	s2 uintptr = 0x200
	s3 uintptr = 0x300
)

func mustAlloc(t *testing.T, a *Allocator, s uintptr, n int64) *block {
	t.Helper()
	b, err := a.alloc(s, n)
	if err != nil {
		t.Fatalf("alloc(%#x, %d): %v", s, n, err)
	}
	if b.ptr%smallQuantum != 0 {
		t.Fatalf("alloc(%d) = %#x, not %d-byte aligned", n, b.ptr, smallQuantum)
	}
	if b.size < n {
		t.Fatalf("alloc(%d) gave a block of %d bytes", n, b.size)
	}
	return b
}

func mustFree(t *testing.T, a *Allocator, b *block, s uintptr) {
	t.Helper()
	if err := a.free(b, s, false); err != nil {
		t.Fatalf("free: %v", err)
	}
}

// checkInvariants verifies the allocator's structure: segments are tiled by
// their blocks, the indexes hold exactly the free blocks, neighbours that
// could merge have merged, the parked block is the one, and the stats add
// up.
func checkInvariants(t *testing.T, a *Allocator) {
	t.Helper()
	a.mu.Lock()
	defer a.mu.Unlock()
	indexed := map[*block]bool{}
	for _, idx := range []*freeIndex{&a.small, &a.large} {
		for i, b := range idx.blocks {
			if i > 0 && !less(idx.blocks[i-1], b) {
				t.Fatalf("free index out of order at %d", i)
			}
			if !b.free || b.dead || !b.idx {
				t.Fatalf("index holds a block that is not free: %+v", b)
			}
			indexed[b] = true
		}
	}
	var reserved, inUse int64
	for seg := range a.segments {
		reserved += seg.size
		end := seg.ptr
		var prev *block
		for b := seg.head; b != nil; b = b.next {
			if b.ptr != end || b.prev != prev || b.seg != seg || b.dead {
				t.Fatalf("segment %#x is not tiled by its blocks at %#x", seg.ptr, b.ptr)
			}
			if b.free != indexed[b] {
				t.Fatalf("block %#x free=%v but indexed=%v", b.ptr, b.free, indexed[b])
			}
			if b.parked != (b == a.parked) || b.parked && (b.free || !seg.small) {
				t.Fatalf("block %#x parked=%v, free=%v; the allocator's parked block is %p", b.ptr, b.parked, b.free, a.parked)
			}
			if !b.free && !b.parked {
				inUse += b.size
			}
			if prev != nil && prev.free && b.free && compatible(prev, b) {
				t.Fatalf("adjacent compatible free blocks %#x and %#x were not merged", prev.ptr, b.ptr)
			}
			end += uintptr(b.size)
			prev = b
			delete(indexed, b)
		}
		if end != seg.ptr+uintptr(seg.size) {
			t.Fatalf("segment %#x: blocks cover %d of %d bytes", seg.ptr, end-seg.ptr, seg.size)
		}
	}
	if len(indexed) != 0 {
		t.Fatalf("%d indexed blocks belong to no segment", len(indexed))
	}
	if reserved != a.st.Reserved || inUse != a.st.InUse {
		t.Fatalf("stats say reserved %d, in use %d; segments hold %d, %d", a.st.Reserved, a.st.InUse, reserved, inUse)
	}
}

func TestSizeClass(t *testing.T) {
	for _, c := range []struct {
		req, size int64
		small     bool
	}{
		{1, 512, true}, {512, 512, true}, {513, 1024, true}, {1000, 1024, true},
		{1 << 20, 1 << 20, true}, {1<<20 + 1, 2 << 20, false}, {3 << 20, 4 << 20, false},
		{4 << 20, 4 << 20, false}, {1 << 30, 1 << 30, false},
	} {
		size, small := sizeClass(c.req)
		if size != c.size || small != c.small {
			t.Errorf("sizeClass(%d) = %d, %v; want %d, %v", c.req, size, small, c.size, c.small)
		}
	}
}

func TestAllocReuseOnSameStream(t *testing.T) {
	f := newFake(1 << 30)
	a := newAllocator(f, true, 0)
	b := mustAlloc(t, a, s1, 1000)
	p := b.ptr
	f.work(s1) // the kernel using b is still queued
	mustFree(t, a, b, s1)
	b2 := mustAlloc(t, a, s1, 900) // same size class, same stream: reuse at once
	if b2.ptr != p {
		t.Fatalf("same-stream reuse: got %#x, want %#x", b2.ptr, p)
	}
	st := a.Stats()
	if st.Hits != 1 || st.Misses != 1 || f.mallocs != 1 || f.records != 0 {
		t.Fatalf("stats %+v, mallocs %d, events %d", st, f.mallocs, f.records)
	}
	checkInvariants(t, a)
}

func TestSmallBlocksShareSegment(t *testing.T) {
	f := newFake(1 << 30)
	a := newAllocator(f, true, 0)
	var blocks []*block
	seen := map[uintptr]bool{}
	for i := range 100 {
		b := mustAlloc(t, a, s1, int64(100+i*97))
		if seen[b.ptr] {
			t.Fatalf("pointer %#x handed out twice", b.ptr)
		}
		seen[b.ptr] = true
		blocks = append(blocks, b)
	}
	if f.mallocs != 1 {
		t.Fatalf("100 small blocks used %d driver allocations, want 1 segment", f.mallocs)
	}
	checkInvariants(t, a)
	for _, b := range blocks {
		mustFree(t, a, b, s1)
	}
	checkInvariants(t, a)
	// The freed blocks merge with each other; they stay apart from the idle
	// rest of the segment until s1 is known to be done with them.
	if len(a.small.blocks) != 2 {
		t.Fatalf("freed blocks did not merge: %d free blocks", len(a.small.blocks))
	}
	if _, err := a.Trim(); err != nil {
		t.Fatal(err)
	}
	if len(a.small.blocks) != 0 || len(f.live) != 0 {
		t.Fatalf("after Trim the segment should be whole and released: %d free blocks, %d segments", len(a.small.blocks), len(f.live))
	}
}

func TestSplitLargeBlock(t *testing.T) {
	f := newFake(1 << 30)
	a := newAllocator(f, true, 0)
	big := mustAlloc(t, a, s1, 64<<20)
	base := big.ptr
	mustFree(t, a, big, s1)
	x := mustAlloc(t, a, s1, 8<<20)
	y := mustAlloc(t, a, s1, 50<<20)
	if x.ptr != base || y.ptr != base+8<<20 {
		t.Fatalf("split: got %#x and %#x, want %#x and %#x", x.ptr, y.ptr, base, base+8<<20)
	}
	if f.mallocs != 1 {
		t.Fatalf("%d driver allocations, want 1", f.mallocs)
	}
	checkInvariants(t, a)
	// 64 - 8 - 50 = 6 MiB remain free in the segment
	z := mustAlloc(t, a, s1, 5<<20)
	if z.ptr != base+58<<20 || f.mallocs != 1 {
		t.Fatalf("the remainder was not reused: %#x, %d mallocs", z.ptr, f.mallocs)
	}
	checkInvariants(t, a)
}

func TestCrossStreamReuseWaitsForEvent(t *testing.T) {
	f := newFake(1 << 30)
	a := newAllocator(f, true, 0)
	const n = 4 << 20 // a whole large segment: no free remainder to hand out instead
	b := mustAlloc(t, a, s1, n)
	p := b.ptr
	f.work(s1) // a kernel on s1 uses the block
	mustFree(t, a, b, s1)

	// Another stream must not get the block while s1 may still use it.
	c := mustAlloc(t, a, s2, n)
	if c.ptr == p {
		t.Fatal("block freed on s1 with work pending was reused by s2")
	}
	if f.records != 1 {
		t.Fatalf("an event should have been recorded on s1; %d recorded", f.records)
	}
	d := mustAlloc(t, a, s3, n)
	if d.ptr == p {
		t.Fatal("block reused by s3 before the event on s1 completed")
	}
	if f.records != 1 {
		t.Fatalf("the pending event should be queried, not recorded again; %d recorded", f.records)
	}
	f.finish(s1)
	e := mustAlloc(t, a, s3, n)
	if e.ptr != p {
		t.Fatalf("after s1 finished, s3 got %#x, want the freed block %#x", e.ptr, p)
	}
	if f.released != 1 || f.mallocs != 3 {
		t.Fatalf("events released %d (want 1), driver allocations %d (want 3)", f.released, f.mallocs)
	}
	checkInvariants(t, a)
}

func TestSmallRemainderServesOtherStreams(t *testing.T) {
	f := newFake(1 << 30)
	a := newAllocator(f, true, 0)
	b := mustAlloc(t, a, s1, 4096)
	f.work(s1)
	mustFree(t, a, b, s1)
	c := mustAlloc(t, a, s2, 4096)
	if c.ptr == b.ptr {
		t.Fatal("pending block went to another stream")
	}
	if f.mallocs != 1 || f.records != 0 {
		t.Fatalf("the idle rest of the segment should serve s2 without a new segment or event: %d mallocs, %d events", f.mallocs, f.records)
	}
	checkInvariants(t, a)
}

func TestEventCoversWorkAfterFree(t *testing.T) {
	f := newFake(1 << 30)
	a := newAllocator(f, true, 0)
	b := mustAlloc(t, a, s1, 1<<20+1) // large class
	p := b.ptr
	mustFree(t, a, b, s1)
	f.work(s1) // queued after the free; the event recorded later still waits for it
	if c := mustAlloc(t, a, s2, 1<<20+1); c.ptr == p {
		t.Fatal("reused across streams before the event")
	}
	f.finish(s1)
	if c := mustAlloc(t, a, s2, 1<<20+1); c.ptr != p {
		t.Fatalf("got %#x, want %#x after s1 finished", c.ptr, p)
	}
	checkInvariants(t, a)
}

func TestCapturingStreamRecordsNoEvent(t *testing.T) {
	f := newFake(1 << 30)
	a := newAllocator(f, true, 0)
	a.setCapturing(s1, true)
	b := mustAlloc(t, a, s1, 4<<20)
	p := b.ptr
	mustFree(t, a, b, s1)
	f.finish(s1)
	if c := mustAlloc(t, a, s2, 4<<20); c.ptr == p {
		t.Fatal("a block freed during capture went to another stream")
	}
	if f.records != 0 {
		t.Fatal("an event was recorded on a capturing stream")
	}
	a.setCapturing(s1, false)
	if c := mustAlloc(t, a, s3, 4<<20); c.ptr != p {
		t.Fatalf("after the capture ended the block was not reused: %#x", c.ptr)
	}
	checkInvariants(t, a)
}

func TestStreamClosedMakesBlocksIdle(t *testing.T) {
	f := newFake(1 << 30)
	a := newAllocator(f, true, 0)
	b := mustAlloc(t, a, s1, 4<<20)
	p := b.ptr
	f.work(s1)
	mustFree(t, a, b, s1)
	a.streamClosed(s1) // Close synchronised s1 before destroying it
	if c := mustAlloc(t, a, s2, 4<<20); c.ptr != p {
		t.Fatalf("block of a closed stream not reused: %#x", c.ptr)
	}
	if f.records != 0 {
		t.Fatal("no event is needed for a closed stream")
	}
	checkInvariants(t, a)
}

func TestTrimReturnsEverything(t *testing.T) {
	f := newFake(1 << 30)
	a := newAllocator(f, true, 0)
	var bs []*block
	for i := range 50 {
		s := []uintptr{s1, s2, s3}[i%3]
		bs = append(bs, mustAlloc(t, a, s, int64(1+i*50000)))
		f.work(s)
	}
	keep := bs[7]
	for i, b := range bs {
		if b != keep {
			mustFree(t, a, b, []uintptr{s1, s2, s3}[i%3])
		}
	}
	released, err := a.Trim()
	if err != nil {
		t.Fatal(err)
	}
	st := a.Stats()
	if st.Segments != 1 || st.Reserved != keep.seg.size || len(f.live) != 1 || released == 0 {
		t.Fatalf("after Trim with one live block: %+v, driver holds %d allocations, released %d", st, len(f.live), released)
	}
	mustFree(t, a, keep, s2)
	if _, err := a.Trim(); err != nil {
		t.Fatal(err)
	}
	st = a.Stats()
	if st.Reserved != 0 || st.InUse != 0 || st.Requested != 0 || len(f.live) != 0 || f.used != 0 {
		t.Fatalf("after freeing all and Trim: %+v, driver holds %d bytes", st, f.used)
	}
	if st.Flushes != 2 || f.syncs != 2 {
		t.Fatalf("flushes %d, syncs %d", st.Flushes, f.syncs)
	}
	checkInvariants(t, a)
}

func TestStats(t *testing.T) {
	f := newFake(1 << 30)
	a := newAllocator(f, true, 0)
	x := mustAlloc(t, a, s1, 100)
	y := mustAlloc(t, a, s1, 3<<20)
	st := a.Stats()
	if st.InUse != 512+4<<20 || st.Requested != 100+3<<20 || st.Reserved != 2<<20+4<<20 || st.Cached != 2<<20-512 {
		t.Fatalf("stats after two allocations: %+v", st)
	}
	mustFree(t, a, x, s1)
	mustFree(t, a, y, s1)
	mustAlloc(t, a, s1, 200)
	st = a.Stats()
	if st.Allocs != 3 || st.Frees != 2 || st.Hits != 1 || st.Misses != 2 || st.PeakInUse != 512+4<<20 ||
		st.InUse != 512 || st.PeakReserved != 6<<20 || !st.Caching || st.Segments != 2 {
		t.Fatalf("stats: %+v", st)
	}
	if s := st.String(); !strings.Contains(s, "in use 512 B") {
		t.Fatalf("String() = %q", s)
	}
	a.ResetPeak()
	st = a.Stats()
	if st.PeakInUse != 512 || st.PeakReserved != st.Reserved {
		t.Fatalf("after ResetPeak: %+v", st)
	}
	z := mustAlloc(t, a, s1, 1<<20)
	mustFree(t, a, z, s1)
	if st = a.Stats(); st.PeakInUse != 512+1<<20 {
		t.Fatalf("peak after a 1 MiB allocation since the reset: %+v", st)
	}
}

func TestLimit(t *testing.T) {
	f := newFake(1 << 30)
	a := newAllocator(f, true, 10<<20)
	small := mustAlloc(t, a, s1, 4096) // a 2 MiB small segment
	mustFree(t, a, small, s1)          // cached
	// 9 MiB rounds to 10 MiB: 2 cached + 10 > 10, so the cache is flushed first.
	big := mustAlloc(t, a, s1, 9<<20)
	st := a.Stats()
	if st.Flushes != 1 || st.Reserved != 10<<20 {
		t.Fatalf("the limit should have flushed the cache: %+v", st)
	}
	_, err := a.alloc(s1, 1)
	if !errors.Is(err, ErrOutOfMemory) || !strings.Contains(err.Error(), "memory limit") {
		t.Fatalf("allocation past the limit: %v", err)
	}
	mustFree(t, a, big, s1)
	a.SetLimit(0)
	if a.Limit() != 0 {
		t.Fatal("SetLimit(0)")
	}
	mustAlloc(t, a, s1, 64<<20)
	checkInvariants(t, a)
}

func TestOutOfMemoryFlushesAndRetries(t *testing.T) {
	f := newFake(64 << 20)
	a := newAllocator(f, true, 0)
	b := mustAlloc(t, a, s1, 48<<20)
	f.work(s1)
	mustFree(t, a, b, s1) // cached, pending on s1
	// s2 cannot take the pending block and the device cannot fit another
	// 32 MiB: the allocator must wait for the device, flush and retry.
	c := mustAlloc(t, a, s2, 32<<20)
	st := a.Stats()
	if st.Flushes != 1 || f.syncs != 1 {
		t.Fatalf("expected one flush: %+v", st)
	}
	checkInvariants(t, a)
	// Past the device: an error matching ErrOutOfMemory that says the cache was tried.
	_, err := a.alloc(s1, 128<<20)
	var e *Error
	if !errors.Is(err, ErrOutOfMemory) || !errors.As(err, &e) || !strings.Contains(e.Msg, "retried") {
		t.Fatalf("allocation past the device: %v", err)
	}
	// And allocation works again afterwards.
	mustFree(t, a, c, s2)
	mustAlloc(t, a, s1, 60<<20)
	checkInvariants(t, a)
}

func TestDoubleFreeAndBadSize(t *testing.T) {
	a := newAllocator(newFake(1<<30), true, 0)
	b := mustAlloc(t, a, s1, 100)
	mustFree(t, a, b, s1)
	if err := a.free(b, s1, false); !errors.Is(err, ErrFreed) {
		t.Fatalf("double free: %v", err)
	}
	for _, n := range []int64{0, -5} {
		if _, err := a.alloc(s1, n); !errors.Is(err, ErrInvalidValue) {
			t.Fatalf("alloc(%d): %v", n, err)
		}
	}
}

func TestPlainModeFake(t *testing.T) {
	f := newFake(16 << 20)
	a := newAllocator(f, false, 0)
	x := mustAlloc(t, a, s1, 1000)
	y := mustAlloc(t, a, s1, 1000)
	if f.mallocs != 2 || x.ptr == y.ptr {
		t.Fatal("plain mode must allocate from the driver every time")
	}
	mustFree(t, a, x, s1)
	if f.frees != 1 {
		t.Fatal("plain mode must free to the driver at once")
	}
	if _, err := a.alloc(s1, 32<<20); !errors.Is(err, ErrOutOfMemory) {
		t.Fatalf("plain OOM: %v", err)
	}
	st := a.Stats()
	if st.Caching || st.InUse != 1000 || st.Reserved != 1000 || st.Segments != 1 {
		t.Fatalf("plain stats: %+v", st)
	}
	mustFree(t, a, y, s1)
	if len(f.live) != 0 {
		t.Fatal("plain allocations leaked")
	}
}

// TestAllocatorRandom runs random allocations and frees on three streams
// with random progress, checking after every step that live blocks never
// overlap and the structure is sound; at the end everything is returned.
func TestAllocatorRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	f := newFake(16 << 30)
	a := newAllocator(f, true, 0)
	streams := []uintptr{s1, s2, s3}
	type liveBlock struct {
		b *block
		s uintptr
	}
	var live []liveBlock
	for step := range 3000 {
		switch op := rng.IntN(10); {
		case op < 5 || len(live) == 0:
			s := streams[rng.IntN(3)]
			n := int64(rng.IntN(2 << 20))
			if rng.IntN(10) == 0 {
				n = int64(rng.IntN(40 << 20))
			}
			n++
			b := mustAlloc(t, a, s, n)
			for _, l := range live {
				if b.ptr < l.b.ptr+uintptr(l.b.size) && l.b.ptr < b.ptr+uintptr(b.size) {
					t.Fatalf("step %d: block %#x+%d overlaps live block %#x+%d", step, b.ptr, b.size, l.b.ptr, l.b.size)
				}
			}
			live = append(live, liveBlock{b, s})
			f.work(s)
		case op < 9:
			i := rng.IntN(len(live))
			mustFree(t, a, live[i].b, live[i].s)
			live = append(live[:i], live[i+1:]...)
		default:
			f.finish(streams[rng.IntN(3)])
		}
		if step%50 == 0 {
			checkInvariants(t, a)
		}
	}
	for _, l := range live {
		mustFree(t, a, l.b, l.s)
	}
	checkInvariants(t, a)
	if _, err := a.Trim(); err != nil {
		t.Fatal(err)
	}
	if st := a.Stats(); st.Reserved != 0 || len(f.live) != 0 || len(f.events) != 0 {
		t.Fatalf("after Trim: %+v, %d driver allocations, %d events outstanding", st, len(f.live), len(f.events))
	}
}

// TestAllocatorConcurrent hammers one allocator from 8 goroutines, each on
// its own stream (run with -race).
func TestAllocatorConcurrent(t *testing.T) {
	f := newFake(4 << 30)
	a := newAllocator(f, true, 0)
	var mu sync.Mutex
	owner := map[uintptr]int{} // live block start -> goroutine
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s := uintptr(0x1000 * (g + 1))
			rng := rand.New(rand.NewPCG(uint64(g), 7))
			var mine []*block
			for i := range 2000 {
				if len(mine) == 0 || rng.IntN(2) == 0 {
					b, err := a.alloc(s, int64(1+rng.IntN(3<<20)))
					if err != nil {
						t.Error(err)
						return
					}
					mu.Lock()
					if o, taken := owner[b.ptr]; taken {
						t.Errorf("goroutine %d got %#x, live in goroutine %d", g, b.ptr, o)
					}
					owner[b.ptr] = g
					mu.Unlock()
					mine = append(mine, b)
					f.work(s)
				} else {
					j := rng.IntN(len(mine))
					b := mine[j]
					mine = append(mine[:j], mine[j+1:]...)
					mu.Lock()
					delete(owner, b.ptr)
					mu.Unlock()
					if err := a.free(b, s, false); err != nil {
						t.Error(err)
						return
					}
				}
				if i%100 == 0 {
					f.finish(s)
				}
			}
			for _, b := range mine {
				mu.Lock()
				delete(owner, b.ptr)
				mu.Unlock()
				if err := a.free(b, s, false); err != nil {
					t.Error(err)
				}
			}
		}()
	}
	wg.Wait()
	checkInvariants(t, a)
	if _, err := a.Trim(); err != nil {
		t.Fatal(err)
	}
	if st := a.Stats(); st.Reserved != 0 || st.InUse != 0 || st.Allocs != st.Frees {
		t.Fatalf("after concurrent use and Trim: %+v", st)
	}
}

func TestParseBytes(t *testing.T) {
	for in, want := range map[string]int64{
		"1024": 1024, "512MiB": 512 << 20, "4GiB": 4 << 30, "2GB": 2e9, "1.5 GiB": 3 << 29, "64k": 64 << 10, "10B": 10,
	} {
		got, err := parseBytes(in)
		if err != nil || got != want {
			t.Errorf("parseBytes(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "lots", "-3GB", "GiB"} {
		if _, err := parseBytes(in); err == nil || !strings.Contains(err.Error(), "size in bytes") {
			t.Errorf("parseBytes(%q): %v", in, err)
		}
	}
}

// A stream that frees and reuses the same block forever (an array loop:
// allocate, compute, free) keeps a short list of uncovered blocks: the
// entries of one block are compacted to one.
// Two sizes in turn, so that the parked block is merged and indexed at
// every allocation.
func TestUncoveredListStaysShort(t *testing.T) {
	a := newAllocator(newFake(1<<30), true, 0)
	for range 100_000 {
		b := mustAlloc(t, a, s1, 64)
		c := mustAlloc(t, a, s1, 1000)
		mustFree(t, a, b, s1)
		mustFree(t, a, c, s1)
	}
	if n := len(a.streams[s1].uncovered); n > 64 {
		t.Fatalf("%d entries in the uncovered list of a stream that frees one block", n)
	}
	checkInvariants(t, a)
}

// The block freed last on a stream is parked: the next allocation of its
// size on that stream gets it back without a search, another size or
// stream merges it first, and it counts as cached, not in use.
func TestParkedBlockReused(t *testing.T) {
	a := newAllocator(newFake(1<<30), true, 0)
	b := mustAlloc(t, a, s1, 100)
	keep := mustAlloc(t, a, s1, 100)
	mustFree(t, a, b, s1)
	if a.parked != b || a.Stats().InUse != keep.size {
		t.Fatalf("parked %p, want %p; in use %d", a.parked, b, a.Stats().InUse)
	}
	checkInvariants(t, a)
	if err := a.free(b, s1, false); !errors.Is(err, ErrFreed) {
		t.Fatalf("double free of the parked block: %v", err)
	}
	if c := mustAlloc(t, a, s1, 200); c != b || a.parked != nil {
		t.Fatalf("same size class, same stream: block %#x, want the parked %#x", c.ptr, b.ptr)
	}
	checkInvariants(t, a)
	mustFree(t, a, b, s1)
	if c := mustAlloc(t, a, s2, 100); c == b {
		t.Fatal("another stream took the parked block before its stream passed the free")
	}
	if a.parked != nil || !b.free || !b.idx && !b.dead {
		t.Fatalf("the parked block was not merged and indexed for another stream's allocation")
	}
	checkInvariants(t, a)
	mustFree(t, a, keep, s1)
	if _, err := a.Trim(); err != nil {
		t.Fatal(err)
	}
	if a.parked != nil {
		t.Fatal("Trim left a block parked")
	}
	checkInvariants(t, a)
}

// TestSplitReusesBlocks: a tiny allocation that splits a cached block, and
// merges back when freed, allocates no Go memory: the block objects that
// die in merges are reused (a third of the tiny array operations on an
// H200 allocated one).
func TestSplitReusesBlocks(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts are not meaningful under the race detector")
	}
	a := newAllocator(newFake(1<<30), true, 0)
	cycle := func() {
		b, err := a.alloc(s1, 64)
		if err != nil {
			t.Fatal(err)
		}
		if err := a.free(b, s1, true); err != nil { // idle: merges with the rest
			t.Fatal(err)
		}
	}
	cycle()
	if n := testing.AllocsPerRun(1000, cycle); n != 0 {
		t.Fatalf("%v allocations per tiny alloc and free", n)
	}
	checkInvariants(t, a)
}
