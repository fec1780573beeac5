package gpu

import (
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gocu-dev/gocu/array/internal/backend"
	"github.com/gocu-dev/gocu/cuda"
	"github.com/gocu-dev/gocu/lowp"
)

// Buffer is device memory holding Len elements of one dtype.
type Buffer struct {
	mem *cuda.Memory
	ptr uint64 // device address of element 0 (0 for an empty buffer)
	dt  backend.DType
	n   int
	be  *Backend

	external bool // Wrap: memory owned by someone else, never freed here

	blk cuda.MemoryBlock // mem, for a buffer Alloc made (one allocation)

	// shared is set once mem was handed out (Memory, Reinterpret): the
	// object is then never recycled, so that a Memory kept past the free
	// keeps reporting ErrFreed.
	shared atomic.Bool
}

// bufPool holds the objects of freed buffers that nothing else refers
// to, for Alloc to reuse: an operation on a GPU then allocates no buffer
// object. A stale *Buffer, which the array layer's reference counts rule
// out, would see the new allocation.
var bufPool sync.Pool

// Wrap returns a buffer of n elements of dt over device memory that
// someone else owns (a gocu.Buffer), without a copy; Free leaves it alone.
func (b *Backend) Wrap(mem *cuda.Memory, dt backend.DType, n int) (*Buffer, error) {
	if mem == nil || mem.Device() != b.dev {
		return nil, fmt.Errorf("gpu: %s cannot wrap memory of another device", b.name)
	}
	if n < 0 || n*dt.Size() > mem.Size() {
		return nil, fmt.Errorf("gpu: %d %v elements do not fit %d bytes", n, dt, mem.Size())
	}
	return &Buffer{mem: mem, ptr: uint64(mem.Ptr()), dt: dt, n: n, be: b, external: true}, nil
}

// DType implements backend.Buffer.
func (b *Buffer) DType() backend.DType { return b.dt }

// Len implements backend.Buffer.
func (b *Buffer) Len() int { return b.n }

// Ptr returns the device address of element 0.
func (b *Buffer) Ptr() cuda.DevicePtr { return cuda.DevicePtr(b.ptr) }

// Memory returns the device memory.
func (b *Buffer) Memory() *cuda.Memory {
	if !b.shared.Load() {
		b.shared.Store(true)
	}
	return b.mem
}

// Buffer returns x as a buffer of this backend, or why it is not one.
func (b *Backend) Buffer(x backend.Buffer) (*Buffer, error) { return b.buf(x) }

// buf checks that a backend.Buffer is one of this backend's.
func (b *Backend) buf(x backend.Buffer) (*Buffer, error) {
	g, ok := x.(*Buffer)
	if !ok || g.be != b {
		return nil, fmt.Errorf("gpu: %s was given a buffer of another device (%T)", b.name, x)
	}
	if g.mem != nil && g.mem.Freed() {
		return nil, fmt.Errorf("gpu: %s: buffer used after it was freed: %w", b.name, cuda.ErrFreed)
	}
	b.touch(g) // a capture under way keeps it for its graph
	return g, nil
}

// Alloc implements backend.Backend. Memory comes from the device's caching
// allocator, ordered on the backend's stream. When the device is full it
// runs the garbage collector so that the cleanups of unreachable arrays
// free their memory, returns the cache to the driver and tries once more.
//
// The memory has no garbage-collector backstop of its own
// (cuda.Device.AllocInto, the Memory held in the Buffer): the caller
// frees every buffer, and package array's storages, which own them, carry
// the backstop.
func (b *Backend) Alloc(dt backend.DType, n int) (backend.Buffer, error) {
	if err := b.failed(); err != nil {
		return nil, err
	}
	if n < 0 || (dt.Size() > 0 && n > (1<<62)/dt.Size()) {
		return nil, fmt.Errorf("gpu: allocation of %d %v elements", n, dt)
	}
	bytes := n * dt.Size()
	g, _ := bufPool.Get().(*Buffer)
	if g == nil {
		g = new(Buffer)
	}
	g.dt, g.n = dt, n
	if g.be != b { // a recycled object is usually this backend's
		g.be = b
	}
	mem, err := b.dev.AllocInto(&g.blk, b.stream, bytes)
	if err != nil && errors.Is(err, cuda.ErrOutOfMemory) && !b.capturing() { // the retry waits for the device
		collectGarbage()
		b.Trim()
		mem, err = b.dev.AllocInto(&g.blk, b.stream, bytes)
	}
	if err != nil {
		if errors.Is(err, cuda.ErrOutOfMemory) {
			st := b.dev.Allocator().Stats()
			return nil, fmt.Errorf("%w: %s: %d bytes (%d × %v) requested, %d in use, %d reserved: %w",
				backend.ErrOutOfMemory, b.name, bytes, n, dt, st.InUse, st.Reserved, err)
		}
		return nil, b.note(err)
	}
	if g.mem != mem {
		g.mem = mem
	}
	g.ptr = uint64(mem.Ptr())
	b.touch(g)
	b.pace.alloc(int64(bytes))
	return g, nil
}

