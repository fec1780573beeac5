package cuda

import (
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"sync"

	"github.com/gocu-dev/gocu/internal/syncdebug"
	"github.com/gocu-dev/gocu/internal/units"
)

// Size classes of the caching allocator. Requests up to 1 MiB are rounded
// up to a multiple of 512 bytes and carved out of 2 MiB segments; larger
// requests are rounded up to a multiple of 2 MiB and get a segment of their
// own, which a later, smaller request may split.
const (
	smallMax     = 1 << 20 // largest small request
	smallQuantum = 512     // rounding of small requests (and alignment of every block)
	smallSegment = 2 << 20 // driver allocation that small blocks are cut from
	largeQuantum = 2 << 20 // rounding of large requests and segments
)

// backend is what the allocator needs from the driver: raw allocations and
// events to learn when a stream has finished with a freed block. The driver
// implementation is driverBackend; tests use a fake.
type backend interface {
	malloc(size int64) (uintptr, error) // errors.Is(err, ErrOutOfMemory) when the device is full
	free(ptr uintptr) error
	record(stream uintptr) (event uintptr, err error) // an event that completes when the stream's current work does
	done(event uintptr) (bool, error)                 // whether the event has completed
	release(event uintptr)                            // the event is no longer needed
	sync() error                                      // wait for all work on the device
}

// AllocStats describes an allocator's memory. All sizes are in bytes.
type AllocStats struct {
	InUse        int64 // held by live allocations (rounded to the size classes)
	Requested    int64 // asked for by live allocations
	Reserved     int64 // obtained from the driver: in use plus cached
	Cached       int64 // reserved but free, kept for reuse
	PeakInUse    int64
	PeakReserved int64
	Allocs       int64 // successful allocations
	Frees        int64
	Hits         int64 // allocations served from the cache
	Misses       int64 // allocations that needed new memory from the driver
	Flushes      int64 // times the cache was emptied: out-of-memory retries and Trim
	Segments     int   // driver allocations held
	Limit        int64 // the limit on Reserved, 0 for none
	Caching      bool  // false with GOCU_ALLOCATOR=plain
}

func (s AllocStats) String() string {
	return fmt.Sprintf("in use %s (peak %s), cached %s, reserved %s (peak %s) in %d segments; %d allocs, %d frees, %d cache hits",
		byteSize(s.InUse), byteSize(s.PeakInUse), byteSize(s.Cached), byteSize(s.Reserved), byteSize(s.PeakReserved),
		s.Segments, s.Allocs, s.Frees, s.Hits)
}

// Allocator manages one device's memory. By default it is a stream-ordered
// caching allocator: freed blocks are kept and handed out again without a
// driver call. A block freed on stream S can be reused at once by work on S
// (stream order makes that safe) and by other streams only after an event
// recorded on S has completed. With GOCU_ALLOCATOR=plain every allocation
// and free goes to the driver.
//
// An Allocator is safe for concurrent use.
type Allocator struct {
	mu      sync.Mutex
	be      backend
	caching bool
	limit   int64

	small, large freeIndex
	segments     map[*segment]struct{}
	streams      map[uintptr]*streamFrees
	capturing    map[uintptr]int
	plain        map[uintptr]*block // live plain-mode allocations

	st    AllocStats
	log   bool
	marks uint64 // the last mark of streamFrees.add's compactions

	// spare holds block objects that died in merges, for split to reuse:
	// a tiny allocation that splits a cached block then allocates nothing.
	spare []*block

	// parked is the small block freed last, not yet merged and indexed
	// (see park): the next allocation of its size on its stream takes it
	// as it is.
	parked *block

	ordinal int       // the device's, for memory events
	stack   []uintptr // the stack of the call under way, for its memory events
}

// segment is one driver allocation.
type segment struct {
	ptr   uintptr
	size  int64
	small bool
	head  *block
}

// block is a piece of a segment: live (handed out) or free (cached).
type block struct {
	seg        *segment
	ptr        uintptr
	size       int64
	prev, next *block // neighbours in the segment, in address order

	free   bool
	parked bool    // freed, and the allocator's parked block (neither live nor free)
	req    int64   // bytes requested, while live
	stream uintptr // the stream it is ordered on: allocated on while live, freed on while free
	ready  bool    // free and idle: any stream may take it
	epoch  *epoch  // the event that will make this free block ready, once recorded
	dead   bool    // absorbed by a neighbour; stale references skip it
	idx    bool    // in a freeIndex
	mark   uint64  // the last compaction of a streamFrees list that kept it
	gen    uint32  // incremented at each death: a blockRef of another gen is stale
}

