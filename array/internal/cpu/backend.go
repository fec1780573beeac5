package cpu

import (
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/gocu-dev/gocu/array/internal/backend"
	"github.com/gocu-dev/gocu/lowp"
)

// Backend is the CPU backend. Its operations run synchronously on the
// calling goroutine and, above a size threshold, on one goroutine per core.
type Backend struct {
	workers int
	pool    pool
	name    string

	// Bytes of the buffers Alloc returned and Free has not taken back,
	// and their peak: what a GPU's allocator reports as in use.
	inUse, peak atomic.Int64
}

// New returns a CPU backend using GOMAXPROCS workers and a buffer pool of
// at most poolBytes bytes.
func New(poolBytes int) *Backend {
	return &Backend{workers: runtime.GOMAXPROCS(0), pool: pool{limit: poolBytes}, name: "cpu"}
}

// SetName sets the name the backend reports ("sim" for the arrays of the
// simulator device, which compute on the CPU too).
func (b *Backend) SetName(name string) { b.name = name }

// SetWorkers sets how many goroutines large operations use (at least 1).
func (b *Backend) SetWorkers(n int) { b.workers = max(n, 1) }

// Workers reports the number of goroutines large operations use.
func (b *Backend) Workers() int { return b.workers }

// Trim drops every pooled buffer.
func (b *Backend) Trim() { b.pool.trim() }

// PooledBytes reports how many bytes the pool holds.
func (b *Backend) PooledBytes() int {
	b.pool.mu.Lock()
	defer b.pool.mu.Unlock()
	return b.pool.bytes
}

// Name implements backend.Backend.
func (b *Backend) Name() string { return b.name }

// Alloc implements backend.Backend.
func (b *Backend) Alloc(dt backend.DType, n int) (backend.Buffer, error) {
	if !dt.Valid() {
		return nil, fmt.Errorf("cpu: alloc of invalid dtype")
	}
	if n < 0 {
		return nil, fmt.Errorf("cpu: alloc of %d elements", n)
	}
	if err := CheckAlloc(dt, n); err != nil {
		return nil, err
	}
	buf := b.pool.get(dt, n)
	if buf == nil {
		buf = newBuffer(dt, n)
	}
	buf.counted = true
	in := b.inUse.Add(int64(n) * int64(dt.Size()))
	for p := b.peak.Load(); in > p; p = b.peak.Load() {
		if b.peak.CompareAndSwap(p, in) {
			break
		}
	}
	return buf, nil
}

// Free implements backend.Backend.
func (b *Backend) Free(buf backend.Buffer) {
	if buf == nil {
		return
	}
	c := asBuffer(buf)
	if c.counted {
		c.counted = false
		b.inUse.Add(-int64(c.n) * int64(c.dt.Size()))
	}
	b.pool.put(c)
}

// Memory reports the bytes of the buffers allocated and not yet freed,
// and their peak since the last ResetPeak.
func (b *Backend) Memory() (inUse, peak int64) { return b.inUse.Load(), b.peak.Load() }

// ResetPeak starts the peak over from the bytes in use now.
func (b *Backend) ResetPeak() { b.peak.Store(b.inUse.Load()) }

// Write implements backend.Backend.
func (b *Backend) Write(dst backend.Buffer, off int, src any) error {
	d := asBuffer(dst)
	var n int
	switch s := src.(type) {
	case []float32:
		n = copy(d.f32[off:], s)
	case []float64:
		n = copy(d.f64[off:], s)
	case []int32:
		n = copy(d.i32[off:], s)
	case []int64:
		n = copy(d.i64[off:], s)
	case []uint8:
		n = copy(d.u8[off:], s)
	case []bool:
		n = copy(d.b[off:], s)
	case []int8:
		n = copy(d.i8[off:], s)
	case []int16:
		n = copy(d.i16[off:], s)
	case []uint16:
		n = copy(d.u16[off:], s)
	case []uint32:
		n = copy(d.u32[off:], s)
	case []uint64:
		n = copy(d.u64[off:], s)
	case []lowp.Float16:
		n = copy(d.f16[off:], s)
	case []lowp.BFloat16:
		n = copy(d.bf16[off:], s)
	case []lowp.Float8E4M3:
		n = copy(d.e4m3[off:], s)
	case []lowp.Float8E5M2:
		n = copy(d.e5m2[off:], s)
	default:
		return fmt.Errorf("cpu: write of %T", src)
	}
	if n != backend.SliceLen(src) {
		return fmt.Errorf("cpu: write of %d elements of %v at %d into %d", backend.SliceLen(src), d.dt, off, d.n)
	}
	return nil
}

// Read implements backend.Backend.
func (b *Backend) Read(dst any, src backend.Buffer, off int) error {
	s := asBuffer(src)
	var n int
	switch d := dst.(type) {
	case []float32:
		n = copy(d, s.f32[off:])
	case []float64:
		n = copy(d, s.f64[off:])
	case []int32:
		n = copy(d, s.i32[off:])
	case []int64:
		n = copy(d, s.i64[off:])
	case []uint8:
		n = copy(d, s.u8[off:])
	case []bool:
		n = copy(d, s.b[off:])
	case []int8:
		n = copy(d, s.i8[off:])
	case []int16:
		n = copy(d, s.i16[off:])
	case []uint16:
		n = copy(d, s.u16[off:])
	case []uint32:
		n = copy(d, s.u32[off:])
	case []uint64:
		n = copy(d, s.u64[off:])
	case []lowp.Float16:
		n = copy(d, s.f16[off:])
	case []lowp.BFloat16:
		n = copy(d, s.bf16[off:])
	case []lowp.Float8E4M3:
		n = copy(d, s.e4m3[off:])
	case []lowp.Float8E5M2:
		n = copy(d, s.e5m2[off:])
	default:
		return fmt.Errorf("cpu: read into %T", dst)
	}
	if n != backend.SliceLen(dst) {
		return fmt.Errorf("cpu: read of %d elements of %v at %d from %d", backend.SliceLen(dst), s.dt, off, s.n)
	}
	return nil
}

// Sync implements backend.Backend: CPU work is done when a call returns.
func (b *Backend) Sync() error { return nil }

// Poll implements backend.Backend: the CPU has no asynchronous errors.
func (b *Backend) Poll() error { return nil }

// parallel splits [0, n) into at most b.workers contiguous chunks of at
// least grain elements (chunk bounds multiples of align) and runs fn on
// each, the first on the calling goroutine.
func (b *Backend) parallel(n, grain, align int, fn func(lo, hi int)) {
	w := b.workers
	if grain < 1 {
		grain = 1
	}
	if c := n / grain; c < w {
		w = c
	}
	if w <= 1 {
		if n > 0 {
			fn(0, n)
		}
		return
	}
	if align < 1 {
		align = 1
	}
	chunk := (n + w - 1) / w
	chunk = (chunk + align - 1) / align * align
	var wg sync.WaitGroup
	for lo := chunk; lo < n; lo += chunk {
		hi := min(lo+chunk, n)
		wg.Add(1)
		go func() {
			defer wg.Done()
			fn(lo, hi)
		}()
	}
	fn(0, min(chunk, n))
	wg.Wait()
}
