package cusolver

import (
	"unsafe"

	"github.com/gocu-dev/gocu/internal/dynlib"
)

// GesvdjInfo holds the parameters of the Jacobi SVD (gesvdjInfo_t). The
// tolerance is cuSOLVER's default, the machine precision of the type: it
// is a double, which this package does not pass through purego.
type GesvdjInfo struct {
	p uintptr
	l *lib
}

// NewGesvdjInfo makes Jacobi SVD parameters with cuSOLVER's defaults (100
// sweeps, singular values sorted descending).
func NewGesvdjInfo() (*GesvdjInfo, error) {
	l, err := load()
	if err != nil {
		return nil, err
	}
	p := new(uintptr)
	err = check("cusolverDnCreateGesvdjInfo", Status(dynlib.Call(l.createGesvdj, uintptr(unsafe.Pointer(p)))))
	if err != nil {
		return nil, err
	}
	return &GesvdjInfo{p: *p, l: l}, nil
}

// SetMaxSweeps bounds the Jacobi sweeps (cusolverDnXgesvdjSetMaxSweeps).
func (g *GesvdjInfo) SetMaxSweeps(n int) error {
	const fn = "cusolverDnXgesvdjSetMaxSweeps"
	if g == nil || g.p == 0 {
		return ErrDestroyed
	}
	if n < 1 || !fitsInt32(n) {
		return invalid(fn, "max sweeps %d, must be at least 1", n)
	}
	return check(fn, Status(dynlib.Call(g.l.gesvdjSweeps, g.p, i32(n))))
}

// SetSort chooses whether singular values come sorted descending
// (cusolverDnXgesvdjSetSortEig; the default is sorted).
func (g *GesvdjInfo) SetSort(sorted bool) error {
	if g == nil || g.p == 0 {
		return ErrDestroyed
	}
	v := uintptr(0)
	if sorted {
		v = 1
	}
	return check("cusolverDnXgesvdjSetSortEig", Status(dynlib.Call(g.l.gesvdjSort, g.p, v)))
}

// Destroy releases the parameters; a second Destroy is a no-op.
func (g *GesvdjInfo) Destroy() error {
	if g == nil || g.p == 0 {
		return nil
	}
	err := check("cusolverDnDestroyGesvdjInfo", Status(dynlib.Call(g.l.destroyGesvdj, g.p)))
	g.p = 0
	return err
}

// SyevjInfo holds the parameters of the Jacobi eigensolver (syevjInfo_t),
// with cuSOLVER's default tolerance.
type SyevjInfo struct {
	p uintptr
	l *lib
}

// NewSyevjInfo makes Jacobi eigensolver parameters with cuSOLVER's
// defaults (100 sweeps, eigenvalues sorted ascending).
func NewSyevjInfo() (*SyevjInfo, error) {
	l, err := load()
	if err != nil {
		return nil, err
	}
	p := new(uintptr)
	if err := check("cusolverDnCreateSyevjInfo", Status(dynlib.Call(l.createSyevj, uintptr(unsafe.Pointer(p))))); err != nil {
		return nil, err
	}
	return &SyevjInfo{p: *p, l: l}, nil
}

// SetMaxSweeps bounds the Jacobi sweeps (cusolverDnXsyevjSetMaxSweeps).
func (s *SyevjInfo) SetMaxSweeps(n int) error {
	const fn = "cusolverDnXsyevjSetMaxSweeps"
	if s == nil || s.p == 0 {
		return ErrDestroyed
	}
	if n < 1 || !fitsInt32(n) {
		return invalid(fn, "max sweeps %d, must be at least 1", n)
	}
	return check(fn, Status(dynlib.Call(s.l.syevjSweeps, s.p, i32(n))))
}

// Destroy releases the parameters; a second Destroy is a no-op.
func (s *SyevjInfo) Destroy() error {
	if s == nil || s.p == 0 {
		return nil
	}
	err := check("cusolverDnDestroySyevjInfo", Status(dynlib.Call(s.l.destroySyevj, s.p)))
	s.p = 0
	return err
}

