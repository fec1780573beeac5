package cublas

import (
	"math"

	"github.com/gocu-dev/gocu/internal/dynlib"
)

// Cgemm computes C = alpha·op(A)·op(B) + beta·C in complex64 (cuComplex),
// as Sgemm (cublasCgemm_v2); ConjTrans takes the conjugate transpose.
func (h *Handle) Cgemm(ta, tb Op, m, n, k int, alpha complex64, a uint64, lda int, b uint64, ldb int, beta complex64, c uint64, ldc int) error {
	const fn = "cublasCgemm_v2"
	if err := checkGemm(fn, ta, tb, m, n, k, lda, ldb, ldc, a, b, c); err != nil {
		return err
	}
	if err := h.lock(); err != nil {
		return err
	}
	defer h.mu.Unlock()
	// A cuComplex is the real float in the low half of a word.
	for i, v := range [2]complex64{alpha, beta} {
		h.scal[i] = uint64(math.Float32bits(real(v))) | uint64(math.Float32bits(imag(v)))<<32
	}
	pa, pb := h.scalarPtrs()
	return check(fn, Status(dynlib.Call(h.l.cgemm, h.h, uintptr(ta), uintptr(tb), i32(m), i32(n), i32(k),
		pa, uintptr(a), i32(lda), uintptr(b), i32(ldb), pb, uintptr(c), i32(ldc))))
}

// Zgemm is Cgemm in complex128 (cuDoubleComplex, cublasZgemm_v2).
func (h *Handle) Zgemm(ta, tb Op, m, n, k int, alpha complex128, a uint64, lda int, b uint64, ldb int, beta complex128, c uint64, ldc int) error {
	const fn = "cublasZgemm_v2"
	if err := checkGemm(fn, ta, tb, m, n, k, lda, ldb, ldc, a, b, c); err != nil {
		return err
	}
	if err := h.lock(); err != nil {
		return err
	}
	defer h.mu.Unlock()
	h.zscal = [4]uint64{math.Float64bits(real(alpha)), math.Float64bits(imag(alpha)), math.Float64bits(real(beta)), math.Float64bits(imag(beta))}
	pa, pb := h.zscalarPtrs()
	return check(fn, Status(dynlib.Call(h.l.zgemm, h.h, uintptr(ta), uintptr(tb), i32(m), i32(n), i32(k),
		pa, uintptr(a), i32(lda), uintptr(b), i32(ldb), pb, uintptr(c), i32(ldc))))
}
