package cusolver

// Sizes are in elements of the routine's type, pointers are device
// pointers, and info points to one int32 in device memory that the
// routine sets to 0 on success (see each routine for its other values).

// GetrfBufferSize returns the workspace Getrf needs, in elements.
func (h *Handle) GetrfBufferSize(dt DType, m, n int, a uint64, lda int) (int, error) {
	fn := "cusolverDn" + dtLetter(dt) + "getrf_bufferSize"
	if err := firstErr(checkType(fn, dt), checkDims(fn, "mn", m, n), checkLd(fn, "lda", lda, m)); err != nil {
		return 0, err
	}
	return h.size(fn, dt, func(t *typed) uintptr { return t.getrfBuf }, i32(m), i32(n), uintptr(a), i32(lda))
}

// Getrf computes the LU factorisation with partial pivoting P·A = L·U of
// the m×n matrix a in place; ipiv (min(m, n) int32) receives the 1-based
// pivot rows. info > 0 is the first zero diagonal element of U (1-based):
// the matrix is singular.
func (h *Handle) Getrf(dt DType, m, n int, a uint64, lda int, work, ipiv, info uint64) error {
	fn := "cusolverDn" + dtLetter(dt) + "getrf"
	if err := firstErr(checkType(fn, dt), checkDims(fn, "mn", m, n), checkLd(fn, "lda", lda, m),
		checkPtrs(fn, m > 0 && n > 0, "A,workspace,ipiv,info", a, work, ipiv, info)); err != nil {
		return err
	}
	return h.run(fn, dt, func(t *typed) uintptr { return t.getrf }, i32(m), i32(n), uintptr(a), i32(lda),
		uintptr(work), uintptr(ipiv), uintptr(info))
}

// Getrs solves op(A)·X = B for the n×nrhs matrix b in place, with a and
// ipiv from Getrf.
func (h *Handle) Getrs(dt DType, op Op, n, nrhs int, a uint64, lda int, ipiv, b uint64, ldb int, info uint64) error {
	fn := "cusolverDn" + dtLetter(dt) + "getrs"
	if op != NoTrans && op != Trans {
		return invalid(fn, "trans = %v is not NoTrans or Trans", op)
	}
	if err := firstErr(checkType(fn, dt), checkDims(fn, "nk", n, nrhs), checkLd(fn, "lda", lda, n), checkLd(fn, "ldb", ldb, n),
		checkPtrs(fn, n > 0 && nrhs > 0, "A,ipiv,B,info", a, ipiv, b, info)); err != nil {
		return err
	}
	return h.run(fn, dt, func(t *typed) uintptr { return t.getrs }, uintptr(op), i32(n), i32(nrhs), uintptr(a), i32(lda),
		uintptr(ipiv), uintptr(b), i32(ldb), uintptr(info))
}

// PotrfBufferSize returns the workspace Potrf needs, in elements.
func (h *Handle) PotrfBufferSize(dt DType, uplo Fill, n int, a uint64, lda int) (int, error) {
	fn := "cusolverDn" + dtLetter(dt) + "potrf_bufferSize"
	if err := firstErr(checkType(fn, dt), checkFill(fn, uplo), checkDims(fn, "n", n), checkLd(fn, "lda", lda, n)); err != nil {
		return 0, err
	}
	return h.size(fn, dt, func(t *typed) uintptr { return t.potrfBuf }, uintptr(uplo), i32(n), uintptr(a), i32(lda))
}

