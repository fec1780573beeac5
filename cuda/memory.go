package cuda

import (
	"fmt"
	"log/slog"
	"reflect"
	"runtime"
	"sync"
	"sync/atomic"
	"unsafe"
)

// Memory is an allocation of device memory, or a view into one.
//
// Free it explicitly (Free, FreeOn); the garbage collector reclaims memory
// that was dropped without Free only as a backstop, at a time of its
// choosing. Any use after Free, and a second Free, return ErrFreed; they
// never crash the process.
//
// A Memory is ordered on a stream: the one given to AllocOn, or the device's
// default stream. Free is stream-ordered on it, like cudaFreeAsync: work
// already queued on that stream may still use the memory, and the caching
// allocator hands it to other streams only when that work has finished.
// Memory used on other streams too must be freed with FreeOn on a stream
// that is ordered after all those uses.
type Memory struct {
	dev     *Device
	ptr     DevicePtr
	size    int
	a       *allocation
	root    *Memory // for a view, the Memory it was taken from (kept alive)
	cleanup runtime.Cleanup
}

// allocation is the state shared by a Memory and its views; the GC
// backstop holds it, not the Memory.
type allocation struct {
	dev    *Device
	blk    *block // nil for zero bytes
	stream *Stream
	freed  atomic.Bool
}

// Alloc allocates n bytes of device memory ordered on the default stream.
// The contents are undefined.
func (d *Device) Alloc(n int) (*Memory, error) { return d.AllocOn(nil, n) }

// AllocOn allocates n bytes of device memory ordered on stream s (nil for
// the default stream): the caching allocator may hand out a block that
// work queued earlier on s was using, which stream order makes safe. With
// the cache exhausted, it empties the cache and retries once before
// returning an error matching ErrOutOfMemory.
func (d *Device) AllocOn(s *Stream, n int) (*Memory, error) {
	s, err := d.streamOrDefault(s)
	if err != nil {
		return nil, err
	}
	if err := d.Lost(); err != nil { // the cache would hand out memory of a lost context
		return nil, err
	}
	if n < 0 {
		return nil, fmt.Errorf("cuda: Alloc: negative size %d: %w", n, ErrInvalidValue)
	}
	al := &allocation{dev: d, stream: s}
	m := &Memory{dev: d, size: n, a: al}
	if n == 0 {
		return m, nil
	}
	b, err := d.alloc.alloc(s.handle, int64(n))
	if err != nil {
		return nil, err
	}
	al.blk = b
	m.ptr = DevicePtr(b.ptr)
	m.cleanup = runtime.AddCleanup(m, (*allocation).reclaim, al)
	return m, nil
}

// AllocOnNoCleanup is AllocOn without the garbage collector's backstop:
// memory dropped without Free is never reclaimed, unless the caller has
// a backstop of its own. It is for owners that already keep one per
// allocation (package array puts a cleanup on its storage objects, which
// frees their buffers), and saves them a runtime.AddCleanup per
// allocation and a Cleanup.Stop per Free. Everything else is as for
// AllocOn: Free, FreeOn, use-after-free and double-free checks.
func (d *Device) AllocOnNoCleanup(s *Stream, n int) (*Memory, error) {
	// Without a cleanup, whose argument must be a separate object, the
	// Memory and its allocation state are one allocation.
	return d.AllocInto(new(MemoryBlock), s, n)
}

// MemoryBlock is room for a Memory without a cleanup (AllocInto), inside
// an object of its owner's.
type MemoryBlock struct {
	m  Memory
	al allocation
}

// AllocInto is AllocOnNoCleanup with the Memory held in blk: the Memory
// returned is blk's, so an owner that embeds the block in an object of its
// own allocates one object for both. blk must be zero, or hold memory that
// was freed and that nobody uses any more, not even through a view: the
// owner may then recycle its object, and the Memory becomes the new
// allocation's. blk must not be copied.
func (d *Device) AllocInto(blk *MemoryBlock, s *Stream, n int) (*Memory, error) {
	s, err := d.streamOrDefault(s)
	if err != nil {
		return nil, err
	}
	if err := d.Lost(); err != nil { // the cache would hand out memory of a lost context
		return nil, err
	}
	if n < 0 {
		return nil, fmt.Errorf("cuda: Alloc: negative size %d: %w", n, ErrInvalidValue)
	}
	if blk.m.a != nil && !blk.al.freed.Load() {
		return nil, fmt.Errorf("cuda: AllocInto: the block holds memory already: %w", ErrInvalidValue)
	}
	// Field by field, pointers only where they change: a recycled block
	// keeps its device and stream (and often its block), and while the
	// collector marks, a struct assignment is a bulk write barrier.
	al, m := &blk.al, &blk.m
	setPtr(&al.dev, d)
	setPtr(&al.stream, s)
	al.freed.Store(false)
	setPtr(&m.dev, d)
	setPtr(&m.root, nil)
	m.size, m.ptr, m.cleanup = n, 0, runtime.Cleanup{}
	setPtr(&m.a, al)
	if n == 0 {
		setPtr(&al.blk, nil)
		return m, nil
	}
	b, err := d.alloc.alloc(s.handle, int64(n))
	if err != nil {
		m.a = nil
		return nil, err
	}
	setPtr(&al.blk, b)
	m.ptr = DevicePtr(b.ptr)
	return m, nil
}