// blockRef is a reference to a free block from a list that may outlive it
// (streamFrees, epochs): dead block objects are reused, so a reference
// holds the generation it was taken in.
type blockRef struct {
	b   *block
	gen uint32
}

// get returns the block, or nil if it died since the reference was taken.
func (r blockRef) get() *block {
	if r.b.gen != r.gen || r.b.dead {
		return nil
	}
	return r.b
}

// epoch is an event recorded on a stream after blocks were freed on it;
// when it completes those blocks become free for every stream.
type epoch struct {
	stream uintptr
	event  uintptr
	blocks []blockRef
}

// streamFrees are the blocks freed on one stream that other streams may not
// take yet.
type streamFrees struct {
	uncovered []blockRef // freed since the last event on the stream was recorded
	epochs    []*epoch   // recorded, in order, not yet known complete
	compactAt int        // length of uncovered at which stale entries are dropped
}

// add records a block freed on the stream. Entries go stale when the block
// is reused or merged; they are dropped now and then so that a stream that
// frees and reuses forever keeps a short list. A block freed, reused and
// freed again on one stream has several entries, all live: the compaction
// keeps one (mark is a number no earlier compaction used), or the list of
// a stream that frees and reuses one block would grow without end.
func (sf *streamFrees) add(b *block, mark *uint64) {
	if len(sf.uncovered) >= max(sf.compactAt, 64) {
		*mark++
		live := sf.uncovered[:0]
		for _, r := range sf.uncovered {
			if u := r.get(); u != nil && u.free && !u.ready && u.epoch == nil && u.stream == b.stream && u.mark != *mark {
				u.mark = *mark
				live = append(live, r)
			}
		}
		clear(sf.uncovered[len(live):])
		sf.uncovered = live
		sf.compactAt = 2 * len(live)
	}
	sf.uncovered = append(sf.uncovered, blockRef{b, b.gen})
}

func newAllocator(be backend, caching bool, limit int64) *Allocator {
	return &Allocator{
		be:        be,
		caching:   caching,
		limit:     limit,
		segments:  make(map[*segment]struct{}),
		streams:   make(map[uintptr]*streamFrees),
		capturing: make(map[uintptr]int),
		plain:     make(map[uintptr]*block),
		log:       envLogs("alloc"),
	}
}

func roundUp(n, q int64) int64 { return (n + q - 1) / q * q }

// sizeClass is the block size serving a request and whether it is small.
func sizeClass(req int64) (int64, bool) {
	if req <= smallMax {
		return roundUp(max(req, 1), smallQuantum), true
	}
	return roundUp(req, largeQuantum), false
}

// Stats returns a snapshot of the allocator's counters.
func (a *Allocator) Stats() AllocStats {
	a.mu.Lock()
	defer a.mu.Unlock()
	s := a.st
	s.Cached = s.Reserved - s.InUse
	s.Segments = len(a.segments) + len(a.plain)
	s.Limit = a.limit
	s.Caching = a.caching
	return s
}

// ResetPeak starts the peaks over from what is in use and reserved now, as
// torch.cuda.reset_peak_memory_stats does, so that a phase's peak can be read.
func (a *Allocator) ResetPeak() {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.st.PeakInUse, a.st.PeakReserved = a.st.InUse, a.st.Reserved
}

// SetLimit caps the memory the allocator obtains from the driver (in use
// plus cached) at bytes; 0 removes the cap. An allocation that would exceed
// it first empties the cache and then fails with ErrOutOfMemory. The initial
// limit comes from GOCU_MEMORY_LIMIT (bytes, or with a KiB/MiB/GiB/KB/MB/GB
// suffix).
func (a *Allocator) SetLimit(bytes int64) {
	a.mu.Lock()
	a.limit = max(bytes, 0)
	a.mu.Unlock()
}

// Limit returns the cap set by SetLimit or GOCU_MEMORY_LIMIT, 0 for none.
func (a *Allocator) Limit() int64 {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.limit
}