// Potrf computes the Cholesky factor of the symmetric positive definite
// n×n matrix a in place, reading and writing the uplo triangle: A = L·Lᵀ
// (Lower) or Uᵀ·U (Upper). info > 0 is the order of the first leading
// minor that is not positive definite.
func (h *Handle) Potrf(dt DType, uplo Fill, n int, a uint64, lda int, work uint64, lwork int, info uint64) error {
	fn := "cusolverDn" + dtLetter(dt) + "potrf"
	if err := firstErr(checkType(fn, dt), checkFill(fn, uplo), checkDims(fn, "n", n), checkLd(fn, "lda", lda, n), checkWork(fn, lwork),
		checkPtrs(fn, n > 0, "A,workspace,info", a, work, info)); err != nil {
		return err
	}
	return h.run(fn, dt, func(t *typed) uintptr { return t.potrf }, uintptr(uplo), i32(n), uintptr(a), i32(lda),
		uintptr(work), i32(lwork), uintptr(info))
}

// Potrs solves A·X = B for the n×nrhs matrix b in place, with a's Cholesky
// factor from Potrf.
func (h *Handle) Potrs(dt DType, uplo Fill, n, nrhs int, a uint64, lda int, b uint64, ldb int, info uint64) error {
	fn := "cusolverDn" + dtLetter(dt) + "potrs"
	if err := firstErr(checkType(fn, dt), checkFill(fn, uplo), checkDims(fn, "nk", n, nrhs), checkLd(fn, "lda", lda, n), checkLd(fn, "ldb", ldb, n),
		checkPtrs(fn, n > 0 && nrhs > 0, "A,B,info", a, b, info)); err != nil {
		return err
	}
	return h.run(fn, dt, func(t *typed) uintptr { return t.potrs }, uintptr(uplo), i32(n), i32(nrhs), uintptr(a), i32(lda),
		uintptr(b), i32(ldb), uintptr(info))
}

// PotrfBatched is Potrf on batch matrices: aArray is a device array of
// batch device pointers, info a device array of batch int32.
func (h *Handle) PotrfBatched(dt DType, uplo Fill, n int, aArray uint64, lda int, info uint64, batch int) error {
	fn := "cusolverDn" + dtLetter(dt) + "potrfBatched"
	if err := firstErr(checkType(fn, dt), checkFill(fn, uplo), checkDims(fn, "n", n), checkLd(fn, "lda", lda, n), checkBatch(fn, batch),
		checkPtrs(fn, true, "Aarray,infoArray", aArray, info)); err != nil {
		return err
	}
	return h.run(fn, dt, func(t *typed) uintptr { return t.potrfBatched }, uintptr(uplo), i32(n), uintptr(aArray), i32(lda),
		uintptr(info), i32(batch))
}

// PotrsBatched is Potrs on batch systems (device arrays of pointers);
// cuSOLVER supports one right-hand side (nrhs 1) only. info is one int32.
func (h *Handle) PotrsBatched(dt DType, uplo Fill, n, nrhs int, aArray uint64, lda int, bArray uint64, ldb int, info uint64, batch int) error {
	fn := "cusolverDn" + dtLetter(dt) + "potrsBatched"
	if nrhs != 1 {
		return invalid(fn, "nrhs = %d: cuSOLVER solves one right-hand side per matrix", nrhs)
	}
	if err := firstErr(checkType(fn, dt), checkFill(fn, uplo), checkDims(fn, "n", n), checkLd(fn, "lda", lda, n), checkLd(fn, "ldb", ldb, n),
		checkBatch(fn, batch), checkPtrs(fn, true, "Aarray,Barray,info", aArray, bArray, info)); err != nil {
		return err
	}
	return h.run(fn, dt, func(t *typed) uintptr { return t.potrsBat }, uintptr(uplo), i32(n), i32(nrhs), uintptr(aArray), i32(lda),
		uintptr(bArray), i32(ldb), uintptr(info), i32(batch))
}

// GeqrfBufferSize returns the workspace Geqrf needs, in elements.
func (h *Handle) GeqrfBufferSize(dt DType, m, n int, a uint64, lda int) (int, error) {
	fn := "cusolverDn" + dtLetter(dt) + "geqrf_bufferSize"
	if err := firstErr(checkType(fn, dt), checkDims(fn, "mn", m, n), checkLd(fn, "lda", lda, m)); err != nil {
		return 0, err
	}
	return h.size(fn, dt, func(t *typed) uintptr { return t.geqrfBuf }, i32(m), i32(n), uintptr(a), i32(lda))
}

