package cublas

import "math"

// Argument checks done before cuBLAS sees the call, so that a mistake gives a
// message naming the argument instead of CUBLAS_STATUS_INVALID_VALUE, and so
// that a null device pointer never reaches the GPU. cuBLAS is column-major:
// an m×n matrix with leading dimension ld has element (i, j) at i + j*ld.

func fitsInt32(v int) bool { return v >= 0 && v <= math.MaxInt32 }

// checkDims rejects negative or over-large dimensions.
func checkDims(fn string, names string, vals ...int) error {
	for i, v := range vals {
		if !fitsInt32(v) {
			return invalid(fn, "%c = %d is negative or exceeds the int32 range", names[i], v)
		}
	}
	return nil
}

// checkLd checks a leading dimension against the rows of the stored matrix.
func checkLd(fn, name string, ld, rows int) error {
	if ld < max(1, rows) || ld > math.MaxInt32 {
		return invalid(fn, "%s = %d, must be at least max(1, %d), the rows of the matrix as stored", name, ld, rows)
	}
	return nil
}

// rows returns the number of rows of op's operand as stored: an operand of
// op(X) with r rows and c columns is stored r×c when not transposed, c×r
// when transposed.
func storedRows(op Op, r, c int) int {
	if op == NoTrans {
		return r
	}
	return c
}

// checkGemm checks C = alpha op(A) op(B) + beta C with op(A) m×k, op(B) k×n.
func checkGemm(fn string, ta, tb Op, m, n, k, lda, ldb, ldc int, a, b, c uint64) error {
	if !ta.valid() {
		return invalid(fn, "transa = %v is not NoTrans, Trans or ConjTrans", ta)
	}
	if !tb.valid() {
		return invalid(fn, "transb = %v is not NoTrans, Trans or ConjTrans", tb)
	}
	if err := checkDims(fn, "mnk", m, n, k); err != nil {
		return err
	}
	if err := checkLd(fn, "lda", lda, storedRows(ta, m, k)); err != nil {
		return err
	}
	if err := checkLd(fn, "ldb", ldb, storedRows(tb, k, n)); err != nil {
		return err
	}
	if err := checkLd(fn, "ldc", ldc, m); err != nil {
		return err
	}
	if m > 0 && n > 0 {
		if c == 0 {
			return invalid(fn, "C is a null device pointer")
		}
		if k > 0 && (a == 0 || b == 0) {
			return invalid(fn, "A or B is a null device pointer")
		}
	}
	return nil
}

// checkBatch checks the batch count and strides of a strided batched gemm:
// batches must not write over each other.
func checkBatch(fn string, m, n, ldc int, strideA, strideB, strideC int64, batch int) error {
	if !fitsInt32(batch) {
		return invalid(fn, "batchCount = %d is negative or exceeds the int32 range", batch)
	}
	if strideA < 0 || strideB < 0 || strideC < 0 {
		return invalid(fn, "strides must not be negative (strideA %d, strideB %d, strideC %d)", strideA, strideB, strideC)
	}
	if batch > 1 && m > 0 && n > 0 {
		if need := int64(ldc)*int64(n-1) + int64(m); strideC < need {
			return invalid(fn, "strideC = %d < ldc*(n-1)+m = %d: the output matrices of the batch overlap", strideC, need)
		}
	}
	return nil
}

// checkGemv checks y = alpha op(A) x + beta y with A m×n as stored.
func checkGemv(fn string, t Op, m, n, lda, incx, incy int, a, x, y uint64) error {
	if !t.valid() {
		return invalid(fn, "trans = %v is not NoTrans, Trans or ConjTrans", t)
	}
	if err := checkDims(fn, "mn", m, n); err != nil {
		return err
	}
	if err := checkLd(fn, "lda", lda, m); err != nil {
		return err
	}
	if err := checkInc(fn, incx, incy); err != nil {
		return err
	}
	if m > 0 && n > 0 && (a == 0 || x == 0 || y == 0) {
		return invalid(fn, "A, x or y is a null device pointer")
	}
	return nil
}

func checkInc(fn string, incs ...int) error {
	for i, inc := range incs {
		if inc == 0 || inc < math.MinInt32 || inc > math.MaxInt32 {
			return invalid(fn, "inc%c = %d: increments must be non-zero int32 values", "xy"[i], inc)
		}
	}
	return nil
}

// checkVec checks a level-1 operation on n elements of x and y.
func checkVec(fn string, n, incx, incy int, x, y uint64) error {
	if !fitsInt32(n) {
		return invalid(fn, "n = %d is negative or exceeds the int32 range", n)
	}
	if err := checkInc(fn, incx, incy); err != nil {
		return err
	}
	if n > 0 && (x == 0 || y == 0) {
		return invalid(fn, "x or y is a null device pointer")
	}
	return nil
}
