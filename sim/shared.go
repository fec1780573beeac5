package sim

import (
	"fmt"
	"reflect"
	"unsafe"

	"github.com/gocu-dev/gocu/kernel"
)

// poison is the byte fresh shared memory is filled with: 0xFF makes every
// float32 and float64 a NaN and every integer -1 or its maximum, so that a
// read before any write shows up in results even without checked mode.
const poison = 0xFF

// arenaSlack leaves room for the 16-byte alignment of each static
// declaration beyond the limit on their sizes.
const arenaSlack = 16 * 64

// An arena is one worker's shared memory, reused by each block it runs:
// dynamic shared memory first, then the static declarations in the order
// the block executes them, each 16-byte aligned (the alignment of CUDA's
// widest vector types). It holds no pointers, so it is plain []uint64 to
// the garbage collector.
type arena struct {
	mem  []uint64
	buf  []byte // 16-byte aligned view of mem
	base uintptr
	dyn  uintptr // bytes of dynamic shared memory at the start of buf, rounded up to 16
}

func (a *arena) init(dynBytes, staticMax int) {
	dyn := (uintptr(dynBytes) + 15) &^ 15
	size := dyn + uintptr(staticMax) + arenaSlack
	a.mem = make([]uint64, (size+16)/8)
	p := unsafe.Pointer(unsafe.SliceData(a.mem))
	skip := (16 - uintptr(p)%16) % 16
	a.buf = unsafe.Slice((*byte)(unsafe.Add(p, skip)), size)
	a.base = uintptr(unsafe.Pointer(unsafe.SliceData(a.buf)))
	a.dyn = dyn
}

// A decl is one static shared declaration of the running block.
type decl struct {
	typ  reflect.Type
	off  uintptr
	size uintptr
	ptr  unsafe.Pointer
	pcs  site  // where it was first executed
	rank int32 // by which thread
}

func (b *block) resetShared() {
	b.decls = b.decls[:0]
	b.static = 0
	b.next = b.w.arena.dyn
	if d := b.l.dyn; d > 0 {
		fill(b.w.arena.buf[:d])
	}
}

func fill(p []byte) {
	for i := range p {
		p[i] = poison
	}
}

// Shared implements kernel.Executor.
func (th *thread) Shared(_ *kernel.Thread, d kernel.SharedDecl) unsafe.Pointer {
	b := th.b
	k := th.nShared
	th.nShared++
	if int(k) < len(b.decls) {
		if dc := &b.decls[k]; dc.typ == d.Type {
			return dc.ptr
		}
		var pcs site
		if useFP {
			fpCallers(&pcs)
		} else {
			slowCallers(&pcs)
		}
		dc := &b.decls[k]
		th.fail(&Error{Kind: KindSharedDecl, Pos: posOf(pcs[:]), Op: "Shared",
			Msg: fmt.Sprintf("shared declaration #%d is %s here, but thread %s declared %s at %s; every thread of a block must execute the same shared declarations in the same order",
				k, typeName(d.Type), dim(b.threadCoord(dc.rank)), typeName(dc.typ), posOf(dc.pcs[:]).short()),
			Other: &Party{Block: b.coord, Thread: b.threadCoord(dc.rank), Pos: posOf(dc.pcs[:]), Op: "Shared"}})
	}
	var pcs site
	if useFP {
		fpCallers(&pcs)
	} else {
		slowCallers(&pcs)
	}
	return b.declare(th, d.Type, pcs)
}

