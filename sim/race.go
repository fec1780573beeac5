package sim

import (
	"fmt"
	"math/bits"
	"reflect"
	"sync"
	"unsafe"

	"github.com/gocu-dev/gocu/kernel"
)

// Race detection (checked mode).
//
// The instrumented twin of a kernel reports every element access through
// kernel.At, which calls Access. The simulator keeps shadow state per
// element address:
//
//   - shared memory: per block, in a dense array indexed by the byte offset
//     into the worker's shared arena, reset per block by a generation
//     number;
//   - global memory (the slices among the kernel's arguments): per launch,
//     in 4 KiB pages of shadow entries, sharded by page and locked, since
//     blocks run in parallel. A page's granularity is the smallest access
//     seen in it, so bytes written by neighbouring threads never alias.
//
// An entry keeps the last write, the last atomic access and the last two
// reads by different threads. Two accesses conflict when they come from
// different threads, at least one writes, they are not both atomic, and no
// barrier orders them: same block, same barrier interval (and, within one
// warp, no SyncWarp between); in a block that uses named barriers, no
// chain of barriers between (vector clocks: see named.go). For global
// memory accesses from different blocks always conflict: nothing orders blocks within a launch. A write
// forgets the reads before it, which is sound because those reads were
// ordered before the write (else it would have been reported). Keeping two
// reads means a race with an older third reader can be missed; a reported
// race is always real. Accesses to memory that is neither shared nor an
// argument (local arrays) are bounds-checked only.

// rec is one recorded access; its site is kept beside it in the entry.
type rec struct {
	tid   uint64 // block<<tidShift | rank
	epoch uint32 // barriers the block had passed
	wep   uint32 // SyncWarps of the thread's warp
}

// An entry is the shadow of one element: 64 bytes, one cache line.
type entry struct {
	w, r1, r2    rec    // last write (or atomic), last two reads by different threads
	ws, r1s, r2s uint32 // their sites, as indices into the launch's site table; 0 for none
	flags        uint32 // the flags below; for shared memory the block generation above them
}

const (
	written   = 1 << iota // shared memory: written in this block
	wasAtomic             // w is an atomic access, which never races with another atomic
	genShift  = iota      // the generation is flags >> genShift
	genMax    = 1<<(32-genShift) - 1
)

// access is an access being checked.
type access struct {
	rec
	site uint32
	hb   *happens // the block's happens-before state once it uses named barriers, or nil
}

// rec returns the record of an access by th now.
func (th *thread) access(s *kernel.Site) access {
	b := th.b
	if hb := &b.hb; hb.on {
		return access{rec{tid: b.idx<<b.l.tidShift | uint64(th.rank), epoch: hb.clk[th.rank], wep: b.wep[th.rank>>5]}, b.w.siteIndex(s), hb}
	}
	return access{rec{tid: b.idx<<b.l.tidShift | uint64(th.rank), epoch: b.epoch, wep: b.wep[th.rank>>5]}, b.w.siteIndex(s), nil}
}

// conflict reports whether p, recorded at site ps, and c, two accesses to
// one element of which at least one writes, form a race.
func (l *launch) conflict(p rec, ps uint32, c access) bool {
	if ps == 0 || p.tid == c.tid {
		return false
	}
	if p.tid>>l.tidShift != c.tid>>l.tidShift {
		return true // different blocks
	}
	mask := uint64(1)<<l.tidShift - 1
	if c.hb != nil {
		if c.hb.ordered(p.epoch, int32(p.tid&mask), int32(c.tid&mask)) {
			return false // barriers between
		}
	} else if p.epoch != c.epoch {
		return false // a barrier between
	}
	if (p.tid&mask)>>5 == (c.tid&mask)>>5 && p.wep != c.wep {
		return false // same warp, a SyncWarp between
	}
	return true
}

// check applies an access to e and returns the earlier access it races
// with, if any.
func (l *launch) check(e *entry, c access, acc kernel.Access) (prev rec, site uint32, op string, race bool) {
	wop := "write"
	if e.flags&wasAtomic != 0 {
		wop = "atomic"
	}
	switch acc {
	case kernel.Read:
		if l.conflict(e.w, e.ws, c) {
			return e.w, e.ws, wop, true
		}
		if e.r1.tid != c.tid || e.r1s == 0 {
			e.r2, e.r2s = e.r1, e.r1s
		}
		e.r1, e.r1s = c.rec, c.site
		return
	case kernel.Atomic:
		if e.flags&wasAtomic == 0 && l.conflict(e.w, e.ws, c) {
			return e.w, e.ws, wop, true
		}
		e.flags |= wasAtomic
	default: // Write, ReadWrite
		if l.conflict(e.w, e.ws, c) {
			return e.w, e.ws, wop, true
		}
		e.flags &^= wasAtomic
	}
	switch {
	case l.conflict(e.r1, e.r1s, c):
		return e.r1, e.r1s, "read", true
	case l.conflict(e.r2, e.r2s, c):
		return e.r2, e.r2s, "read", true
	}
	e.w, e.ws = c.rec, c.site
	if acc != kernel.Atomic {
		// Every earlier read is ordered before this write, or it would have
		// been reported: later accesses need only be checked against it.
		e.r1s, e.r2s = 0, 0
	}
	return
}