// Caching reports whether the caching allocator is on (it is unless
// GOCU_ALLOCATOR=plain).
func (a *Allocator) Caching() bool { return a.caching }

// Trim waits for the device to finish its work and returns every cached
// segment that holds no live allocation to the driver. It returns the number
// of bytes released.
func (a *Allocator) Trim() (int64, error) {
	stack := memoryStack()
	a.mu.Lock()
	defer a.mu.Unlock()
	a.stack = stack
	defer func() { a.stack = nil }()
	return a.flush()
}

// alloc returns a block of at least req bytes ordered on stream.
func (a *Allocator) alloc(stream uintptr, req int64) (*block, error) {
	if req <= 0 {
		return nil, fmt.Errorf("cuda: Alloc: size %d is not positive: %w", req, ErrInvalidValue)
	}
	stack := memoryStack()
	a.mu.Lock()
	defer a.mu.Unlock()
	if stack != nil {
		a.stack = stack
		defer func() { a.stack = nil }()
	}
	if !a.caching {
		return a.allocPlain(stream, req)
	}
	size, small := sizeClass(req)
	if p := a.parked; p != nil && p.stream == stream && p.size == size {
		// The block freed last on this stream, of this size: stream
		// order makes it safe, as a cached block freed on stream is.
		a.parked, p.parked = nil, false
		a.st.Hits++
		return a.handOut(p, req, stream, stack), nil
	}
	a.unpark()
	idx := a.index(small)
	b := idx.bestFit(size, stream)
	if b == nil {
		a.promote(stream)
		b = idx.bestFit(size, stream)
	}
	if b == nil {
		var err error
		if b, err = a.grow(size, small); err != nil {
			if !errors.Is(err, ErrOutOfMemory) {
				return nil, err
			}
			// Out of memory: wait for the device, give the cache back to the
			// driver and try once more, from the cache first.
			if syncdebug.On() {
				syncdebug.Report(syncdebug.OutOfMemory, "Alloc") // only warns
			}
			if _, ferr := a.flush(); ferr != nil {
				return nil, errors.Join(a.oomError(err, req), ferr)
			}
			if b = idx.bestFit(size, stream); b == nil {
				if b, err = a.grow(size, small); err != nil {
					return nil, a.oomError(err, req)
				}
			}
		}
	}
	if b.idx {
		idx.remove(b)
		a.st.Hits++
	}
	a.split(b, size)
	return a.handOut(b, req, stream, stack), nil
}

// handOut makes b, a block of the size class of req, live on stream.
func (a *Allocator) handOut(b *block, req int64, stream uintptr, stack []uintptr) *block {
	b.free, b.ready, b.epoch = false, false, nil
	b.req, b.stream = req, stream
	a.st.Allocs++
	a.st.InUse += b.size
	a.st.Requested += req
	a.st.PeakInUse = max(a.st.PeakInUse, a.st.InUse)
	if stack != nil {
		a.record(MemAlloc, b.ptr, b.size, req, stream, stack)
	}
	return b
}

// A loop that allocates and frees a small block of one size on one stream
// (an array operation's result, evaluated and closed) would merge the
// block with its neighbours at each free and split it off again at the
// next allocation. So free parks the small block it frees, ordered on its
// stream, and the next allocation takes it if it asks for its size on its
// stream. Anything else first merges and indexes it (unpark), as free
// would have, and so does every operation that looks at free blocks.

// park makes b, a small block being freed on stream, the parked one.
func (a *Allocator) park(b *block, stream uintptr) {
	a.unpark()
	b.parked, b.req, b.stream = true, 0, stream
	a.parked = b
}

// unpark frees the parked block, if any, into the index.
func (a *Allocator) unpark() {
	b := a.parked
	if b == nil {
		return
	}
	a.parked, b.parked = nil, false
	b.free, b.ready, b.epoch = true, false, nil
	a.streamFrees(b.stream).add(b, &a.marks)
	b = a.coalesce(b)
	a.index(b.seg.small).insert(b)
}

