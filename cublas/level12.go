package cublas

import (
	"math"
	"unsafe"

	"github.com/gocu-dev/gocu/internal/dynlib"
)

// Sgemv computes y = alpha·op(A)·x + beta·y in float32, A m×n as stored
// (cublasSgemv_v2): op(A) is m×n for NoTrans (x has n elements, y m) and
// n×m for Trans.
func (h *Handle) Sgemv(t Op, m, n int, alpha float32, a uint64, lda int, x uint64, incx int, beta float32, y uint64, incy int) error {
	const fn = "cublasSgemv_v2"
	if err := checkGemv(fn, t, m, n, lda, incx, incy, a, x, y); err != nil {
		return err
	}
	if err := h.lock(); err != nil {
		return err
	}
	defer h.mu.Unlock()
	pa, pb := h.scalars(scalarFloat, float64(alpha), float64(beta))
	return check(fn, Status(dynlib.Call(h.l.sgemv, h.h, uintptr(t), i32(m), i32(n), pa, uintptr(a), i32(lda),
		uintptr(x), i32(incx), pb, uintptr(y), i32(incy))))
}

// Dgemv is Sgemv in float64 (cublasDgemv_v2).
func (h *Handle) Dgemv(t Op, m, n int, alpha float64, a uint64, lda int, x uint64, incx int, beta float64, y uint64, incy int) error {
	const fn = "cublasDgemv_v2"
	if err := checkGemv(fn, t, m, n, lda, incx, incy, a, x, y); err != nil {
		return err
	}
	if err := h.lock(); err != nil {
		return err
	}
	defer h.mu.Unlock()
	pa, pb := h.scalars(scalarDouble, alpha, beta)
	return check(fn, Status(dynlib.Call(h.l.dgemv, h.h, uintptr(t), i32(m), i32(n), pa, uintptr(a), i32(lda),
		uintptr(x), i32(incx), pb, uintptr(y), i32(incy))))
}

// Saxpy computes y = alpha·x + y over n elements (cublasSaxpy_v2).
func (h *Handle) Saxpy(n int, alpha float32, x uint64, incx int, y uint64, incy int) error {
	const fn = "cublasSaxpy_v2"
	if err := checkVec(fn, n, incx, incy, x, y); err != nil {
		return err
	}
	if err := h.lock(); err != nil {
		return err
	}
	defer h.mu.Unlock()
	pa, _ := h.scalars(scalarFloat, float64(alpha), 0)
	return check(fn, Status(dynlib.Call(h.l.saxpy, h.h, i32(n), pa, uintptr(x), i32(incx), uintptr(y), i32(incy))))
}

// Daxpy is Saxpy in float64 (cublasDaxpy_v2).
func (h *Handle) Daxpy(n int, alpha float64, x uint64, incx int, y uint64, incy int) error {
	const fn = "cublasDaxpy_v2"
	if err := checkVec(fn, n, incx, incy, x, y); err != nil {
		return err
	}
	if err := h.lock(); err != nil {
		return err
	}
	defer h.mu.Unlock()
	pa, _ := h.scalars(scalarDouble, alpha, 0)
	return check(fn, Status(dynlib.Call(h.l.daxpy, h.h, i32(n), pa, uintptr(x), i32(incx), uintptr(y), i32(incy))))
}

// Sscal computes x = alpha·x over n elements (cublasSscal_v2).
func (h *Handle) Sscal(n int, alpha float32, x uint64, incx int) error {
	const fn = "cublasSscal_v2"
	if err := checkVec(fn, n, incx, 1, x, x); err != nil {
		return err
	}
	if err := h.lock(); err != nil {
		return err
	}
	defer h.mu.Unlock()
	pa, _ := h.scalars(scalarFloat, float64(alpha), 0)
	return check(fn, Status(dynlib.Call(h.l.sscal, h.h, i32(n), pa, uintptr(x), i32(incx))))
}

// Dscal is Sscal in float64 (cublasDscal_v2).
func (h *Handle) Dscal(n int, alpha float64, x uint64, incx int) error {
	const fn = "cublasDscal_v2"
	if err := checkVec(fn, n, incx, 1, x, x); err != nil {
		return err
	}
	if err := h.lock(); err != nil {
		return err
	}
	defer h.mu.Unlock()
	pa, _ := h.scalars(scalarDouble, alpha, 0)
	return check(fn, Status(dynlib.Call(h.l.dscal, h.h, i32(n), pa, uintptr(x), i32(incx))))
}

// Sdot returns the dot product of n elements of x and y (cublasSdot_v2).
// The result comes back to the host, so Sdot waits for the stream.
func (h *Handle) Sdot(n int, x uint64, incx int, y uint64, incy int) (float32, error) {
	const fn = "cublasSdot_v2"
	if err := checkVec(fn, n, incx, incy, x, y); err != nil {
		return 0, err
	}
	if err := h.lock(); err != nil {
		return 0, err
	}
	defer h.mu.Unlock()
	h.scal[2] = 0
	err := check(fn, Status(dynlib.Call(h.l.sdot, h.h, i32(n), uintptr(x), i32(incx), uintptr(y), i32(incy), uintptr(unsafe.Pointer(&h.scal[2])))))
	return math.Float32frombits(uint32(h.scal[2])), err
}

// Ddot is Sdot in float64 (cublasDdot_v2).
func (h *Handle) Ddot(n int, x uint64, incx int, y uint64, incy int) (float64, error) {
	const fn = "cublasDdot_v2"
	if err := checkVec(fn, n, incx, incy, x, y); err != nil {
		return 0, err
	}
	if err := h.lock(); err != nil {
		return 0, err
	}
	defer h.mu.Unlock()
	h.scal[2] = 0
	err := check(fn, Status(dynlib.Call(h.l.ddot, h.h, i32(n), uintptr(x), i32(incx), uintptr(y), i32(incy), uintptr(unsafe.Pointer(&h.scal[2])))))
	return math.Float64frombits(h.scal[2]), err
}