// party describes the thread of an earlier access.
func (l *launch) party(p rec, site uint32, op string) *Party {
	blk := p.tid >> l.tidShift
	r := int32(p.tid & (uint64(1)<<l.tidShift - 1))
	gx, gy := uint64(l.grid.X), uint64(l.grid.Y)
	bx, by := l.block.X, l.block.Y
	q := r / bx
	return &Party{
		Block:  kernel.Dim3{X: int32(blk % gx), Y: int32(blk / gx % gy), Z: int32(blk / (gx * gy))},
		Thread: kernel.Dim3{X: r - q*bx, Y: q % by, Z: q / by},
		Pos:    siteOf(l.sites.at(site)), Op: op,
	}
}

// siteTable numbers the sites of a launch's checked accesses, so that a
// shadow entry stores 4-byte indices instead of pointers.
type siteTable struct {
	mu   sync.Mutex
	idx  map[*kernel.Site]uint32
	list []*kernel.Site // list[i-1] has index i
}

func (t *siteTable) index(s *kernel.Site) uint32 {
	t.mu.Lock()
	defer t.mu.Unlock()
	if i, ok := t.idx[s]; ok {
		return i
	}
	if t.idx == nil {
		t.idx = make(map[*kernel.Site]uint32)
	}
	t.list = append(t.list, s)
	i := uint32(len(t.list))
	t.idx[s] = i
	return i
}

func (t *siteTable) at(i uint32) *kernel.Site {
	t.mu.Lock()
	defer t.mu.Unlock()
	if i == 0 || int(i) > len(t.list) {
		return nil
	}
	return t.list[i-1]
}

// siteIndex is siteTable.index through a small per-worker cache: a kernel
// has few access sites and executes them over and over.
func (w *worker) siteIndex(s *kernel.Site) uint32 {
	c := &w.siteCache[uintptr(unsafe.Pointer(s))>>4&(siteCacheSize-1)]
	if c.s == s && c.i != 0 {
		return c.i
	}
	c.s, c.i = s, w.l.sites.index(s)
	return c.i
}

const (
	siteCacheSize = 64
	pageCacheSize = 16 // a kernel streams through a few arrays at once
)

// sharedAccess checks an access to shared memory at arena offset off.
func (th *thread) sharedAccess(off, size uintptr, acc kernel.Access, s *kernel.Site) {
	b := th.b
	w := b.w
	if off >= uintptr(len(w.shadow)) {
		w.shadow = append(w.shadow, make([]entry, int(b.next)-len(w.shadow))...)
	}
	e := &w.shadow[off]
	if e.flags>>genShift != b.gen {
		*e = entry{flags: b.gen << genShift}
	}
	if acc != kernel.Write && e.flags&written == 0 {
		mem, start, t := b.sharedMemory(off)
		elem := elemPath(t, off-start, size)
		if elem == "" {
			elem = fmt.Sprintf("at byte offset %d", off-start)
		}
		th.fail(&Error{Kind: KindUninitialized, Pos: siteOf(s), Op: accessName(acc), Memory: mem,
			Index: int((off - start) / size),
			Msg: fmt.Sprintf("%s of %s element %s before any thread of the block wrote it: if a thread writes it, a SyncThreads may be missing between that write and this %s",
				accessName(acc), mem, elem, accessName(acc))})
	}
	if prev, ps, op, race := b.l.check(e, th.access(s), acc); race {
		mem, start, t := b.sharedMemory(off)
		th.fail(&Error{Kind: KindSharedRace, Pos: siteOf(s), Op: accessName(acc), Memory: mem,
			Index: int((off - start) / size), Other: b.l.party(prev, ps, op), Msg: elemPath(t, off-start, size)})
	}
	if acc != kernel.Read {
		e.flags |= written
		if len(b.wgRead) > 0 {
			th.checkMMARead(accessName(acc), nil, s, off, size)
		}
		th.markUnfenced(off &^ 15)
	}
}

// An argRange is the memory of one slice among the kernel's arguments.
type argRange struct {
	lo, hi uintptr
	elem   uintptr
	arg    int // 1-based position after the *kernel.Thread
}