// SVD is the operands of a Jacobi SVD of the m×n matrix A: S receives
// min(m, n) singular values (descending), U the left vectors (m × m, or m
// × min(m,n) with Econ) and V the right vectors (n × n, or n × min(m,n)),
// V itself and not its transpose. In the batched form the matrices of
// one batch follow each other densely (A every lda·n elements, S every
// min(m,n), U every ldu·m, V every ldv·n) and Econ is not available.
type SVD struct {
	Jobz   EigMode
	Econ   bool
	M, N   int
	A      uint64
	LDA    int
	S, U   uint64
	LDU    int
	V      uint64
	LDV    int
	Work   uint64
	LWork  int
	Info   uint64 // one int32, or one per matrix in the batched form
	Batch  int    // the batched form only
	Params *GesvdjInfo
}

func (a *SVD) check(fn string, dt DType, batched, sizing bool) error {
	if err := firstErr(checkType(fn, dt), checkMode(fn, a.Jobz), checkDims(fn, "mn", a.M, a.N), checkLd(fn, "lda", a.LDA, a.M)); err != nil {
		return err
	}
	if a.Params == nil || a.Params.p == 0 {
		return invalid(fn, "no GesvdjInfo (make one with NewGesvdjInfo)")
	}
	if a.Jobz == Vectors {
		if err := firstErr(checkLd(fn, "ldu", a.LDU, a.M), checkLd(fn, "ldv", a.LDV, a.N)); err != nil {
			return err
		}
	}
	if batched {
		if a.Econ {
			return invalid(fn, "the batched Jacobi SVD has no economy mode")
		}
		if a.M > 32 || a.N > 32 {
			return invalid(fn, "m = %d, n = %d: the batched Jacobi SVD takes matrices of at most 32×32", a.M, a.N)
		}
		if err := checkBatch(fn, a.Batch); err != nil {
			return err
		}
	}
	if sizing {
		return nil
	}
	if err := firstErr(checkWork(fn, a.LWork), checkPtrs(fn, a.M > 0 && a.N > 0, "A,S,work,info", a.A, a.S, a.Work, a.Info)); err != nil {
		return err
	}
	if a.Jobz == Vectors {
		return checkPtrs(fn, a.M > 0 && a.N > 0, "U,V", a.U, a.V)
	}
	return nil
}

func b2i(b bool) uintptr {
	if b {
		return 1
	}
	return 0
}

// GesvdjBufferSize returns the workspace Gesvdj needs for a, in elements.
func (h *Handle) GesvdjBufferSize(dt DType, a *SVD) (int, error) {
	fn := "cusolverDn" + dtLetter(dt) + "gesvdj_bufferSize"
	if err := a.check(fn, dt, false, true); err != nil {
		return 0, err
	}
	// The int result comes before params, so it is not the last argument.
	if err := h.lock(); err != nil {
		return 0, err
	}
	defer h.mu.Unlock()
	n := new(int32)
	err := check(fn, Status(dynlib.Call(h.l.t[dt].gesvdjBuf, h.h, uintptr(a.Jobz), b2i(a.Econ), i32(a.M), i32(a.N),
		uintptr(a.A), i32(a.LDA), uintptr(a.S), uintptr(a.U), i32(max(a.LDU, 1)), uintptr(a.V), i32(max(a.LDV, 1)),
		uintptr(unsafe.Pointer(n)), a.Params.p)))
	return int(*n), err
}

// Gesvdj computes the SVD of a.A (destroyed) by Jacobi rotations
// (cusolverDn?gesvdj). info > min(m,n)+1 means it did not converge
// within the sweeps.
func (h *Handle) Gesvdj(dt DType, a *SVD) error {
	fn := "cusolverDn" + dtLetter(dt) + "gesvdj"
	if err := a.check(fn, dt, false, false); err != nil {
		return err
	}
	return h.run(fn, dt, func(t *typed) uintptr { return t.gesvdj }, uintptr(a.Jobz), b2i(a.Econ), i32(a.M), i32(a.N),
		uintptr(a.A), i32(a.LDA), uintptr(a.S), uintptr(a.U), i32(max(a.LDU, 1)), uintptr(a.V), i32(max(a.LDV, 1)),
		uintptr(a.Work), i32(a.LWork), uintptr(a.Info), a.Params.p)
}

