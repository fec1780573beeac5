package cpu

import (
	"fmt"

	"github.com/gocu-dev/gocu/array/internal/backend"
	"github.com/gocu-dev/gocu/lowp"
)

// Products of the storage types, computed exactly as the GPU's tensor
// cores define them: float16, bfloat16 and 8-bit float operands are
// widened to float32 (exactly), multiplied with the float32 GEMM (products
// of these formats are exact in float32, the sums round in float32), an
// FP8 product is scaled by ScaleA·ScaleB, and the result is rounded to the
// output dtype; int8 products are exact integers (see int8Chunk), summed in
// int32. Every step uses all workers.

// lowpMatMul implements MatMul for storage-type operands.
func (b *Backend) lowpMatMul(mm *backend.MatMul) error {
	A, B, C := asBuffer(mm.A.Buf), asBuffer(mm.B.Buf), asBuffer(mm.C.Buf)
	in, out := A.dt, C.dt
	switch {
	case B.dt != in && !(in.IsFloat8() && B.dt.IsFloat8()):
		return fmt.Errorf("cpu: matmul of %v by %v", in, B.dt)
	case in == backend.Int8 && out != backend.Int32,
		in.IsFloat8() && out != backend.Float32 && out != backend.BFloat16 && out != backend.Float16,
		(in == backend.Float16 || in == backend.BFloat16) && out != in && out != backend.Float32:
		return fmt.Errorf("cpu: matmul of %v into %v", in, out)
	}
	scale := float32(1)
	for _, s := range []backend.Operand{mm.ScaleA, mm.ScaleB} {
		if s.Buf != nil {
			scale *= asBuffer(s.Buf).f32[s.Layout.Offset]
		}
	}
	offs := batchOffsets(mm)
	M, N, K := mm.M, mm.N, mm.K
	if in == backend.Int8 {
		// Through the float32 GEMM, exactly: every product of two int8 is
		// an integer of magnitude at most 2^14, so every partial sum of up
		// to int8Chunk of them is an integer below 2^24, which float32
		// holds exactly whatever the order of the additions. Longer sums
		// are cut into such chunks, added in int32.
		af := make([]float32, M*K)
		bf := make([]float32, K*N)
		cf := make([]float32, M*N)
		for t := range len(offs) / 3 {
			ao, bo, co := offs[3*t], offs[3*t+1], offs[3*t+2]
			widenInt8(b, af, A.i8, ao, M, K, mm.A.RowStride, mm.A.ColStride)
			widenInt8(b, bf, B.i8, bo, K, N, mm.B.RowStride, mm.B.ColStride)
			c := C.i32[co : co+M*N]
			clear(c)
			for p0 := 0; p0 < K || p0 == 0; p0 += int8Chunk {
				kc := min(int8Chunk, K-p0)
				chunk := backend.MatMul{M: M, N: N, K: kc,
					A: backend.Matrix{RowStride: K, ColStride: 1}, B: backend.Matrix{RowStride: N, ColStride: 1}}
				b.mm32(b.workers, &chunk, af, p0, bf, p0*N, cf, 0)
				b.parallel(M*N, serialBelow, 1, func(lo, hi int) {
					for i := lo; i < hi; i++ {
						c[i] += int32(cf[i])
					}
				})
				if K == 0 {
					break
				}
			}
		}
		return nil
	}
	af := make([]float32, M*K)
	bf := make([]float32, K*N)
	cf := make([]float32, M*N)
	flat := backend.MatMul{M: M, N: N, K: K,
		A: backend.Matrix{RowStride: K, ColStride: 1}, B: backend.Matrix{RowStride: N, ColStride: 1}}
	for t := range len(offs) / 3 {
		ao, bo, co := offs[3*t], offs[3*t+1], offs[3*t+2]
		widenMatrix(b, af, A, ao, M, K, mm.A.RowStride, mm.A.ColStride)
		widenMatrix(b, bf, B, bo, K, N, mm.B.RowStride, mm.B.ColStride)
		dst := cf
		if out == backend.Float32 {
			dst = C.f32[co : co+M*N]
		}
		b.mm32(b.workers, &flat, af, 0, bf, 0, dst, 0)
		b.parallel(M*N, serialBelow, 1, func(lo, hi int) {
			d := dst[lo:hi]
			if scale != 1 {
				for i := range d {
					d[i] *= scale
				}
			}
			switch out {
			case backend.Float16:
				lowp.FromFloat32s(C.f16[co+lo:co+hi], d)
			case backend.BFloat16:
				lowp.FromFloat32s(C.bf16[co+lo:co+hi], d)
			}
		})
	}
	return nil
}

// int8Chunk is the longest sum of int8 products float32 holds exactly:
// 1024 · 2^14 = 2^24.
const int8Chunk = 1024

// widenInt8 copies the rows×cols int8 matrix of src at off (strides rs,
// cs) into dst, row-major, as float32.
func widenInt8(b *Backend, dst []float32, src []int8, off, rows, cols, rs, cs int) {
	b.parallel(rows, max(1, serialBelow/max(cols, 1)), 1, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			d := dst[i*cols : (i+1)*cols]
			o := off + i*rs
			for j := range d {
				d[j] = float32(src[o+j*cs])
			}
		}
	})
}

// widenMatrix copies the rows×cols matrix of src at off (strides rs, cs)
// into dst, row-major, widened to float32.
func widenMatrix(b *Backend, dst []float32, src *Buffer, off, rows, cols, rs, cs int) {
	b.parallel(rows, max(1, serialBelow/max(cols, 1)), 1, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			d := dst[i*cols : (i+1)*cols]
			o := off + i*rs
			switch src.dt {
			case backend.Float16:
				widenRow(d, src.f16, o, cs)
			case backend.BFloat16:
				widenRow(d, src.bf16, o, cs)
			case backend.Float8E4M3:
				widenRow(d, src.e4m3, o, cs)
			case backend.Float8E5M2:
				widenRow(d, src.e5m2, o, cs)
			}
		}
	})
}

func widenRow[T lowp.Float](d []float32, s []T, o, cs int) {
	if cs == 1 {
		lowp.ToFloat32s(d, s[o:o+len(d)])
		return
	}
	for j := range d {
		d[j] = s[o+j*cs].Float32()
	}
}