// collectArgs finds the slices among the kernel's arguments, including
// inside arrays and structs.
func collectArgs(args []any) []argRange {
	var out []argRange
	var walk func(v reflect.Value, arg int)
	walk = func(v reflect.Value, arg int) {
		switch v.Kind() {
		case reflect.Slice:
			if v.Len() > 0 && v.Type().Elem().Size() > 0 {
				lo := v.Pointer()
				es := v.Type().Elem().Size()
				out = append(out, argRange{lo: lo, hi: lo + uintptr(v.Len())*es, elem: es, arg: arg})
			}
		case reflect.Array:
			for i := range v.Len() {
				walk(v.Index(i), arg)
			}
		case reflect.Struct:
			for i := range v.NumField() {
				walk(v.Field(i), arg)
			}
		case reflect.Pointer:
			if !v.IsNil() && v.Elem().Kind() == reflect.Array {
				lo := v.Pointer()
				out = append(out, argRange{lo: lo, hi: lo + v.Elem().Type().Size(), elem: v.Elem().Type().Elem().Size(), arg: arg})
			}
		}
	}
	for i, a := range args {
		if a != nil {
			walk(reflect.ValueOf(a), i+1)
		}
	}
	return out
}

// argAt returns the argument memory holding addr, or nil.
func (l *launch) argAt(addr uintptr) *argRange {
	for i := range l.args {
		if r := &l.args[i]; addr >= r.lo && addr < r.hi {
			return r
		}
	}
	return nil
}

// memoryOf names the memory at addr: shared, an argument, or local.
func (b *block) memoryOf(addr uintptr) (name string, start, elem uintptr) {
	if off := addr - b.w.arena.base; off < b.next {
		name, s, _ := b.sharedMemory(off)
		return name, b.w.arena.base + s, 0
	}
	if r := b.l.argAt(addr); r != nil {
		return fmt.Sprintf("global memory (argument %d)", r.arg), r.lo, r.elem
	}
	if !b.l.haveArgs {
		return "", 0, 0 // unknown: the launch did not say which memory is global
	}
	return "local memory", 0, 0
}

const (
	pageBits     = 12
	pageSize     = 1 << pageBits
	shadowShards = 64
)

// globalShadow is the shadow state of global memory for one launch.
type globalShadow struct {
	shards [shadowShards]struct {
		mu    sync.Mutex
		pages map[uintptr]*page
		_     [40]byte // keep shards on separate cache lines
	}
}

type page struct {
	mu    sync.Mutex
	shift uint // log2 of the granularity in bytes
	ents  []entry
}

func (g *globalShadow) page(pn uintptr, shift uint) *page {
	s := &g.shards[(uint64(pn)*0x9e3779b97f4a7c15)>>58]
	s.mu.Lock()
	p := s.pages[pn]
	if p == nil {
		if s.pages == nil {
			s.pages = make(map[uintptr]*page)
		}
		p = newPage(shift)
		s.pages[pn] = p
	}
	s.mu.Unlock()
	return p
}

// Pages are recycled across launches: fresh memory costs a page fault per
// 4 KiB on first touch, which dominated checked runs, while clearing a
// recycled page is a fast memclr.
var pagePool [5]sync.Pool

func newPage(shift uint) *page {
	if p, ok := pagePool[shift].Get().(*page); ok {
		clear(p.ents)
		return p
	}
	return &page{shift: shift, ents: make([]entry, pageSize>>shift)}
}

// release returns the shadow's pages to the pool.
func (g *globalShadow) release() {
	for i := range g.shards {
		for _, p := range g.shards[i].pages {
			pagePool[p.shift].Put(p)
		}
		g.shards[i].pages = nil
	}
}

// granularity returns log2 of the largest power of two, at most 16, that
// divides size.
func granularity(size uintptr) uint {
	g := uint(bits.TrailingZeros64(uint64(size)))
	return min(g, 4)
}

// globalAccess checks an access to global memory.
func (th *thread) globalAccess(g *globalShadow, r *argRange, addr, size uintptr, acc kernel.Access, s *kernel.Site) {
	w := th.b.w
	pn := addr >> pageBits
	shift := granularity(size)
	pc := &w.pages[pn%pageCacheSize]
	p := pc.p
	if p == nil || pc.pn != pn {
		p = g.page(pn, shift)
		pc.p, pc.pn = p, pn
	}
	c := th.access(s)
	p.mu.Lock()
	if shift < p.shift { // a narrower access: refine the page
		q := newPage(shift)
		for i := range p.ents {
			q.ents[i<<(p.shift-shift)] = p.ents[i]
		}
		p.ents, p.shift = q.ents, shift
	}
	e := &p.ents[(addr&(pageSize-1))>>p.shift]
	prev, ps, op, race := th.b.l.check(e, c, acc)
	p.mu.Unlock()
	if race {
		th.fail(&Error{Kind: KindGlobalRace, Pos: siteOf(s), Op: accessName(acc),
			Memory: fmt.Sprintf("global memory (argument %d)", r.arg), Index: int((addr - r.lo) / r.elem),
			Other: th.b.l.party(prev, ps, op)})
	}
}