// Geqrf computes the QR factorisation A = Q·R of the m×n matrix a in
// place: R in the upper triangle, Q as min(m, n) Householder reflectors
// below it with their scalars in tau.
func (h *Handle) Geqrf(dt DType, m, n int, a uint64, lda int, tau, work uint64, lwork int, info uint64) error {
	fn := "cusolverDn" + dtLetter(dt) + "geqrf"
	if err := firstErr(checkType(fn, dt), checkDims(fn, "mn", m, n), checkLd(fn, "lda", lda, m), checkWork(fn, lwork),
		checkPtrs(fn, m > 0 && n > 0, "A,TAU,workspace,info", a, tau, work, info)); err != nil {
		return err
	}
	return h.run(fn, dt, func(t *typed) uintptr { return t.geqrf }, i32(m), i32(n), uintptr(a), i32(lda),
		uintptr(tau), uintptr(work), i32(lwork), uintptr(info))
}

// OrgqrBufferSize returns the workspace Orgqr needs, in elements.
func (h *Handle) OrgqrBufferSize(dt DType, m, n, k int, a uint64, lda int, tau uint64) (int, error) {
	fn := "cusolverDn" + dtLetter(dt) + "orgqr_bufferSize"
	if err := firstErr(checkType(fn, dt), checkOrgqr(fn, m, n, k), checkLd(fn, "lda", lda, m)); err != nil {
		return 0, err
	}
	return h.size(fn, dt, func(t *typed) uintptr { return t.orgqrBuf }, i32(m), i32(n), i32(k), uintptr(a), i32(lda), uintptr(tau))
}

// Orgqr overwrites the m×n matrix a, holding k reflectors from Geqrf, with
// the first n columns of Q (m ≥ n ≥ k).
func (h *Handle) Orgqr(dt DType, m, n, k int, a uint64, lda int, tau, work uint64, lwork int, info uint64) error {
	fn := "cusolverDn" + dtLetter(dt) + "orgqr"
	if err := firstErr(checkType(fn, dt), checkOrgqr(fn, m, n, k), checkLd(fn, "lda", lda, m), checkWork(fn, lwork),
		checkPtrs(fn, m > 0 && n > 0, "A,tau,work,info", a, tau, work, info)); err != nil {
		return err
	}
	return h.run(fn, dt, func(t *typed) uintptr { return t.orgqr }, i32(m), i32(n), i32(k), uintptr(a), i32(lda),
		uintptr(tau), uintptr(work), i32(lwork), uintptr(info))
}

func checkOrgqr(fn string, m, n, k int) error {
	if err := checkDims(fn, "mnk", m, n, k); err != nil {
		return err
	}
	if n > m || k > n {
		return invalid(fn, "m = %d, n = %d, k = %d: need m ≥ n ≥ k", m, n, k)
	}
	return nil
}

// GesvdBufferSize returns the workspace Gesvd needs, in elements.
func (h *Handle) GesvdBufferSize(dt DType, m, n int) (int, error) {
	fn := "cusolverDn" + dtLetter(dt) + "gesvd_bufferSize"
	if err := firstErr(checkType(fn, dt), checkGesvdDims(fn, m, n)); err != nil {
		return 0, err
	}
	return h.size(fn, dt, func(t *typed) uintptr { return t.gesvdBuf }, i32(m), i32(n))
}

func checkGesvdDims(fn string, m, n int) error {
	if err := checkDims(fn, "mn", m, n); err != nil {
		return err
	}
	if m < n {
		return invalid(fn, "m = %d < n = %d: cuSOLVER's gesvd needs m ≥ n (factor the transpose)", m, n)
	}
	return nil
}

