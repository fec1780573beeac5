package cublas

import "github.com/gocu-dev/gocu/internal/dynlib"

// Matrices are column-major, as in cuBLAS and Fortran: element (i, j) of a
// matrix with leading dimension ld is at index i + j*ld. Device pointers are
// CUdeviceptr values.
//
// Row-major data (Go's and C's natural layout) is handled without copies by
// computing the transpose: for row-major A (m×k), B (k×n) and C (m×n), C = A·B
// is, column-major, Cᵀ = Bᵀ·Aᵀ, and a row-major matrix read column-major is
// its transpose. So call
//
//	h.Sgemm(NoTrans, NoTrans, n, m, k, alpha, B, n, A, k, beta, C, n)
//
// that is: swap the operands, swap m and n, and use the row lengths as
// leading dimensions.

// Sgemm computes C = alpha·op(A)·op(B) + beta·C in float32, with op(A) m×k,
// op(B) k×n and C m×n (cublasSgemm_v2). When beta is 0, C is not read.
func (h *Handle) Sgemm(ta, tb Op, m, n, k int, alpha float32, a uint64, lda int, b uint64, ldb int, beta float32, c uint64, ldc int) error {
	const fn = "cublasSgemm_v2"
	if err := checkGemm(fn, ta, tb, m, n, k, lda, ldb, ldc, a, b, c); err != nil {
		return err
	}
	if err := h.lock(); err != nil {
		return err
	}
	defer h.mu.Unlock()
	pa, pb := h.scalars(scalarFloat, float64(alpha), float64(beta))
	return check(fn, Status(dynlib.Call(h.l.sgemm, h.h, uintptr(ta), uintptr(tb), i32(m), i32(n), i32(k),
		pa, uintptr(a), i32(lda), uintptr(b), i32(ldb), pb, uintptr(c), i32(ldc))))
}

// Dgemm is Sgemm in float64 (cublasDgemm_v2).
func (h *Handle) Dgemm(ta, tb Op, m, n, k int, alpha float64, a uint64, lda int, b uint64, ldb int, beta float64, c uint64, ldc int) error {
	const fn = "cublasDgemm_v2"
	if err := checkGemm(fn, ta, tb, m, n, k, lda, ldb, ldc, a, b, c); err != nil {
		return err
	}
	if err := h.lock(); err != nil {
		return err
	}
	defer h.mu.Unlock()
	pa, pb := h.scalars(scalarDouble, alpha, beta)
	return check(fn, Status(dynlib.Call(h.l.dgemm, h.h, uintptr(ta), uintptr(tb), i32(m), i32(n), i32(k),
		pa, uintptr(a), i32(lda), uintptr(b), i32(ldb), pb, uintptr(c), i32(ldc))))
}

// SgemmStridedBatched computes batch independent Sgemms; matrix i of A
// starts strideA elements after matrix i-1, likewise B and C
// (cublasSgemmStridedBatched). A stride of 0 reuses one matrix for the whole
// batch.
func (h *Handle) SgemmStridedBatched(ta, tb Op, m, n, k int, alpha float32, a uint64, lda int, strideA int64, b uint64, ldb int, strideB int64, beta float32, c uint64, ldc int, strideC int64, batch int) error {
	const fn = "cublasSgemmStridedBatched"
	if err := checkGemm(fn, ta, tb, m, n, k, lda, ldb, ldc, a, b, c); err != nil {
		return err
	}
	if err := checkBatch(fn, m, n, ldc, strideA, strideB, strideC, batch); err != nil {
		return err
	}
	if err := h.lock(); err != nil {
		return err
	}
	defer h.mu.Unlock()
	pa, pb := h.scalars(scalarFloat, float64(alpha), float64(beta))
	return check(fn, Status(dynlib.Call(h.l.sgemmStridedBatched, h.h, uintptr(ta), uintptr(tb), i32(m), i32(n), i32(k),
		pa, uintptr(a), i32(lda), uintptr(strideA), uintptr(b), i32(ldb), uintptr(strideB),
		pb, uintptr(c), i32(ldc), uintptr(strideC), i32(batch))))
}

// DgemmStridedBatched is SgemmStridedBatched in float64.
func (h *Handle) DgemmStridedBatched(ta, tb Op, m, n, k int, alpha float64, a uint64, lda int, strideA int64, b uint64, ldb int, strideB int64, beta float64, c uint64, ldc int, strideC int64, batch int) error {
	const fn = "cublasDgemmStridedBatched"
	if err := checkGemm(fn, ta, tb, m, n, k, lda, ldb, ldc, a, b, c); err != nil {
		return err
	}
	if err := checkBatch(fn, m, n, ldc, strideA, strideB, strideC, batch); err != nil {
		return err
	}
	if err := h.lock(); err != nil {
		return err
	}
	defer h.mu.Unlock()
	pa, pb := h.scalars(scalarDouble, alpha, beta)
	return check(fn, Status(dynlib.Call(h.l.dgemmStridedBatched, h.h, uintptr(ta), uintptr(tb), i32(m), i32(n), i32(k),
		pa, uintptr(a), i32(lda), uintptr(strideA), uintptr(b), i32(ldb), uintptr(strideB),
		pb, uintptr(c), i32(ldc), uintptr(strideC), i32(batch))))
}