// collectGarbage runs the collector and waits (briefly) for the cleanups
// it queued: cleanups of unreachable arrays free device memory. A cleanup
// of our own marks the point; cleanups run concurrently in Go 1.25 and
// later, so a little more time is given to the others.
func collectGarbage() {
	collectAndWait(200 * time.Millisecond)
	runtime.Gosched()
	time.Sleep(2 * time.Millisecond)
	runtime.GC()
}

// collectAndWait runs the collector and waits, at most wait, for a
// cleanup of its own that the collection queued: a mark that the
// cleanups of unreachable arrays have had their turn.
func collectAndWait(wait time.Duration) {
	done := make(chan struct{})
	func() {
		marker := new([16]byte)
		runtime.AddCleanup(marker, func(c chan struct{}) { close(c) }, done)
	}()
	runtime.GC()
	select {
	case <-done:
	case <-time.After(wait):
	}
}

// Free implements backend.Backend: the memory returns to the allocator,
// ordered after the work queued on the stream (cuda's stream-ordered free),
// so it is safe from any goroutine, cleanups included.
func (b *Backend) Free(x backend.Buffer) {
	g, ok := x.(*Buffer)
	if !ok || g.mem == nil || g.external {
		return
	}
	if g.mem.Freed() {
		return
	}
	b.pace.free(int64(g.n * g.dt.Size()))
	if b.deferFree(g) { // a graph still uses it
		return
	}
	if g.mem.Free() == nil && !g.shared.Load() && !b.graphsLive() {
		// Alloc made it (not external), nothing else refers to it: its
		// memory reads as freed until Alloc reuses the object.
		bufPool.Put(g)
	}
}

// view returns the bytes [off, off+n) of g (in elements) as a cuda.Memory.
func (g *Buffer) view(off, n int) (*cuda.Memory, error) {
	s := g.dt.Size()
	if off < 0 || n < 0 || off+n > g.n {
		return nil, fmt.Errorf("gpu: elements [%d, %d) of a buffer of %d", off, off+n, g.n)
	}
	if off == 0 && n == g.n {
		return g.mem, nil
	}
	return g.mem.View(off*s, n*s)
}

// Write implements backend.Backend: the copy is queued on the stream
// (the driver stages pageable memory, so src may be reused at once).
func (b *Backend) Write(dst backend.Buffer, off int, src any) error {
	if err := b.failed(); err != nil {
		return err
	}
	if b.capturing() {
		return b.captureErr("copying host data to the device")
	}
	g, err := b.buf(dst)
	if err != nil {
		return err
	}
	n := backend.SliceLen(src)
	if n < 0 || hostDType(src) != g.dt {
		return fmt.Errorf("gpu: Write of %T into a %v buffer", src, g.dt)
	}
	if n == 0 {
		return nil
	}
	m, err := g.view(off, n)
	if err != nil {
		return err
	}
	switch s := src.(type) {
	case []float32:
		err = cuda.CopyHtoDAsync(m, s, b.stream)
	case []float64:
		err = cuda.CopyHtoDAsync(m, s, b.stream)
	case []int32:
		err = cuda.CopyHtoDAsync(m, s, b.stream)
	case []int64:
		err = cuda.CopyHtoDAsync(m, s, b.stream)
	case []uint8:
		err = cuda.CopyHtoDAsync(m, s, b.stream)
	case []bool:
		err = cuda.CopyHtoDAsync(m, s, b.stream)
	case []int8:
		err = cuda.CopyHtoDAsync(m, s, b.stream)
	case []int16:
		err = cuda.CopyHtoDAsync(m, s, b.stream)
	case []uint16:
		err = cuda.CopyHtoDAsync(m, s, b.stream)
	case []uint32:
		err = cuda.CopyHtoDAsync(m, s, b.stream)
	case []uint64:
		err = cuda.CopyHtoDAsync(m, s, b.stream)
	case []lowp.Float16:
		err = cuda.CopyHtoDAsync(m, s, b.stream)
	case []lowp.BFloat16:
		err = cuda.CopyHtoDAsync(m, s, b.stream)
	case []lowp.Float8E4M3:
		err = cuda.CopyHtoDAsync(m, s, b.stream)
	case []lowp.Float8E5M2:
		err = cuda.CopyHtoDAsync(m, s, b.stream)
	}
	return b.note(err)
}