// Gesvd computes the SVD A = U·Σ·Vᵀ of the m×n matrix a (m ≥ n; a is
// destroyed): s receives min(m, n) singular values in descending order, u
// (ldu × m or × min(m,n)) and vt (ldvt × n) the vectors jobu and jobvt ask
// for. rwork (min(m,n)-1 elements) may be 0. info > 0 is the number of
// superdiagonals that did not converge.
func (h *Handle) Gesvd(dt DType, jobu, jobvt Job, m, n int, a uint64, lda int, s, u uint64, ldu int, vt uint64, ldvt int, work uint64, lwork int, rwork, info uint64) error {
	fn := "cusolverDn" + dtLetter(dt) + "gesvd"
	for _, j := range []Job{jobu, jobvt} {
		if j != JobAll && j != JobSome && j != JobNone {
			return invalid(fn, "job %q is not JobAll, JobSome or JobNone", byte(j))
		}
	}
	if err := firstErr(checkType(fn, dt), checkGesvdDims(fn, m, n), checkLd(fn, "lda", lda, m), checkWork(fn, lwork),
		checkPtrs(fn, m > 0 && n > 0, "A,S,work,info", a, s, work, info)); err != nil {
		return err
	}
	if jobu != JobNone {
		if err := firstErr(checkLd(fn, "ldu", ldu, m), checkPtrs(fn, m > 0, "U", u)); err != nil {
			return err
		}
	}
	if jobvt != JobNone {
		if err := firstErr(checkLd(fn, "ldvt", ldvt, n), checkPtrs(fn, n > 0, "VT", vt)); err != nil {
			return err
		}
	}
	return h.run(fn, dt, func(t *typed) uintptr { return t.gesvd }, uintptr(jobu), uintptr(jobvt), i32(m), i32(n),
		uintptr(a), i32(lda), uintptr(s), uintptr(u), i32(max(ldu, 1)), uintptr(vt), i32(max(ldvt, 1)),
		uintptr(work), i32(lwork), uintptr(rwork), uintptr(info))
}

// SyevdBufferSize returns the workspace Syevd needs, in elements.
func (h *Handle) SyevdBufferSize(dt DType, jobz EigMode, uplo Fill, n int, a uint64, lda int, w uint64) (int, error) {
	fn := "cusolverDn" + dtLetter(dt) + "syevd_bufferSize"
	if err := firstErr(checkType(fn, dt), checkMode(fn, jobz), checkFill(fn, uplo), checkDims(fn, "n", n), checkLd(fn, "lda", lda, n)); err != nil {
		return 0, err
	}
	return h.size(fn, dt, func(t *typed) uintptr { return t.syevdBuf }, uintptr(jobz), uintptr(uplo), i32(n), uintptr(a), i32(lda), uintptr(w))
}

// Syevd computes the eigenvalues (ascending, into w) and, with Vectors,
// the orthonormal eigenvectors (the columns of a, overwritten) of the
// symmetric n×n matrix a, of which only the uplo triangle is read.
// info > 0: that many off-diagonal elements did not converge.
func (h *Handle) Syevd(dt DType, jobz EigMode, uplo Fill, n int, a uint64, lda int, w, work uint64, lwork int, info uint64) error {
	fn := "cusolverDn" + dtLetter(dt) + "syevd"
	if err := firstErr(checkType(fn, dt), checkMode(fn, jobz), checkFill(fn, uplo), checkDims(fn, "n", n), checkLd(fn, "lda", lda, n),
		checkWork(fn, lwork), checkPtrs(fn, n > 0, "A,W,work,info", a, w, work, info)); err != nil {
		return err
	}
	return h.run(fn, dt, func(t *typed) uintptr { return t.syevd }, uintptr(jobz), uintptr(uplo), i32(n), uintptr(a), i32(lda),
		uintptr(w), uintptr(work), i32(lwork), uintptr(info))
}

func dtLetter(dt DType) string {
	if dt.valid() {
		return dt.letter()
	}
	return "?"
}

func firstErr(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}