func (a *Allocator) allocPlain(stream uintptr, req int64) (*block, error) {
	if a.limit > 0 && a.st.Reserved+req > a.limit {
		return nil, a.limitError(req)
	}
	ptr, err := a.be.malloc(req)
	if err != nil {
		return nil, a.oomError(err, req)
	}
	b := &block{ptr: ptr, size: req, req: req, stream: stream}
	a.plain[ptr] = b
	a.st.Allocs++
	a.st.Misses++
	a.st.InUse += req
	a.st.Requested += req
	a.st.Reserved += req
	a.st.PeakInUse = max(a.st.PeakInUse, a.st.InUse)
	a.st.PeakReserved = max(a.st.PeakReserved, a.st.Reserved)
	if a.stack != nil {
		a.record(MemAlloc, b.ptr, b.size, req, stream, a.stack)
	}
	return b, nil
}

// free returns b to the allocator, ordered after the work already queued on
// stream. idle says that work is known to be finished (the stream was
// synchronised and closed), so any stream may reuse b at once.
func (a *Allocator) free(b *block, stream uintptr, idle bool) error {
	stack := memoryStack()
	a.mu.Lock()
	defer a.mu.Unlock()
	if b.free || b.dead || b.parked {
		return fmt.Errorf("cuda: Free: %w (double free)", ErrFreed)
	}
	a.st.Frees++
	a.st.InUse -= b.size
	a.st.Requested -= b.req
	if !a.caching {
		delete(a.plain, b.ptr)
		b.free = true
		a.st.Reserved -= b.size
		if stack != nil {
			a.record(MemFree, b.ptr, b.size, 0, stream, stack)
		}
		return a.be.free(b.ptr)
	}
	if stack != nil {
		a.record(MemFree, b.ptr, b.size, 0, stream, stack)
	}
	if !idle && b.seg.small {
		a.park(b, stream)
		return nil
	}
	b.free, b.req, b.stream, b.epoch = true, 0, stream, nil
	b.ready = idle
	if !idle {
		a.streamFrees(stream).add(b, &a.marks)
	}
	b = a.coalesce(b)
	a.index(b.seg.small).insert(b)
	return nil
}

func (a *Allocator) index(small bool) *freeIndex {
	if small {
		return &a.small
	}
	return &a.large
}

func (a *Allocator) streamFrees(stream uintptr) *streamFrees {
	sf := a.streams[stream]
	if sf == nil {
		sf = &streamFrees{}
		a.streams[stream] = sf
	}
	return sf
}

// grow obtains a new segment for a block of size bytes and returns its
// only block (free, not in an index).
func (a *Allocator) grow(size int64, small bool) (*block, error) {
	segSize := size
	if small {
		segSize = smallSegment
	}
	seg, err := a.newSegment(segSize, small)
	if err != nil {
		return nil, err
	}
	a.st.Misses++
	return seg.head, nil
}

// newSegment obtains size bytes from the driver, within the limit.
func (a *Allocator) newSegment(size int64, small bool) (*segment, error) {
	if a.limit > 0 && a.st.Reserved+size > a.limit {
		return nil, a.limitError(size)
	}
	ptr, err := a.be.malloc(size)
	if err != nil {
		return nil, err
	}
	seg := &segment{ptr: ptr, size: size, small: small}
	seg.head = &block{seg: seg, ptr: ptr, size: size, free: true, ready: true}
	a.segments[seg] = struct{}{}
	a.st.Reserved += size
	a.st.PeakReserved = max(a.st.PeakReserved, a.st.Reserved)
	if a.stack != nil {
		a.record(MemSegmentAlloc, ptr, size, 0, 0, a.stack)
	}
	if a.log {
		slog.Info("cuda: allocator: new segment", "bytes", size, "reserved", a.st.Reserved)
	}
	return seg, nil
}

// split cuts b down to size when the rest is big enough to serve a later
// request of its class; the rest stays free in b's state.
func (a *Allocator) split(b *block, size int64) {
	rest := b.size - size
	if rest < smallQuantum || (!b.seg.small && rest < largeQuantum) {
		return
	}
	r := a.newBlock()
	*r = block{seg: b.seg, ptr: b.ptr + uintptr(size), size: rest, prev: b, next: b.next,
		free: true, stream: b.stream, ready: b.ready, epoch: b.epoch, gen: r.gen}
	if b.next != nil {
		b.next.prev = r
	}
	b.next = r
	b.size = size
	switch {
	case r.ready:
	case r.epoch != nil:
		r.epoch.blocks = append(r.epoch.blocks, blockRef{r, r.gen})
	default:
		a.streamFrees(r.stream).add(r, &a.marks)
	}
	a.index(b.seg.small).insert(r)
}

