package sim

import (
	"fmt"
	"math/bits"
	"reflect"
	"sync"

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
// warp, no SyncWarp between). For global memory accesses from different
// blocks always conflict: nothing orders blocks within a launch. A write
// forgets the reads before it, which is sound because those reads were
// ordered before the write (else it would have been reported). Keeping two
// reads means a race with an older third reader can be missed; a reported
// race is always real. Accesses to memory that is neither shared nor an
// argument (local arrays) are bounds-checked only.

// rec is one recorded access.
type rec struct {
	tid   uint64 // block<<tidShift | rank, plus 1; 0 for none
	epoch uint32 // barriers the block had passed
	wep   uint32 // SyncWarps of the thread's warp
	site  *kernel.Site
}

type entry struct {
	gen     uint32 // shared memory: the block generation the entry belongs to
	written bool   // shared memory: written in this block
	w, at   rec    // last write, last atomic
	r1, r2  rec    // last two reads by different threads
}

// rec returns the record of an access by th now.
func (th *thread) rec(s *kernel.Site) rec {
	b := th.b
	return rec{tid: (b.idx<<b.l.tidShift | uint64(th.rank)) + 1, epoch: b.epoch, wep: b.wep[th.rank>>5], site: s}
}

// conflict reports whether p and c, two accesses to one element of which
// at least one writes, form a race.
func (l *launch) conflict(p, c rec) bool {
	if p.tid == 0 || p.tid == c.tid {
		return false
	}
	pt, ct := p.tid-1, c.tid-1
	if pt>>l.tidShift != ct>>l.tidShift {
		return true // different blocks
	}
	if p.epoch != c.epoch {
		return false // a barrier between
	}
	mask := uint64(1)<<l.tidShift - 1
	if (pt&mask)>>5 == (ct&mask)>>5 && p.wep != c.wep {
		return false // same warp, a SyncWarp between
	}
	return true
}

// check applies an access to e and returns the earlier access it races
// with, if any.
func (l *launch) check(e *entry, c rec, acc kernel.Access) (prev rec, op string, race bool) {
	switch acc {
	case kernel.Read:
		switch {
		case l.conflict(e.w, c):
			return e.w, "write", true
		case l.conflict(e.at, c):
			return e.at, "atomic", true
		}
		if e.r1.tid != c.tid {
			e.r2 = e.r1
		}
		e.r1 = c
	case kernel.Atomic:
		switch {
		case l.conflict(e.w, c):
			return e.w, "write", true
		case l.conflict(e.r1, c):
			return e.r1, "read", true
		case l.conflict(e.r2, c):
			return e.r2, "read", true
		}
		e.at = c
	default: // Write, ReadWrite
		switch {
		case l.conflict(e.w, c):
			return e.w, "write", true
		case l.conflict(e.at, c):
			return e.at, "atomic", true
		case l.conflict(e.r1, c):
			return e.r1, "read", true
		case l.conflict(e.r2, c):
			return e.r2, "read", true
		}
		e.w, e.at, e.r1, e.r2 = c, rec{}, rec{}, rec{}
	}
	return rec{}, "", false
}

// party describes the thread of an earlier access.
func (l *launch) party(p rec, op string) *Party {
	t := p.tid - 1
	blk := t >> l.tidShift
	r := int32(t & (uint64(1)<<l.tidShift - 1))
	gx, gy := uint64(l.grid.X), uint64(l.grid.Y)
	bx, by := l.block.X, l.block.Y
	q := r / bx
	return &Party{
		Block:  kernel.Dim3{X: int32(blk % gx), Y: int32(blk / gx % gy), Z: int32(blk / (gx * gy))},
		Thread: kernel.Dim3{X: r - q*bx, Y: q % by, Z: q / by},
		Pos:    siteOf(p.site), Op: op,
	}
}

// sharedAccess checks an access to shared memory at arena offset off.
func (th *thread) sharedAccess(off, size uintptr, acc kernel.Access, s *kernel.Site) {
	b := th.b
	w := b.w
	if off >= uintptr(len(w.shadow)) {
		w.shadow = append(w.shadow, make([]entry, int(b.next)-len(w.shadow))...)
	}
	e := &w.shadow[off]
	if e.gen != b.gen {
		*e = entry{gen: b.gen}
	}
	if acc != kernel.Write && !e.written {
		mem, start := b.sharedMemory(off)
		th.fail(&Error{Kind: KindUninitialized, Pos: siteOf(s), Op: accessName(acc), Memory: mem,
			Index: int((off - start) / size),
			Msg:   fmt.Sprintf("%s of %s at byte offset %d before any thread of the block wrote it", accessName(acc), mem, off-start)})
	}
	c := th.rec(s)
	if prev, op, race := b.l.check(e, c, acc); race {
		mem, start := b.sharedMemory(off)
		th.fail(&Error{Kind: KindSharedRace, Pos: siteOf(s), Op: accessName(acc), Memory: mem,
			Index: int((off - start) / size), Other: b.l.party(prev, op)})
	}
	if acc != kernel.Read {
		e.written = true
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
		name, s := b.sharedMemory(off)
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
		p = &page{shift: shift, ents: make([]entry, pageSize>>shift)}
		s.pages[pn] = p
	}
	s.mu.Unlock()
	return p
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
	p := w.lastPage
	if p == nil || w.lastPN != pn {
		p = g.page(pn, shift)
		w.lastPage, w.lastPN = p, pn
	}
	c := th.rec(s)
	p.mu.Lock()
	if shift < p.shift { // a narrower access: refine the page
		ents := make([]entry, pageSize>>shift)
		for i := range p.ents {
			ents[i<<(p.shift-shift)] = p.ents[i]
		}
		p.ents, p.shift = ents, shift
	}
	e := &p.ents[(addr&(pageSize-1))>>p.shift]
	prev, op, race := th.b.l.check(e, c, acc)
	p.mu.Unlock()
	if race {
		th.fail(&Error{Kind: KindGlobalRace, Pos: siteOf(s), Op: accessName(acc),
			Memory: fmt.Sprintf("global memory (argument %d)", r.arg), Index: int((addr - r.lo) / r.elem),
			Other: th.b.l.party(prev, op)})
	}
}