// GemmArgs are the arguments of GemmEx and GemmStridedBatchedEx:
// C = Alpha·op(A)·op(B) + Beta·C with op(A) M×K, op(B) K×N, C M×N, each
// matrix of its own DataType, computed in Compute precision.
//
// Alpha and Beta are given as float64 and passed as the type Compute
// implies: half for Compute16F*, float for Compute32F* (TF32 included),
// double for Compute64F*, int32 for Compute32I*.
type GemmArgs struct {
	TransA, TransB Op
	M, N, K        int
	Alpha, Beta    float64 // real; with complex types (C32F, C64F) the real parts
	A              uint64
	TypeA          DataType
	LDA            int
	B              uint64
	TypeB          DataType
	LDB            int
	C              uint64
	TypeC          DataType
	LDC            int
	Compute        ComputeType
	Algo           GemmAlgo // GemmDefault (-1) unless you know better; the zero value 0 is CUBLAS_GEMM_ALGO0

	// Strided batched only.
	StrideA, StrideB, StrideC int64
	Batch                     int
}

func (g *GemmArgs) check(fn string) (scalar, error) {
	if err := checkGemm(fn, g.TransA, g.TransB, g.M, g.N, g.K, g.LDA, g.LDB, g.LDC, g.A, g.B, g.C); err != nil {
		return 0, err
	}
	s := g.Compute.scalar()
	if s == scalarNone {
		return 0, invalid(fn, "compute type %d is not a cublasComputeType_t", int32(g.Compute))
	}
	// Complex products take complex scalars: Alpha and Beta are their
	// real parts.
	switch {
	case g.TypeC == C32F && s == scalarFloat:
		s = scalarComplexFloat
	case g.TypeC == C64F && s == scalarDouble:
		s = scalarComplexDouble
	}
	return s, nil
}

// GemmEx is the mixed-precision gemm (cublasGemmEx). With R32F matrices,
// Compute32FFastTF32 uses TF32 tensor cores; Compute32F is full FP32.
func (h *Handle) GemmEx(g GemmArgs) error {
	const fn = "cublasGemmEx"
	s, err := g.check(fn)
	if err != nil {
		return err
	}
	if err := h.lock(); err != nil {
		return err
	}
	defer h.mu.Unlock()
	pa, pb := h.scalars(s, g.Alpha, g.Beta)
	return check(fn, Status(dynlib.Call(h.l.gemmEx, h.h, uintptr(g.TransA), uintptr(g.TransB), i32(g.M), i32(g.N), i32(g.K),
		pa, uintptr(g.A), uintptr(g.TypeA), i32(g.LDA), uintptr(g.B), uintptr(g.TypeB), i32(g.LDB),
		pb, uintptr(g.C), uintptr(g.TypeC), i32(g.LDC), uintptr(g.Compute), uintptr(int64(g.Algo)))))
}

// GemmStridedBatchedEx is GemmEx over a batch (cublasGemmStridedBatchedEx),
// using StrideA, StrideB, StrideC and Batch.
func (h *Handle) GemmStridedBatchedEx(g GemmArgs) error {
	const fn = "cublasGemmStridedBatchedEx"
	s, err := g.check(fn)
	if err != nil {
		return err
	}
	if err := checkBatch(fn, g.M, g.N, g.LDC, g.StrideA, g.StrideB, g.StrideC, g.Batch); err != nil {
		return err
	}
	if err := h.lock(); err != nil {
		return err
	}
	defer h.mu.Unlock()
	pa, pb := h.scalars(s, g.Alpha, g.Beta)
	return check(fn, Status(dynlib.Call(h.l.gemmStridedBatchedEx, h.h, uintptr(g.TransA), uintptr(g.TransB), i32(g.M), i32(g.N), i32(g.K),
		pa, uintptr(g.A), uintptr(g.TypeA), i32(g.LDA), uintptr(g.StrideA),
		uintptr(g.B), uintptr(g.TypeB), i32(g.LDB), uintptr(g.StrideB),
		pb, uintptr(g.C), uintptr(g.TypeC), i32(g.LDC), uintptr(g.StrideC),
		i32(g.Batch), uintptr(g.Compute), uintptr(int64(g.Algo)))))
}