// declare allocates the block's next static shared declaration.
func (b *block) declare(th *thread, t reflect.Type, pcs site) unsafe.Pointer {
	if t == nil || t.Kind() != reflect.Array && t.Kind() != reflect.Struct {
		th.fail(&Error{Kind: KindUsage, Pos: posOf(pcs[:]), Op: "Shared",
			Msg: fmt.Sprintf("kernel.Shared needs an array or struct type such as [256]float32, not %s", typeName(t))})
	}
	if bad := plainType(t); bad != "" {
		th.fail(&Error{Kind: KindUsage, Pos: posOf(pcs[:]), Op: "Shared",
			Msg: fmt.Sprintf("kernel.Shared[%s]: shared memory holds plain values only, not %s", t, bad)})
	}
	size := t.Size()
	lim := &b.l.lim
	if b.static+size > uintptr(lim.MaxStaticShared) {
		th.fail(&Error{Kind: KindLimit, Pos: posOf(pcs[:]), Op: "Shared",
			Msg: fmt.Sprintf("static shared memory of the block reaches %d bytes with this %s, beyond the %d-byte limit of %s",
				b.static+size, t, lim.MaxStaticShared, lim.Name)})
	}
	if tot := b.static + size + uintptr(b.l.dyn); tot > uintptr(lim.MaxShared) {
		th.fail(&Error{Kind: KindLimit, Pos: posOf(pcs[:]), Op: "Shared",
			Msg: fmt.Sprintf("static (%d bytes with this %s) plus dynamic (%d bytes) shared memory exceed the %d-byte limit of %s",
				b.static+size, t, b.l.dyn, lim.MaxShared, lim.Name)})
	}
	a := &b.w.arena
	if a.buf == nil {
		a.init(0, lim.MaxStaticShared)
	}
	off := (b.next + 15) &^ 15
	if off+size > uintptr(len(a.buf)) {
		th.fail(&Error{Kind: KindLimit, Pos: posOf(pcs[:]), Op: "Shared",
			Msg: fmt.Sprintf("too many shared declarations (%d) for the simulator's arena", len(b.decls)+1)})
	}
	fill(a.buf[off : off+size])
	p := unsafe.Pointer(unsafe.SliceData(a.buf[off:]))
	b.decls = append(b.decls, decl{typ: t, off: off, size: size, ptr: p, pcs: pcs, rank: th.rank})
	b.static += size
	b.next = off + size
	return p
}

// DynamicShared implements kernel.Executor.
func (th *thread) DynamicShared(_ *kernel.Thread) []byte {
	b := th.b
	if b.l.dyn == 0 {
		return nil
	}
	return b.w.arena.buf[:b.l.dyn:b.l.dyn]
}

// plainType returns "" if t holds no pointers (numbers, bools, arrays and
// structs of them), or the offending type.
func plainType(t reflect.Type) string {
	switch t.Kind() {
	case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64,
		reflect.Float32, reflect.Float64, reflect.Complex64, reflect.Complex128:
		return ""
	case reflect.Array:
		return plainType(t.Elem())
	case reflect.Struct:
		for i := range t.NumField() {
			if s := plainType(t.Field(i).Type); s != "" {
				return s
			}
		}
		return ""
	}
	return t.String()
}

func typeName(t reflect.Type) string {
	if t == nil {
		return "<nil>"
	}
	return t.String()
}

// sharedMemory names the shared memory at arena offset off, and returns the
// offset of the start of that memory and its type (nil for dynamic shared
// memory).
func (b *block) sharedMemory(off uintptr) (string, uintptr, reflect.Type) {
	if off < b.w.arena.dyn {
		return "dynamic shared memory", 0, nil
	}
	for k := range b.decls {
		d := &b.decls[k]
		if off >= d.off && off < d.off+d.size {
			return fmt.Sprintf("shared %s #%d", d.typ, k), d.off, d.typ
		}
	}
	return "shared memory", off, nil
}

// elemPath renders the element of array or struct type t at byte offset
// off, of the given size, as Go indices and fields such as "[3][2]" or
// ".Sum"; "" if it is not one.
func elemPath(t reflect.Type, off, size uintptr) string {
	path := ""
	for t != nil && t.Size() > size {
		switch t.Kind() {
		case reflect.Array:
			es := t.Elem().Size()
			if es == 0 {
				return ""
			}
			path += fmt.Sprintf("[%d]", off/es)
			off %= es
			t = t.Elem()
			continue
		case reflect.Struct:
			found := false
			for i := range t.NumField() {
				f := t.Field(i)
				if off >= f.Offset && off < f.Offset+f.Type.Size() {
					path += "." + f.Name
					off -= f.Offset
					t = f.Type
					found = true
					break
				}
			}
			if found {
				continue
			}
		}
		return ""
	}
	if off != 0 || path == "" {
		return ""
	}
	return path
}