// compatible reports whether two adjacent free blocks may merge: both free
// for every stream, or both waiting on the same stream and event.
func compatible(x, y *block) bool {
	if x.ready || y.ready {
		return x.ready && y.ready
	}
	return x.stream == y.stream && x.epoch == y.epoch
}

// coalesce merges free block b (not in an index) with compatible free
// neighbours and returns the merged block, also not in an index.
func (a *Allocator) coalesce(b *block) *block {
	idx := a.index(b.seg.small)
	if p := b.prev; p != nil && p.free && compatible(p, b) {
		idx.remove(p)
		p.size += b.size
		p.next = b.next
		if b.next != nil {
			b.next.prev = p
		}
		a.kill(b)
		b = p
	}
	if n := b.next; n != nil && n.free && compatible(b, n) {
		idx.remove(n)
		b.size += n.size
		b.next = n.next
		if n.next != nil {
			n.next.prev = b
		}
		a.kill(n)
	}
	return b
}

// kill marks a block absorbed by a neighbour, or whose segment went back
// to the driver, and keeps its object for reuse.
func (a *Allocator) kill(b *block) {
	b.dead = true
	b.gen++
	b.prev, b.next, b.seg, b.epoch = nil, nil, nil, nil
	if len(a.spare) < 1024 {
		a.spare = append(a.spare, b)
	}
}

// newBlock returns a block object: a reused one, or a new one.
func (a *Allocator) newBlock() *block {
	if n := len(a.spare); n > 0 {
		b := a.spare[n-1]
		a.spare[n-1] = nil
		a.spare = a.spare[:n-1]
		return b
	}
	return new(block)
}

// promote makes blocks freed on other streams than except available to
// every stream once their streams have passed the point of the free: it
// records an event after newly freed blocks and checks earlier events.
func (a *Allocator) promote(except uintptr) {
	for s, sf := range a.streams {
		if s == except {
			continue
		}
		if len(sf.uncovered) > 0 && a.capturing[s] == 0 {
			var live []blockRef
			for _, r := range sf.uncovered {
				if b := r.get(); b != nil && b.free && !b.ready && b.epoch == nil && b.stream == s {
					live = append(live, r)
				}
			}
			if len(live) == 0 {
				sf.uncovered = sf.uncovered[:0]
			} else if ev, err := a.be.record(s); err == nil {
				ep := &epoch{stream: s, event: ev, blocks: live}
				for _, r := range live {
					r.b.epoch = ep
				}
				sf.epochs = append(sf.epochs, ep)
				sf.uncovered = sf.uncovered[:0]
			}
		}
		for len(sf.epochs) > 0 {
			ep := sf.epochs[0]
			if done, err := a.be.done(ep.event); err != nil || !done {
				break // events on one stream complete in order
			}
			a.makeReady(ep)
			sf.epochs = sf.epochs[1:]
		}
		if len(sf.epochs) == 0 && len(sf.uncovered) == 0 {
			delete(a.streams, s)
		}
	}
}

// makeReady frees ep's blocks for every stream and releases its event.
func (a *Allocator) makeReady(ep *epoch) {
	for _, r := range ep.blocks {
		b := r.get()
		if b == nil || !b.free || b.epoch != ep {
			continue
		}
		idx := a.index(b.seg.small)
		idx.remove(b)
		b.ready, b.epoch = true, nil
		b = a.coalesce(b)
		idx.insert(b)
	}
	a.be.release(ep.event)
}

// flush waits for the device, makes every free block ready and returns
// wholly free segments to the driver. It returns the bytes released.
func (a *Allocator) flush() (int64, error) {
	if !a.caching {
		return 0, nil
	}
	a.st.Flushes++
	a.unpark()
	err := a.be.sync()
	if err == nil {
		for s, sf := range a.streams {
			for _, ep := range sf.epochs {
				a.makeReady(ep)
			}
			for _, r := range sf.uncovered {
				b := r.get()
				if b == nil || !b.free || b.ready || b.epoch != nil {
					continue
				}
				idx := a.index(b.seg.small)
				idx.remove(b)
				b.ready = true
				b = a.coalesce(b)
				idx.insert(b)
			}
			delete(a.streams, s)
		}
	}
	var released int64
	for seg := range a.segments {
		h := seg.head
		if !h.free || !h.ready || h.next != nil {
			continue
		}
		if ferr := a.be.free(seg.ptr); ferr != nil {
			err = errors.Join(err, ferr)
			continue
		}
		a.index(seg.small).remove(h)
		a.kill(h)
		delete(a.segments, seg)
		a.st.Reserved -= seg.size
		released += seg.size
		if a.stack != nil {
			a.record(MemSegmentFree, seg.ptr, seg.size, 0, 0, a.stack)
		}
	}
	if a.log {
		slog.Info("cuda: allocator: flushed cache", "released", released, "reserved", a.st.Reserved)
	}
	return released, err
}

