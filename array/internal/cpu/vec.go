package cpu

import (
	"github.com/gocu-dev/gocu/array/internal/backend"
	"github.com/gocu-dev/gocu/lowp"
)

// vec is a typed view of one block of values; exactly the slice of its
// dtype is set.
type vec struct {
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
}

func makeVec(dt backend.DType, n int) vec {
	var v vec
	switch dt {
	case backend.Float32:
		v.f32 = make([]float32, n)
	case backend.Float64:
		v.f64 = make([]float64, n)
	case backend.Int32:
		v.i32 = make([]int32, n)
	case backend.Int64:
		v.i64 = make([]int64, n)
	case backend.Uint8:
		v.u8 = make([]uint8, n)
	case backend.Bool:
		v.b = make([]bool, n)
	case backend.Int8:
		v.i8 = make([]int8, n)
	case backend.Int16:
		v.i16 = make([]int16, n)
	case backend.Uint16:
		v.u16 = make([]uint16, n)
	case backend.Uint32:
		v.u32 = make([]uint32, n)
	case backend.Uint64:
		v.u64 = make([]uint64, n)
	case backend.Float16:
		v.f16 = make([]lowp.Float16, n)
	case backend.BFloat16:
		v.bf16 = make([]lowp.BFloat16, n)
	case backend.Float8E4M3:
		v.e4m3 = make([]lowp.Float8E4M3, n)
	case backend.Float8E5M2:
		v.e5m2 = make([]lowp.Float8E5M2, n)
	}
	return v
}

func (v vec) sub(dt backend.DType, lo, hi int) vec {
	var r vec
	switch dt {
	case backend.Float32:
		r.f32 = v.f32[lo:hi]
	case backend.Float64:
		r.f64 = v.f64[lo:hi]
	case backend.Int32:
		r.i32 = v.i32[lo:hi]
	case backend.Int64:
		r.i64 = v.i64[lo:hi]
	case backend.Uint8:
		r.u8 = v.u8[lo:hi]
	case backend.Bool:
		r.b = v.b[lo:hi]
	case backend.Int8:
		r.i8 = v.i8[lo:hi]
	case backend.Int16:
		r.i16 = v.i16[lo:hi]
	case backend.Uint16:
		r.u16 = v.u16[lo:hi]
	case backend.Uint32:
		r.u32 = v.u32[lo:hi]
	case backend.Uint64:
		r.u64 = v.u64[lo:hi]
	case backend.Float16:
		r.f16 = v.f16[lo:hi]
	case backend.BFloat16:
		r.bf16 = v.bf16[lo:hi]
	case backend.Float8E4M3:
		r.e4m3 = v.e4m3[lo:hi]
	case backend.Float8E5M2:
		r.e5m2 = v.e5m2[lo:hi]
	}
	return r
}

func bufVec(b *Buffer) vec {
	return vec{f32: b.f32, f64: b.f64, i32: b.i32, i64: b.i64, u8: b.u8, b: b.b,
		i8: b.i8, i16: b.i16, u16: b.u16, u32: b.u32, u64: b.u64, f16: b.f16, bf16: b.bf16, e4m3: b.e4m3, e5m2: b.e5m2}
}

func copyVec(dt backend.DType, d, s vec) {
	switch dt {
	case backend.Float32:
		copy(d.f32, s.f32)
	case backend.Float64:
		copy(d.f64, s.f64)
	case backend.Int32:
		copy(d.i32, s.i32)
	case backend.Int64:
		copy(d.i64, s.i64)
	case backend.Uint8:
		copy(d.u8, s.u8)
	case backend.Bool:
		copy(d.b, s.b)
	case backend.Int8:
		copy(d.i8, s.i8)
	case backend.Int16:
		copy(d.i16, s.i16)
	case backend.Uint16:
		copy(d.u16, s.u16)
	case backend.Uint32:
		copy(d.u32, s.u32)
	case backend.Uint64:
		copy(d.u64, s.u64)
	case backend.Float16:
		copy(d.f16, s.f16)
	case backend.BFloat16:
		copy(d.bf16, s.bf16)
	case backend.Float8E4M3:
		copy(d.e4m3, s.e4m3)
	case backend.Float8E5M2:
		copy(d.e5m2, s.e5m2)
	}
}

// fillScalar sets every element of v to the scalar's value.
func fillScalar(v vec, s backend.Scalar) {
	switch s.DType {
	case backend.Float32:
		fill(v.f32, float32(s.F))
	case backend.Float64:
		fill(v.f64, s.F)
	case backend.Int32:
		fill(v.i32, int32(s.I))
	case backend.Int64:
		fill(v.i64, s.I)
	case backend.Uint8:
		fill(v.u8, uint8(s.I))
	case backend.Bool:
		fill(v.b, s.I != 0)
	case backend.Int8:
		fill(v.i8, int8(s.I))
	case backend.Int16:
		fill(v.i16, int16(s.I))
	case backend.Uint16:
		fill(v.u16, uint16(s.I))
	case backend.Uint32:
		fill(v.u32, uint32(s.I))
	case backend.Uint64:
		fill(v.u64, uint64(s.I))
	case backend.Float16:
		fill(v.f16, lowp.Float16FromFloat64(s.F))
	case backend.BFloat16:
		fill(v.bf16, lowp.BFloat16FromFloat64(s.F))
	case backend.Float8E4M3:
		fill(v.e4m3, lowp.Float8E4M3FromFloat64(s.F))
	case backend.Float8E5M2:
		fill(v.e5m2, lowp.Float8E5M2FromFloat64(s.F))
	}
}

