// Package linalg is numpy.linalg for gocu's arrays: solving, inverting,
// determinants, the Cholesky, QR, singular value and symmetric eigen
// decompositions, least squares, pseudo-inverses, ranks and norms, and the
// tensor products Einsum, Tensordot, Outer, Inner, Vdot and Kron.
//
//	x := linalg.Solve(a, b)              // a·x = b
//	u, s, vh := linalg.SVD(a, false)     // a = u·diag(s)·vh
//	y := linalg.Einsum("bhqd,bhkd->bhqk", q, k)
//
// Functions take and return *array.Array, with package array's sticky
// errors: a failure (a singular matrix, a shape mismatch) is a failed
// array whose Err reports it. Every matrix function works on stacks of
// matrices, over the leading axes, as NumPy does.
//
// # Types
//
// Float32 and float64 arrays keep their dtype. Integer and bool inputs
// are promoted to float64, as NumPy does; float16, bfloat16 and the 8-bit
// floats are refused (array.ErrDType), as NumPy refuses float16. The
// complex dtypes, and with them Hermitian matrices, are not supported yet.
//
// # Errors
//
// NumPy's LinAlgError cases are errors matching ErrLinAlg and a sentinel
// that says which: ErrSingular (Solve, Inv), ErrNotPositiveDefinite
// (Cholesky), ErrNoConvergence (SVD, Eigh), ErrNotSquare. Shape mismatches
// match array.ErrShape as well. In a batch, the message names the first
// matrix that failed. Slogdet and Det of a singular matrix are not errors
// (sign 0, logabsdet -Inf, det 0).
//
// # Backends
//
// On the CPU the factorisations are gonum's LAPACK, pure Go, in float64
// (float32 results are rounded once at the end, so they are at least as
// accurate as NumPy's float32 LAPACK), with the matrices of a batch spread
// over all cores. gonum's LAPACK is row-major, like the arrays, so no
// transposes are needed there.
//
// On a GPU they are NVIDIA's cuSOLVER and cuBLAS, loaded at run time
// (package cusolver), queued on the device's stream with workspaces from
// gocu's caching allocator. cuSOLVER is column-major; a row-major matrix
// read column-major is its transpose, and the package uses that instead of
// copying where it can: an inverse of Aᵀ read row-major is the inverse of
// A; Solve factors Aᵀ and solves with the transposed factors (Getrs with
// Trans); Cholesky factors Aᵀ = A into an upper triangle U, which read
// row-major is L; the SVD of Aᵀ = V·S·Uᵀ gives Vᵀ and U directly; the
// eigenvectors of a symmetric A come out as the rows of the result,
// returned as its transposed view. QR (and gesvd of a tall matrix, which
// needs rows ≥ columns) copies a transpose first. One matrix against a
// stack of right-hand sides is factored once. Batches of small matrices use the batched routines
// (cuBLAS's batched LU, cuSOLVER's batched Cholesky and Jacobi SVD and
// eigensolver). The SVD is the Jacobi method (gesvdj) by default;
// SetSVDDriver(QRIteration) selects gesvd, as CuPy's.
//
// cuSOLVER reports a singular or indefinite matrix in an info value on the
// device. To give NumPy's errors, Solve, Inv, Cholesky, SVD and Eigh read
// it, which waits for the GPU; SetCheckInfo(false) skips the wait (as
// cupyx.errstate(linalg='ignore')): a failed matrix then gives undefined
// values (typically NaN or Inf) instead of an error.
//
// The functions built from the decompositions (Det, Pinv, MatrixRank,
// Lstsq, Norm) and the products (Einsum and the others, which become
// batched matrix products) are array operations, so they run wherever the
// array lives, lazily and fused where package array fuses.
package linalg