// Read implements backend.Backend: it waits for the work queued before it.
func (b *Backend) Read(dst any, src backend.Buffer, off int) error {
	if err := b.failed(); err != nil {
		return err
	}
	if b.capturing() {
		return b.captureErr("reading an array to the host")
	}
	g, err := b.buf(src)
	if err != nil {
		return err
	}
	n := backend.SliceLen(dst)
	if n < 0 || hostDType(dst) != g.dt {
		return fmt.Errorf("gpu: Read of a %v buffer into %T", g.dt, dst)
	}
	b.syncs.Add(1)
	if n == 0 {
		if err := b.note(b.stream.Synchronize()); err != nil {
			return err
		}
		return b.ixCheck()
	}
	m, err := g.view(off, n)
	if err != nil {
		return err
	}
	switch d := dst.(type) {
	case []float32:
		err = cuda.CopyDtoHAsync(d, m, b.stream)
	case []float64:
		err = cuda.CopyDtoHAsync(d, m, b.stream)
	case []int32:
		err = cuda.CopyDtoHAsync(d, m, b.stream)
	case []int64:
		err = cuda.CopyDtoHAsync(d, m, b.stream)
	case []uint8:
		err = cuda.CopyDtoHAsync(d, m, b.stream)
	case []bool:
		err = cuda.CopyDtoHAsync(d, m, b.stream)
	case []int8:
		err = cuda.CopyDtoHAsync(d, m, b.stream)
	case []int16:
		err = cuda.CopyDtoHAsync(d, m, b.stream)
	case []uint16:
		err = cuda.CopyDtoHAsync(d, m, b.stream)
	case []uint32:
		err = cuda.CopyDtoHAsync(d, m, b.stream)
	case []uint64:
		err = cuda.CopyDtoHAsync(d, m, b.stream)
	case []lowp.Float16:
		err = cuda.CopyDtoHAsync(d, m, b.stream)
	case []lowp.BFloat16:
		err = cuda.CopyDtoHAsync(d, m, b.stream)
	case []lowp.Float8E4M3:
		err = cuda.CopyDtoHAsync(d, m, b.stream)
	case []lowp.Float8E5M2:
		err = cuda.CopyDtoHAsync(d, m, b.stream)
	}
	if err == nil {
		// A copy into pageable memory has finished when the call returns;
		// the synchronisation reports faults of earlier kernels and makes
		// the ordering explicit.
		err = b.stream.Synchronize()
	}
	if err = b.note(err); err == nil {
		err = b.ixCheck() // an index out of range found by a kernel
	}
	return err
}

func hostDType(s any) backend.DType {
	switch s.(type) {
	case []float32:
		return backend.Float32
	case []float64:
		return backend.Float64
	case []int32:
		return backend.Int32
	case []int64:
		return backend.Int64
	case []uint8:
		return backend.Uint8
	case []bool:
		return backend.Bool
	case []int8:
		return backend.Int8
	case []int16:
		return backend.Int16
	case []uint16:
		return backend.Uint16
	case []uint32:
		return backend.Uint32
	case []uint64:
		return backend.Uint64
	case []lowp.Float16:
		return backend.Float16
	case []lowp.BFloat16:
		return backend.BFloat16
	case []lowp.Float8E4M3:
		return backend.Float8E4M3
	case []lowp.Float8E5M2:
		return backend.Float8E5M2
	}
	return backend.Invalid
}
