package cublas

import (
	"runtime"
	"unsafe"

	"github.com/gocu-dev/gocu/internal/dynlib"
)

// The batched LU routines factor and solve many small matrices at once
// (cuSOLVER has no batched LU: it lives here). Each matrix is n×n,
// column-major; aArray, bArray and cArray are device arrays of batch
// device pointers, one per matrix; ipiv holds n int32 per matrix, info one
// int32 per matrix. double selects the D routine instead of the S one.

func precision(double bool) (int, string) {
	if double {
		return 1, "D"
	}
	return 0, "S"
}

func checkLUBatch(fn string, n, lda, batch int, ptrs ...uint64) error {
	if err := checkDims(fn, "n", n); err != nil {
		return err
	}
	if err := checkLd(fn, "lda", lda, n); err != nil {
		return err
	}
	if !fitsInt32(batch) {
		return invalid(fn, "batchSize = %d is negative or exceeds the int32 range", batch)
	}
	for _, p := range ptrs {
		if batch > 0 && n > 0 && p == 0 {
			return invalid(fn, "a device array is a null pointer")
		}
	}
	return nil
}

// GetrfBatched factors batch matrices in place, P·A = L·U
// (cublas?getrfBatched); ipiv 0 asks for no pivoting. info[i] > 0: matrix
// i is singular, U(info, info) is zero.
func (h *Handle) GetrfBatched(double bool, n int, aArray uint64, lda int, ipiv, info uint64, batch int) error {
	d, x := precision(double)
	fn := "cublas" + x + "getrfBatched"
	if err := checkLUBatch(fn, n, lda, batch, aArray, info); err != nil {
		return err
	}
	if err := h.lock(); err != nil {
		return err
	}
	defer h.mu.Unlock()
	return check(fn, Status(dynlib.Call(h.l.getrfBatched[d], h.h, i32(n), uintptr(aArray), i32(lda),
		uintptr(ipiv), uintptr(info), i32(batch))))
}

// GetrsBatched solves op(A_i)·X_i = B_i (each B_i n×nrhs, in place) with
// the factors of GetrfBatched (cublas?getrsBatched). Its info is a host
// value that reports a wrong argument only, checked here.
func (h *Handle) GetrsBatched(double bool, op Op, n, nrhs int, aArray uint64, lda int, ipiv, bArray uint64, ldb int, batch int) error {
	d, x := precision(double)
	fn := "cublas" + x + "getrsBatched"
	if !op.valid() {
		return invalid(fn, "trans = %v is not NoTrans, Trans or ConjTrans", op)
	}
	if err := checkLUBatch(fn, n, lda, batch, aArray, bArray, ipiv); err != nil {
		return err
	}
	if err := checkDims(fn, "k", nrhs); err != nil {
		return err
	}
	if err := checkLd(fn, "ldb", ldb, n); err != nil {
		return err
	}
	if err := h.lock(); err != nil {
		return err
	}
	defer h.mu.Unlock()
	info := new(int32)
	err := check(fn, Status(dynlib.Call(h.l.getrsBatched[d], h.h, uintptr(op), i32(n), i32(nrhs), uintptr(aArray), i32(lda),
		uintptr(ipiv), uintptr(bArray), i32(ldb), uintptr(unsafe.Pointer(info)), i32(batch))))
	bad := *info
	runtime.KeepAlive(info)
	if err == nil && bad != 0 {
		return invalid(fn, "cuBLAS rejected argument %d", -bad)
	}
	return err
}

// GetriBatched writes the inverses of the matrices GetrfBatched factored
// into the matrices of cArray (out of place, cublas?getriBatched). info[i]
// > 0: matrix i is singular.
func (h *Handle) GetriBatched(double bool, n int, aArray uint64, lda int, ipiv, cArray uint64, ldc int, info uint64, batch int) error {
	d, x := precision(double)
	fn := "cublas" + x + "getriBatched"
	if err := checkLUBatch(fn, n, lda, batch, aArray, cArray, info); err != nil {
		return err
	}
	if err := checkLd(fn, "ldc", ldc, n); err != nil {
		return err
	}
	if err := h.lock(); err != nil {
		return err
	}
	defer h.mu.Unlock()
	return check(fn, Status(dynlib.Call(h.l.getriBatched[d], h.h, i32(n), uintptr(aArray), i32(lda),
		uintptr(ipiv), uintptr(cArray), i32(ldc), uintptr(info), i32(batch))))
}