// GesvdjBatchedBufferSize returns the workspace GesvdjBatched needs.
func (h *Handle) GesvdjBatchedBufferSize(dt DType, a *SVD) (int, error) {
	fn := "cusolverDn" + dtLetter(dt) + "gesvdjBatched_bufferSize"
	if err := a.check(fn, dt, true, true); err != nil {
		return 0, err
	}
	if err := h.lock(); err != nil {
		return 0, err
	}
	defer h.mu.Unlock()
	n := new(int32)
	err := check(fn, Status(dynlib.Call(h.l.t[dt].gesvdjBatBuf, h.h, uintptr(a.Jobz), i32(a.M), i32(a.N),
		uintptr(a.A), i32(a.LDA), uintptr(a.S), uintptr(a.U), i32(max(a.LDU, 1)), uintptr(a.V), i32(max(a.LDV, 1)),
		uintptr(unsafe.Pointer(n)), a.Params.p, i32(a.Batch))))
	return int(*n), err
}

// GesvdjBatched computes Batch SVDs of matrices of at most 32×32
// (cusolverDn?gesvdjBatched); Info holds one int32 per matrix.
func (h *Handle) GesvdjBatched(dt DType, a *SVD) error {
	fn := "cusolverDn" + dtLetter(dt) + "gesvdjBatched"
	if err := a.check(fn, dt, true, false); err != nil {
		return err
	}
	return h.run(fn, dt, func(t *typed) uintptr { return t.gesvdjBat }, uintptr(a.Jobz), i32(a.M), i32(a.N),
		uintptr(a.A), i32(a.LDA), uintptr(a.S), uintptr(a.U), i32(max(a.LDU, 1)), uintptr(a.V), i32(max(a.LDV, 1)),
		uintptr(a.Work), i32(a.LWork), uintptr(a.Info), a.Params.p, i32(a.Batch))
}

// Eig is the operands of a batched Jacobi eigensolve of symmetric N×N
// matrices (at most 32×32), densely one after the other (A every LDA·N
// elements, W every N).
type Eig struct {
	Jobz   EigMode
	Uplo   Fill
	N      int
	A      uint64
	LDA    int
	W      uint64
	Work   uint64
	LWork  int
	Info   uint64 // one int32 per matrix
	Batch  int
	Params *SyevjInfo
}

func (e *Eig) check(fn string, dt DType, sizing bool) error {
	if err := firstErr(checkType(fn, dt), checkMode(fn, e.Jobz), checkFill(fn, e.Uplo), checkDims(fn, "n", e.N),
		checkLd(fn, "lda", e.LDA, e.N), checkBatch(fn, e.Batch)); err != nil {
		return err
	}
	if e.N > 32 {
		return invalid(fn, "n = %d: the batched Jacobi eigensolver takes matrices of at most 32×32", e.N)
	}
	if e.Params == nil || e.Params.p == 0 {
		return invalid(fn, "no SyevjInfo (make one with NewSyevjInfo)")
	}
	if sizing {
		return nil
	}
	return firstErr(checkWork(fn, e.LWork), checkPtrs(fn, e.N > 0, "A,W,work,info", e.A, e.W, e.Work, e.Info))
}

// SyevjBatchedBufferSize returns the workspace SyevjBatched needs.
func (h *Handle) SyevjBatchedBufferSize(dt DType, e *Eig) (int, error) {
	fn := "cusolverDn" + dtLetter(dt) + "syevjBatched_bufferSize"
	if err := e.check(fn, dt, true); err != nil {
		return 0, err
	}
	if err := h.lock(); err != nil {
		return 0, err
	}
	defer h.mu.Unlock()
	n := new(int32)
	err := check(fn, Status(dynlib.Call(h.l.t[dt].syevjBatBuf, h.h, uintptr(e.Jobz), uintptr(e.Uplo), i32(e.N),
		uintptr(e.A), i32(e.LDA), uintptr(e.W), uintptr(unsafe.Pointer(n)), e.Params.p, i32(e.Batch))))
	return int(*n), err
}

// SyevjBatched computes the eigenvalues (ascending) and, with Vectors,
// eigenvectors of Batch symmetric matrices (cusolverDn?syevjBatched).
func (h *Handle) SyevjBatched(dt DType, e *Eig) error {
	fn := "cusolverDn" + dtLetter(dt) + "syevjBatched"
	if err := e.check(fn, dt, false); err != nil {
		return err
	}
	return h.run(fn, dt, func(t *typed) uintptr { return t.syevjBat }, uintptr(e.Jobz), uintptr(e.Uplo), i32(e.N),
		uintptr(e.A), i32(e.LDA), uintptr(e.W), uintptr(e.Work), i32(e.LWork), uintptr(e.Info), e.Params.p, i32(e.Batch))
}