func fill[T any](d []T, x T) {
	for i := range d {
		d[i] = x
	}
}

// strided walks the elements of a layout in row-major order of its shape.
type strided struct {
	shape, strides []int
	offset         int
}

// gather copies the n elements at flat positions f0.. of the layout into dst.
func gather[T any](dst, src []T, l *strided, f0 int) {
	walk(l, f0, len(dst), func(i, off, run, st int) {
		d := dst[i : i+run]
		if st == 1 {
			copy(d, src[off:off+run])
			return
		}
		for k := range d {
			d[k] = src[off]
			off += st
		}
	})
}

// scatter stores src at the flat positions f0.. of the layout in dst.
func scatter[T any](dst, src []T, l *strided, f0 int) {
	walk(l, f0, len(src), func(i, off, run, st int) {
		s := src[i : i+run]
		if st == 1 {
			copy(dst[off:off+run], s)
			return
		}
		for _, v := range s {
			dst[off] = v
			off += st
		}
	})
}

// walk calls fn for each run of consecutive flat positions f0..f0+n-1 that
// lie along the last dimension: i is the position within the block, off the
// buffer element of the run's first position, st the stride along the run.
func walk(l *strided, f0, n int, fn func(i, off, run, st int)) {
	r := len(l.shape)
	if n <= 0 {
		return
	}
	if r == 0 {
		if n > 0 {
			fn(0, l.offset, 1, 0)
		}
		return
	}
	var idxBuf [8]int
	var idx []int
	if r <= len(idxBuf) {
		idx = idxBuf[:r]
	} else {
		idx = make([]int, r)
	}
	off := l.offset
	rem := f0
	for d := r - 1; d >= 0; d-- {
		idx[d] = rem % l.shape[d]
		rem /= l.shape[d]
		off += idx[d] * l.strides[d]
	}
	last := l.shape[r-1]
	st := l.strides[r-1]
	for i := 0; i < n; {
		run := min(last-idx[r-1], n-i)
		fn(i, off, run, st)
		i += run
		off += run * st
		idx[r-1] += run
		for d := r - 1; d > 0 && idx[d] == l.shape[d]; d-- {
			off -= idx[d] * l.strides[d]
			idx[d] = 0
			idx[d-1]++
			off += l.strides[d-1]
		}
	}
}

func gatherVec(dt backend.DType, dst vec, src *Buffer, l *strided, f0 int) {
	switch dt {
	case backend.Float32:
		gather(dst.f32, src.f32, l, f0)
	case backend.Float64:
		gather(dst.f64, src.f64, l, f0)
	case backend.Int32:
		gather(dst.i32, src.i32, l, f0)
	case backend.Int64:
		gather(dst.i64, src.i64, l, f0)
	case backend.Uint8:
		gather(dst.u8, src.u8, l, f0)
	case backend.Bool:
		gather(dst.b, src.b, l, f0)
	case backend.Int8:
		gather(dst.i8, src.i8, l, f0)
	case backend.Int16:
		gather(dst.i16, src.i16, l, f0)
	case backend.Uint16:
		gather(dst.u16, src.u16, l, f0)
	case backend.Uint32:
		gather(dst.u32, src.u32, l, f0)
	case backend.Uint64:
		gather(dst.u64, src.u64, l, f0)
	case backend.Float16:
		gather(dst.f16, src.f16, l, f0)
	case backend.BFloat16:
		gather(dst.bf16, src.bf16, l, f0)
	case backend.Float8E4M3:
		gather(dst.e4m3, src.e4m3, l, f0)
	case backend.Float8E5M2:
		gather(dst.e5m2, src.e5m2, l, f0)
	}
}

func scatterVec(dt backend.DType, dst *Buffer, src vec, l *strided, f0 int) {
	switch dt {
	case backend.Float32:
		scatter(dst.f32, src.f32, l, f0)
	case backend.Float64:
		scatter(dst.f64, src.f64, l, f0)
	case backend.Int32:
		scatter(dst.i32, src.i32, l, f0)
	case backend.Int64:
		scatter(dst.i64, src.i64, l, f0)
	case backend.Uint8:
		scatter(dst.u8, src.u8, l, f0)
	case backend.Bool:
		scatter(dst.b, src.b, l, f0)
	case backend.Int8:
		scatter(dst.i8, src.i8, l, f0)
	case backend.Int16:
		scatter(dst.i16, src.i16, l, f0)
	case backend.Uint16:
		scatter(dst.u16, src.u16, l, f0)
	case backend.Uint32:
		scatter(dst.u32, src.u32, l, f0)
	case backend.Uint64:
		scatter(dst.u64, src.u64, l, f0)
	case backend.Float16:
		scatter(dst.f16, src.f16, l, f0)
	case backend.BFloat16:
		scatter(dst.bf16, src.bf16, l, f0)
	case backend.Float8E4M3:
		scatter(dst.e4m3, src.e4m3, l, f0)
	case backend.Float8E5M2:
		scatter(dst.e5m2, src.e5m2, l, f0)
	}
}