// setPtr sets *p to v unless it holds v already.
func setPtr[T any](p **T, v *T) {
	if *p != v {
		*p = v
	}
}

// AllocSlice allocates device memory for n elements of type T on the
// default stream.
func AllocSlice[T any](d *Device, n int) (*Memory, error) {
	var z T
	return d.Alloc(n * int(unsafe.Sizeof(z)))
}

// reclaim is the garbage collector's backstop for memory never freed.
func (al *allocation) reclaim() {
	if !al.freed.CompareAndSwap(false, true) {
		return
	}
	if al.dev.alloc.log {
		slog.Warn("cuda: device memory dropped without Free was reclaimed by the garbage collector", "bytes", al.blk.req)
	}
	_ = al.dev.alloc.free(al.blk, al.stream.handle, al.stream.closed.Load())
}

// Free releases the memory, ordered after the work queued on its stream.
// Freeing a view is an error; freeing twice returns ErrFreed.
func (m *Memory) Free() error { return m.FreeOn(nil) }

// FreeOn releases the memory ordered on stream s instead of its own: every
// use of the memory must be ordered before the work queued on s now.
func (m *Memory) FreeOn(s *Stream) error {
	if m == nil {
		return fmt.Errorf("cuda: Free of a nil *Memory: %w", ErrInvalidValue)
	}
	if m.root != nil {
		return fmt.Errorf("cuda: Free of a view: free the Memory it was taken from: %w", ErrInvalidValue)
	}
	if s != nil && s.dev != m.dev {
		return fmt.Errorf("cuda: FreeOn: the stream belongs to %v, the memory to %v: %w", s.dev, m.dev, ErrInvalidValue)
	}
	if !m.a.freed.CompareAndSwap(false, true) {
		return fmt.Errorf("cuda: Free: %w (double free)", ErrFreed)
	}
	if m.a.blk == nil {
		return nil
	}
	m.cleanup.Stop()
	if s == nil {
		s = m.a.stream
	}
	return m.dev.alloc.free(m.a.blk, s.handle, s.closed.Load())
}

// check returns ErrFreed for memory that was freed.
func (m *Memory) check() error {
	if m.a.freed.Load() {
		return fmt.Errorf("cuda: use of device memory after Free: %w", ErrFreed)
	}
	return nil
}

// Ptr returns the device address. A DevicePtr does not keep the Memory
// alive: keep the *Memory for as long as the address is used.
func (m *Memory) Ptr() DevicePtr { return m.ptr }

// Size returns the size in bytes.
func (m *Memory) Size() int { return m.size }

// Device returns the device the memory is on.
func (m *Memory) Device() *Device { return m.dev }

// Stream returns the stream the memory is ordered on.
func (m *Memory) Stream() *Stream { return m.a.stream }

// Freed reports whether the memory (or, for a view, the memory it was taken
// from) was freed.
func (m *Memory) Freed() bool { return m.a.freed.Load() }

// View returns the size bytes at offset as a Memory that shares the
// allocation: it is valid until the allocation is freed, and cannot itself
// be freed.
func (m *Memory) View(offset, size int) (*Memory, error) {
	if err := m.check(); err != nil {
		return nil, err
	}
	if offset < 0 || size < 0 || offset+size > m.size {
		return nil, fmt.Errorf("cuda: View [%d:%d] of %d bytes is out of range: %w", offset, offset+size, m.size, ErrInvalidValue)
	}
	root := m
	if m.root != nil {
		root = m.root
	}
	return &Memory{dev: m.dev, ptr: m.ptr + DevicePtr(offset), size: size, a: m.a, root: root}, nil
}

func (m *Memory) String() string {
	return fmt.Sprintf("cuda.Memory(%#x, %d bytes, device %d)", uint64(m.ptr), m.size, m.dev.ordinal)
}

// streamOrDefault checks that s is a usable stream of d, or returns d's
// default stream for nil.
func (d *Device) streamOrDefault(s *Stream) (*Stream, error) {
	if s == nil {
		return d.stream, nil
	}
	if s.dev != d {
		return nil, fmt.Errorf("cuda: the stream belongs to %v, not %v: %w", s.dev, d, ErrInvalidValue)
	}
	if s.closed.Load() {
		return nil, fmt.Errorf("cuda: stream: %w", ErrClosed)
	}
	return s, nil
}

// pointerFree reports whether values of t hold no Go pointers (so their
// bytes may be copied to and from the device); the answer is cached.
func pointerFree(t reflect.Type) bool {
	if v, ok := pointerFreeCache.Load(t); ok {
		return v.(bool)
	}
	v := pointerFreeOf(t)
	pointerFreeCache.Store(t, v)
	return v
}

var pointerFreeCache sync.Map

func pointerFreeOf(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
		reflect.Float32, reflect.Float64, reflect.Complex64, reflect.Complex128:
		return true
	case reflect.Array:
		return pointerFreeOf(t.Elem())
	case reflect.Struct:
		for i := range t.NumField() {
			if !pointerFreeOf(t.Field(i).Type) {
				return false
			}
		}
		return true
	}
	return false
}