// streamClosed is called after stream was synchronised and destroyed: its
// freed blocks are idle now.
func (a *Allocator) streamClosed(stream uintptr) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.unpark()
	sf := a.streams[stream]
	if sf == nil {
		return
	}
	for _, ep := range sf.epochs {
		a.makeReady(ep)
	}
	for _, r := range sf.uncovered {
		b := r.get()
		if b == nil || !b.free || b.ready || b.epoch != nil {
			continue
		}
		idx := a.index(b.seg.small)
		idx.remove(b)
		b.ready = true
		b = a.coalesce(b)
		idx.insert(b)
	}
	delete(a.streams, stream)
	delete(a.capturing, stream)
}

// setCapturing marks a stream as capturing a graph (events must not be
// recorded on it then).
func (a *Allocator) setCapturing(stream uintptr, on bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if on {
		a.capturing[stream]++
	} else if a.capturing[stream] > 0 {
		a.capturing[stream]--
		if a.capturing[stream] == 0 {
			delete(a.capturing, stream)
		}
	}
}

func (a *Allocator) limitError(size int64) error {
	return &Error{Func: "cuda.Alloc", Code: 2, Name: Result(2).Name(),
		Msg: fmt.Sprintf("allocating %s more would exceed the memory limit of %s (set by GOCU_MEMORY_LIMIT or Allocator.SetLimit; %s)",
			byteSize(size), byteSize(a.limit), a.statsLocked())}
}

func (a *Allocator) oomError(err error, req int64) error {
	var e *Error
	if errors.As(err, &e) && e.Code == 2 && e.Func != "cuda.Alloc" {
		detail := "the cache was emptied and the allocation retried"
		if !a.caching {
			detail = "plain allocator"
		}
		e2 := *e
		e2.Msg = fmt.Sprintf("%s: could not allocate %s (%s; %s)", e.Msg, byteSize(req), detail, a.statsLocked())
		return &e2
	}
	return err
}

func (a *Allocator) statsLocked() string {
	return fmt.Sprintf("in use %s, cached %s, reserved %s", byteSize(a.st.InUse), byteSize(a.st.Reserved-a.st.InUse), byteSize(a.st.Reserved))
}

// freeIndex holds free blocks sorted by size, then address, for best fit.
type freeIndex struct{ blocks []*block }

func less(x, y *block) bool { return x.size < y.size || x.size == y.size && x.ptr < y.ptr }

func (f *freeIndex) search(b *block) int {
	return sort.Search(len(f.blocks), func(i int) bool { return !less(f.blocks[i], b) })
}

func (f *freeIndex) insert(b *block) {
	i := f.search(b)
	f.blocks = append(f.blocks, nil)
	copy(f.blocks[i+1:], f.blocks[i:])
	f.blocks[i] = b
	b.idx = true
}

func (f *freeIndex) remove(b *block) {
	if !b.idx {
		return
	}
	i := f.search(b)
	if i < len(f.blocks) && f.blocks[i] == b {
		f.blocks = append(f.blocks[:i], f.blocks[i+1:]...)
		b.idx = false
		return
	}
	panic("cuda: allocator index corrupt") // an internal invariant, never a user error
}

// bestFit returns the smallest block of at least size that stream may use:
// one free for every stream, or one freed on stream itself.
func (f *freeIndex) bestFit(size int64, stream uintptr) *block {
	i := sort.Search(len(f.blocks), func(i int) bool { return f.blocks[i].size >= size })
	for ; i < len(f.blocks); i++ {
		if b := f.blocks[i]; b.ready || b.stream == stream {
			return b
		}
	}
	return nil
}

// byteSize formats n bytes for messages.
type byteSize int64

func (n byteSize) String() string { return units.Bytes(int64(n)) }
