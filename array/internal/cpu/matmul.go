package cpu

import (
	"fmt"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/gonum"

	"github.com/gocu-dev/gocu/array/internal/backend"
)

// MatMul implements backend.Backend. float32 and float64 use the packed
// GEMM (gonum's BLAS on machines without AVX2/FMA); integer and bool
// products use a plain loop in the element type (integers wrap; bool is
// the OR of ANDs, as NumPy).
func (b *Backend) MatMul(mm *backend.MatMul) error {
	nb := backend.Size(mm.Batch)
	if nb == 0 || mm.M == 0 || mm.N == 0 {
		return nil
	}
	A, B, C := asBuffer(mm.A.Buf), asBuffer(mm.B.Buf), asBuffer(mm.C.Buf)
	dt := A.dt
	if dt.IsStorage() {
		return b.lowpMatMul(mm)
	}
	if B.dt != dt || C.dt != dt {
		return fmt.Errorf("cpu: matmul of %v, %v into %v", A.dt, B.dt, C.dt)
	}
	offs := batchOffsets(mm)
	// Many or small matrices: one goroutine per range of batches. A few
	// big ones: one after the other, each on all workers.
	per, grain := 1, 1
	if mm.M*mm.N*mm.K >= 1<<18 && nb < 4*b.workers {
		per, grain = b.workers, nb
	}
	b.parallel(nb, grain, 1, func(lo, hi int) {
		for t := lo; t < hi; t++ {
			ao, bo, co := offs[3*t], offs[3*t+1], offs[3*t+2]
			switch dt {
			case backend.Float32:
				b.mm32(per, mm, A.f32, ao, B.f32, bo, C.f32, co)
			case backend.Float64:
				b.mm64(per, mm, A.f64, ao, B.f64, bo, C.f64, co)
			case backend.Int32:
				mmLoop(mm, A.i32, ao, B.i32, bo, C.i32, co)
			case backend.Int64:
				mmLoop(mm, A.i64, ao, B.i64, bo, C.i64, co)
			case backend.Uint8:
				mmLoop(mm, A.u8, ao, B.u8, bo, C.u8, co)
			case backend.Bool:
				mmBool(mm, A.b, ao, B.b, bo, C.b, co)
			}
		}
	})
	return nil
}

// batchOffsets lists, per batch index in row-major order, the element
// offsets of A, B and C.
func batchOffsets(mm *backend.MatMul) []int {
	nb := backend.Size(mm.Batch)
	offs := make([]int, 0, 3*nb)
	idx := make([]int, len(mm.Batch))
	for t := 0; t < nb; t++ {
		ao, bo := mm.A.Offset, mm.B.Offset
		for d, i := range idx {
			ao += i * mm.A.BatchStrides[d]
			bo += i * mm.B.BatchStrides[d]
		}
		offs = append(offs, ao, bo, mm.C.Offset+t*mm.M*mm.N)
		for d := len(idx) - 1; d >= 0; d-- {
			idx[d]++
			if idx[d] < mm.Batch[d] {
				break
			}
			idx[d] = 0
		}
	}
	return offs
}

func (b *Backend) mm32(workers int, mm *backend.MatMul, a []float32, ao int, bb []float32, bo int, c []float32, co int) {
	if hasGemmKernel {
		gemm(workers, sGeom, sKernel, mm.M, mm.N, mm.K,
			mat[float32]{a, ao, mm.A.RowStride, mm.A.ColStride},
			mat[float32]{bb, bo, mm.B.RowStride, mm.B.ColStride}, c, co, mm.N)
		return
	}
	ta, lda := blasTrans(mm.A)
	tb, ldb := blasTrans(mm.B)
	if mm.K == 0 {
		clear(c[co : co+mm.M*mm.N])
		return
	}
	gonum.Implementation{}.Sgemm(ta, tb, mm.M, mm.N, mm.K, 1, a[ao:], lda, bb[bo:], ldb, 0, c[co:], mm.N)
}

func (b *Backend) mm64(workers int, mm *backend.MatMul, a []float64, ao int, bb []float64, bo int, c []float64, co int) {
	if hasGemmKernel {
		gemm(workers, dGeom, dKernel, mm.M, mm.N, mm.K,
			mat[float64]{a, ao, mm.A.RowStride, mm.A.ColStride},
			mat[float64]{bb, bo, mm.B.RowStride, mm.B.ColStride}, c, co, mm.N)
		return
	}
	ta, lda := blasTrans(mm.A)
	tb, ldb := blasTrans(mm.B)
	if mm.K == 0 {
		clear(c[co : co+mm.M*mm.N])
		return
	}
	gonum.Implementation{}.Dgemm(ta, tb, mm.M, mm.N, mm.K, 1, a[ao:], lda, bb[bo:], ldb, 0, c[co:], mm.N)
}

func blasTrans(m backend.Matrix) (blas.Transpose, int) {
	if m.Trans() {
		return blas.Trans, m.LD()
	}
	return blas.NoTrans, m.LD()
}

func mmLoop[T number](mm *backend.MatMul, a []T, ao int, b []T, bo int, c []T, co int) {
	for i := 0; i < mm.M; i++ {
		row := c[co+i*mm.N : co+(i+1)*mm.N]
		clear(row)
		for p := 0; p < mm.K; p++ {
			x := a[ao+i*mm.A.RowStride+p*mm.A.ColStride]
			if x == 0 {
				continue
			}
			base := bo + p*mm.B.RowStride
			for j := range row {
				row[j] += x * b[base+j*mm.B.ColStride]
			}
		}
	}
}

func mmBool(mm *backend.MatMul, a []bool, ao int, b []bool, bo int, c []bool, co int) {
	for i := 0; i < mm.M; i++ {
		row := c[co+i*mm.N : co+(i+1)*mm.N]
		clear(row)
		for p := 0; p < mm.K; p++ {
			if !a[ao+i*mm.A.RowStride+p*mm.A.ColStride] {
				continue
			}
			base := bo + p*mm.B.RowStride
			for j := range row {
				row[j] = row[j] || b[base+j*mm.B.ColStride]
			}
		}
	}
}
