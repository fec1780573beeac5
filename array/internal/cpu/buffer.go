package cpu

import (
	"fmt"
	"sync"

	"github.com/gocu-dev/gocu/array/internal/backend"
	"github.com/gocu-dev/gocu/lowp"
)

// Buffer is host memory of one dtype; exactly one of the slices is set.
type Buffer struct {
	dt  backend.DType
	n   int
	f32 []float32
	f64 []float64
	i32 []int32
	i64 []int64
	u8  []uint8
	b   []bool
	// Storage types.
	i8   []int8
	i16  []int16
	u16  []uint16
	u32  []uint32
	u64  []uint64
	f16  []lowp.Float16
	bf16 []lowp.BFloat16
	e4m3 []lowp.Float8E4M3
	e5m2 []lowp.Float8E5M2

	external bool // Wrap: memory owned by someone else, never pooled
	counted  bool // handed out by Alloc and not yet freed
}

// Wrap returns a buffer over the typed slice s ([]float32, ..., []bool),
// without a copy. Its memory is never pooled: whoever made s owns it.
func Wrap(s any) (*Buffer, error) {
	b := &Buffer{external: true}
	switch v := s.(type) {
	case []float32:
		b.dt, b.n, b.f32 = backend.Float32, len(v), v
	case []float64:
		b.dt, b.n, b.f64 = backend.Float64, len(v), v
	case []int32:
		b.dt, b.n, b.i32 = backend.Int32, len(v), v
	case []int64:
		b.dt, b.n, b.i64 = backend.Int64, len(v), v
	case []uint8:
		b.dt, b.n, b.u8 = backend.Uint8, len(v), v
	case []bool:
		b.dt, b.n, b.b = backend.Bool, len(v), v
	case []int8:
		b.dt, b.n, b.i8 = backend.Int8, len(v), v
	case []int16:
		b.dt, b.n, b.i16 = backend.Int16, len(v), v
	case []uint16:
		b.dt, b.n, b.u16 = backend.Uint16, len(v), v
	case []uint32:
		b.dt, b.n, b.u32 = backend.Uint32, len(v), v
	case []uint64:
		b.dt, b.n, b.u64 = backend.Uint64, len(v), v
	case []lowp.Float16:
		b.dt, b.n, b.f16 = backend.Float16, len(v), v
	case []lowp.BFloat16:
		b.dt, b.n, b.bf16 = backend.BFloat16, len(v), v
	case []lowp.Float8E4M3:
		b.dt, b.n, b.e4m3 = backend.Float8E4M3, len(v), v
	case []lowp.Float8E5M2:
		b.dt, b.n, b.e5m2 = backend.Float8E5M2, len(v), v
	default:
		return nil, fmt.Errorf("cpu: cannot wrap a %T", s)
	}
	return b, nil
}

// DType implements backend.Buffer.
func (b *Buffer) DType() backend.DType { return b.dt }

// Len implements backend.Buffer.
func (b *Buffer) Len() int { return b.n }

func newBuffer(dt backend.DType, n int) *Buffer {
	b := &Buffer{dt: dt, n: n}
	switch dt {
	case backend.Float32:
		b.f32 = make([]float32, n)
	case backend.Float64:
		b.f64 = make([]float64, n)
	case backend.Int32:
		b.i32 = make([]int32, n)
	case backend.Int64:
		b.i64 = make([]int64, n)
	case backend.Uint8:
		b.u8 = make([]uint8, n)
	case backend.Bool:
		b.b = make([]bool, n)
	case backend.Int8:
		b.i8 = make([]int8, n)
	case backend.Int16:
		b.i16 = make([]int16, n)
	case backend.Uint16:
		b.u16 = make([]uint16, n)
	case backend.Uint32:
		b.u32 = make([]uint32, n)
	case backend.Uint64:
		b.u64 = make([]uint64, n)
	case backend.Float16:
		b.f16 = make([]lowp.Float16, n)
	case backend.BFloat16:
		b.bf16 = make([]lowp.BFloat16, n)
	case backend.Float8E4M3:
		b.e4m3 = make([]lowp.Float8E4M3, n)
	case backend.Float8E5M2:
		b.e5m2 = make([]lowp.Float8E5M2, n)
	case backend.Complex64:
		b.f32 = make([]float32, 2*n) // (re, im) pairs: see Reinterpret
	case backend.Complex128:
		b.f64 = make([]float64, 2*n)
	}
	return b
}

// Poison fills the buffer with 0xFF bytes (NaN for floats, -1 for signed
// integers, 255 for uint8); bool, which Go requires to be 0 or 1, is false.
func (b *Buffer) Poison() {
	if b.dt == backend.Bool {
		clear(b.b) // a bool must hold 0 or 1 in Go
		return
	}
	p := b.rawBytes()
	for i := range p {
		p[i] = 0xFF
	}
}

// Slice returns the buffer's typed slice ([]float32, ..., []bool; []int8,
// []int16, []uint16, []uint32, []uint64,
// []lowp.Float16, []lowp.BFloat16, []lowp.Float8E4M3, []lowp.Float8E5M2).
func (b *Buffer) Slice() any {
	switch b.dt {
	case backend.Int8:
		return b.i8
	case backend.Int16:
		return b.i16
	case backend.Uint16:
		return b.u16
	case backend.Uint32:
		return b.u32
	case backend.Uint64:
		return b.u64
	case backend.Float16:
		return b.f16
	case backend.BFloat16:
		return b.bf16
	case backend.Float8E4M3:
		return b.e4m3
	case backend.Float8E5M2:
		return b.e5m2
	case backend.Float32:
		return b.f32
	case backend.Float64:
		return b.f64
	case backend.Int32:
		return b.i32
	case backend.Int64:
		return b.i64
	case backend.Uint8:
		return b.u8
	case backend.Bool:
		return b.b
	}
	return nil
}

// pool keeps freed large buffers for reuse: a fresh Go allocation of tens
// of megabytes costs a page fault per 4 KiB on first touch, which halves the
// speed of a memory-bound operation; a reused buffer is already mapped.
// Buffers are matched by dtype and exact length (array programs tend to
// allocate the same shapes over and over).
type pool struct {
	mu    sync.Mutex
	free  map[poolKey][]*Buffer
	bytes int
	limit int
}

type poolKey struct {
	dt backend.DType
	n  int
}

// minPooled is the smallest buffer (bytes) worth pooling; smaller ones are
// cheap to allocate and left to the garbage collector.
const minPooled = 64 << 10

func (p *pool) get(dt backend.DType, n int) *Buffer {
	if n*dt.Size() < minPooled {
		return nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	k := poolKey{dt, n}
	l := p.free[k]
	if len(l) == 0 {
		return nil
	}
	b := l[len(l)-1]
	l[len(l)-1] = nil
	p.free[k] = l[:len(l)-1]
	p.bytes -= n * dt.Size()
	return b
}

func (p *pool) put(b *Buffer) {
	sz := b.n * b.dt.Size()
	if sz < minPooled || b.external {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.bytes+sz > p.limit {
		return
	}
	if p.free == nil {
		p.free = map[poolKey][]*Buffer{}
	}
	k := poolKey{b.dt, b.n}
	p.free[k] = append(p.free[k], b)
	p.bytes += sz
}

func (p *pool) trim() {
	p.mu.Lock()
	p.free = nil
	p.bytes = 0
	p.mu.Unlock()
}

func asBuffer(b backend.Buffer) *Buffer {
	cb, ok := b.(*Buffer)
	if !ok {
		panic(fmt.Sprintf("cpu: foreign buffer %T", b))
	}
	return cb
}
