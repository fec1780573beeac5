package linalg

import (
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/gocu-dev/gocu"
	"github.com/gocu-dev/gocu/array"
	"github.com/gocu-dev/gocu/cublas"
	"github.com/gocu-dev/gocu/cuda"
	"github.com/gocu-dev/gocu/cusolver"
)

// The GPU backend: cuSOLVER and cuBLAS on the device's array stream. The
// package doc explains how row-major arrays meet column-major cuSOLVER.

var noCheck atomic.Bool

// SetCheckInfo chooses whether GPU factorisations read cuSOLVER's info
// values to report NumPy's errors (the default), which waits for the GPU
// once per call, and returns the previous setting. With false nothing
// waits, and the results of a failed matrix are undefined (typically Inf
// or NaN), as with cupyx.errstate(linalg='ignore'). The CPU always checks.
func SetCheckInfo(on bool) (was bool) { return !noCheck.Swap(!on) }

// Batches of matrices up to these orders go to the batched routines; a
// larger matrix is factored one call at a time.
const (
	batchedLU   = 64 // cuBLAS getrfBatched, getrsBatched
	batchedChol = 64 // cusolverDn potrfBatched
	batchedJac  = 32 // gesvdjBatched, syevjBatched (their limit)
)

// solver holds one device's handles.
type solver struct {
	gd     *gocu.Device
	dev    *cuda.Device
	stream *cuda.Stream
	h      *cusolver.Handle
	blas   *cublas.Handle
	svdj   *cusolver.GesvdjInfo
	eigj   *cusolver.SyevjInfo
	// jac serialises the Jacobi calls: cuSOLVER writes their statistics
	// (sweeps, residual) into the shared parameter objects.
	jac sync.Mutex
}

type solverEntry struct {
	once sync.Once
	s    *solver
	err  error
}

var solvers sync.Map // *cuda.Device → *solverEntry

// solverFor returns the handles of x's GPU, made on first use.
func solverFor(x *array.Array) (*solver, error) {
	gd := x.Device()
	cd := gd.CUDA()
	if cd == nil {
		return nil, fmt.Errorf("%v is not a CUDA device", gd)
	}
	v, _ := solvers.LoadOrStore(cd, new(solverEntry))
	e := v.(*solverEntry)
	e.once.Do(func() { e.s, e.err = newSolver(gd, cd, array.On(gd).CUDAStream()) })
	return e.s, e.err
}

func newSolver(gd *gocu.Device, dev *cuda.Device, st *cuda.Stream) (*solver, error) {
	if err := cusolver.Load(); err != nil {
		return nil, err
	}
	s := &solver{gd: gd, dev: dev, stream: st}
	err := dev.WithContext(func() error {
		var err error
		if s.h, err = cusolver.Create(); err != nil {
			return err
		}
		if err = s.h.SetStream(st.Handle()); err != nil {
			return err
		}
		if s.blas, err = cublas.Create(); err != nil {
			return err
		}
		if err = s.blas.SetStream(st.Handle()); err != nil {
			return err
		}
		if s.svdj, err = cusolver.NewGesvdjInfo(); err != nil {
			return err
		}
		s.eigj, err = cusolver.NewSyevjInfo()
		return err
	})
	if err != nil {
		_ = dev.WithContext(func() error {
			if s.h != nil {
				_ = s.h.Destroy()
			}
			if s.blas != nil {
				_ = s.blas.Destroy()
			}
			_ = s.svdj.Destroy()
			return nil
		})
		return nil, err
	}
	return s, nil
}

// ptrs holds the buffers whose device pointers a call uses, to free their
// views once the work is queued.
type ptrs struct {
	free []func()
	err  error
	arrs map[[3]uint64]uint64 // pointer arrays made, by base, stride, count
}

// of returns the device pointer of contiguous x.
func (p *ptrs) of(x *array.Array) uint64 {
	if p.err != nil {
		return 0
	}
	var v uint64
	switch x.DType() {
	case array.Float32:
		v = bufPtr(p, array.AsBuffer[float32](x))
	case array.Float64:
		v = bufPtr(p, array.AsBuffer[float64](x))
	case array.Int32:
		v = bufPtr(p, array.AsBuffer[int32](x))
	case array.Int64:
		v = bufPtr(p, array.AsBuffer[int64](x))
	default:
		p.err = fmt.Errorf("no device pointer for %v", x.DType())
	}
	return v
}

func bufPtr[T any](p *ptrs, b *gocu.Buffer[T]) uint64 {
	if err := b.Err(); err != nil {
		p.err = err
		return 0
	}
	d, err := b.DevicePointer()
	if err != nil {
		p.err = err
		return 0
	}
	p.free = append(p.free, func() { _ = b.Free() })
	return uint64(d)
}

func (p *ptrs) release() {
	for _, f := range p.free {
		f()
	}
}

// scratch is device memory for one call, freed in stream order.
type scratch struct {
	s    *solver
	mems []*cuda.Memory
}

func (sc *scratch) alloc(bytes int) (uint64, error) {
	m, err := sc.s.dev.AllocOn(sc.s.stream, max(bytes, 16))
	if err != nil {
		return 0, err
	}
	sc.mems = append(sc.mems, m)
	return uint64(m.Ptr()), nil
}

func (sc *scratch) release() {
	for _, m := range sc.mems {
		_ = m.Free()
	}
}

// pointerArray uploads the addresses base, base+stride, ... (nb of them)
// for the batched routines.
func (s *solver) pointerArray(p *ptrs, keep *[]*array.Array, base uint64, stride, nb int) uint64 {
	key := [3]uint64{base, uint64(stride), uint64(nb)}
	if d, ok := p.arrs[key]; ok {
		return d
	}
	v := make([]int64, nb)
	for i := range v {
		v[i] = int64(base) + int64(i)*int64(stride)
	}
	a := array.FromSliceOn(s.gd, v, nb)
	*keep = append(*keep, a)
	d := p.of(a)
	if p.err == nil {
		if p.arrs == nil {
			p.arrs = map[[3]uint64]uint64{}
		}
		p.arrs[key] = d
	}
	return d
}

func dtypeOf(dt array.DType) (cusolver.DType, int) {
	if dt == array.Float64 {
		return cusolver.Float64, 8
	}
	return cusolver.Float32, 4
}

// checkInfo reads the info values and reports the first positive one as
// kind, unless SetCheckInfo(false).
func checkInfo(op string, info *array.Array, kind error, batch []int, msg string) error {
	if noCheck.Load() {
		return nil
	}
	v, err := array.ToSlice[int32](info)
	if err != nil {
		return deviceErr(op, err)
	}
	for i, x := range v {
		if x > 0 {
			return numErr(op, kind, batch, i, "%s", msg)
		}
		if x < 0 {
			return deviceErr(op, fmt.Errorf("cuSOLVER rejected argument %d", -x))
		}
	}
	return nil
}

// run queues the work of one call: it resolves the pointers of arrs,
// runs f with them on a thread with the device's context, and frees the
// temporary views and scratch memory in stream order.
func (s *solver) run(op string, arrs []*array.Array, f func(p []uint64, sc *scratch, pp *ptrs, keep *[]*array.Array) error) error {
	var pp ptrs
	defer pp.release()
	sc := &scratch{s: s}
	defer sc.release()
	var keep []*array.Array
	defer func() {
		for _, a := range keep {
			_ = a.Close()
		}
	}()
	p := make([]uint64, len(arrs))
	for i, a := range arrs {
		p[i] = pp.of(a)
	}
	if pp.err != nil {
		return deviceErr(op, pp.err)
	}
	if err := s.dev.WithContext(func() error { return f(p, sc, &pp, &keep) }); err != nil {
		return deviceErr(op, err)
	}
	return nil
}

// lu factors nb n×n matrices at a (column-major, densely after each
// other) into a, with pivots at ipiv (n int32 each) and info (one each).
func (s *solver) lu(dt cusolver.DType, es int, a, ipiv, info uint64, n, nb int, sc *scratch, pp *ptrs, keep *[]*array.Array) error {
	if nb > 1 && n <= batchedLU {
		pa := s.pointerArray(pp, keep, a, n*n*es, nb)
		if pp.err != nil {
			return pp.err
		}
		return s.blas.GetrfBatched(dt == cusolver.Float64, n, pa, n, ipiv, info, nb)
	}
	lw, err := s.h.GetrfBufferSize(dt, n, n, a, n)
	if err != nil {
		return err
	}
	work, err := sc.alloc(lw * es)
	if err != nil {
		return err
	}
	for i := range nb {
		if err := s.h.Getrf(dt, n, n, a+uint64(i*n*n*es), n, work, ipiv+uint64(i*n*4), info+uint64(i*4)); err != nil {
			return err
		}
	}
	return nil
}

// luSolve solves op(A_i)·X_i = B_i with the factors of lu; b holds nb
// column-major n×k matrices.
func (s *solver) luSolve(dt cusolver.DType, es int, op cusolver.Op, a, ipiv, b uint64, n, k, nb int, sc *scratch, pp *ptrs, keep *[]*array.Array) error {
	if nb > 1 && n <= batchedLU {
		pa := s.pointerArray(pp, keep, a, n*n*es, nb)
		pb := s.pointerArray(pp, keep, b, n*k*es, nb)
		if pp.err != nil {
			return pp.err
		}
		return s.blas.GetrsBatched(dt == cusolver.Float64, cublas.Op(op), n, k, pa, n, ipiv, pb, n, nb)
	}
	info, err := sc.alloc(4)
	if err != nil {
		return err
	}
	for i := range nb {
		if err := s.h.Getrs(dt, op, n, k, a+uint64(i*n*n*es), n, ipiv+uint64(i*n*4), b+uint64(i*n*k*es), n, info); err != nil {
			return err
		}
	}
	return nil
}

// gpuSolve: a·x = b. The factors are those of Aᵀ (a as stored, read
// column-major), so the solve uses them transposed; b is copied to
// column-major, and the result's storage, column-major n×k, is returned
// as the transposed view.
func gpuSolve(op string, a, b *array.Array, batch []int, n, k int) *array.Array {
	nb := prod(batch)
	if nb*n*k == 0 {
		return cpuSolveArrays(op, a, b, batch, n, k)
	}
	s, err := solverFor(a)
	if err != nil {
		return array.Failed(deviceErr(op, err))
	}
	dt, es := dtypeOf(a.DType())
	mk := array.On(a.Device())
	w := a.Copy()
	x := b.SwapAxes(-1, -2).Copy()
	info := mk.Zeros(array.Int32, max(nb, 1))
	err = s.run(op, []*array.Array{w, x, info}, func(p []uint64, sc *scratch, pp *ptrs, keep *[]*array.Array) error {
		ipiv, err := sc.alloc(nb * n * 4)
		if err != nil {
			return err
		}
		if err := s.lu(dt, es, p[0], ipiv, p[2], n, nb, sc, pp, keep); err != nil {
			return err
		}
		return s.luSolve(dt, es, cusolver.Trans, p[0], ipiv, p[1], n, k, nb, sc, pp, keep)
	})
	if err == nil {
		err = checkInfo(op, info, ErrSingular, batch, "singular matrix")
	}
	_ = w.Close()
	if err != nil {
		return array.Failed(err)
	}
	return x.SwapAxes(-1, -2)
}

// gpuInv: the inverse of Aᵀ (a as stored, read column-major), solved
// against the identity, is (A⁻¹)ᵀ column-major: A⁻¹ row-major.
func gpuInv(op string, a *array.Array, batch []int, n int) *array.Array {
	nb := prod(batch)
	if nb*n == 0 {
		return cpuInvArrays(op, a, batch, n)
	}
	s, err := solverFor(a)
	if err != nil {
		return array.Failed(deviceErr(op, err))
	}
	dt, es := dtypeOf(a.DType())
	mk := array.On(a.Device())
	w := a.Copy()
	x := mk.Eye(a.DType(), n).BroadcastTo(concat(batch, n, n)...).Copy()
	info := mk.Zeros(array.Int32, nb)
	err = s.run(op, []*array.Array{w, x, info}, func(p []uint64, sc *scratch, pp *ptrs, keep *[]*array.Array) error {
		ipiv, err := sc.alloc(nb * n * 4)
		if err != nil {
			return err
		}
		if err := s.lu(dt, es, p[0], ipiv, p[2], n, nb, sc, pp, keep); err != nil {
			return err
		}
		return s.luSolve(dt, es, cusolver.NoTrans, p[0], ipiv, p[1], n, n, nb, sc, pp, keep)
	})
	if err == nil {
		err = checkInfo(op, info, ErrSingular, batch, "singular matrix")
	}
	_ = w.Close()
	if err != nil {
		return array.Failed(err)
	}
	return x
}

// gpuSlogdet: det(Aᵀ) = det(A), from the LU factors: the product of U's
// diagonal and the pivots' parity, computed with array operations (no
// wait for the GPU).
func gpuSlogdet(op string, a *array.Array, batch []int, n int) (sign, logabsdet *array.Array) {
	nb := prod(batch)
	if nb*n == 0 {
		return cpuSlogdetArrays(a, batch, n)
	}
	s, err := solverFor(a)
	if err != nil {
		f := fail(2, deviceErr(op, err))
		return f[0], f[1]
	}
	dt, es := dtypeOf(a.DType())
	mk := array.On(a.Device())
	w := a.Copy()
	piv := mk.Zeros(array.Int32, nb, n)
	info := mk.Zeros(array.Int32, nb)
	err = s.run(op, []*array.Array{w, piv, info}, func(p []uint64, sc *scratch, pp *ptrs, keep *[]*array.Array) error {
		return s.lu(dt, es, p[0], p[1], p[2], n, nb, sc, pp, keep)
	})
	if err != nil {
		f := fail(2, err)
		return f[0], f[1]
	}
	return slogdetFromLU(mk, w, piv, batch, n)
}

// slogdetFromLU computes sign and log|det| from LU factors (either
// layout: U's diagonal is where it is either way) and 1-based pivots, with
// array operations.
func slogdetFromLU(mk *array.Maker, lu, piv *array.Array, batch []int, n int) (sign, logabsdet *array.Array) {
	nb := prod(batch)
	d := lu.Reshape(nb, n*n).Slice(array.All, array.S(0, n*n, n+1)) // U's diagonal
	swaps := piv.Reshape(nb, n).Ne(mk.Arange(array.Int32, 1, float64(n+1))).AsType(array.Int64).Sum(-1)
	negs := d.Lt(0).AsType(array.Int64).Sum(-1)
	odd := swaps.Add(negs).Mod(2).Eq(1)
	one := mk.Ones(lu.DType(), nb)
	sgn := array.Where(d.Eq(0).Any(-1), one.Mul(0), array.Where(odd, one.Neg(), one))
	logabs := d.Abs().Log().Sum(-1)
	return sgn.Reshape(batch...), logabs.Reshape(batch...)
}

// gpuCholesky: a as stored is, column-major, Aᵀ, whose upper triangle is
// a's lower one; its upper factor U (Aᵀ = Uᵀ·U) read row-major is L.
func gpuCholesky(op string, a *array.Array, batch []int, n int) *array.Array {
	nb := prod(batch)
	if nb*n == 0 {
		return cpuCholeskyArrays(op, a, batch, n)
	}
	s, err := solverFor(a)
	if err != nil {
		return array.Failed(deviceErr(op, err))
	}
	dt, es := dtypeOf(a.DType())
	mk := array.On(a.Device())
	w := a.Copy()
	info := mk.Zeros(array.Int32, nb)
	err = s.run(op, []*array.Array{w, info}, func(p []uint64, sc *scratch, pp *ptrs, keep *[]*array.Array) error {
		if nb > 1 && n <= batchedChol {
			pa := s.pointerArray(pp, keep, p[0], n*n*es, nb)
			if pp.err != nil {
				return pp.err
			}
			return s.h.PotrfBatched(dt, cusolver.Upper, n, pa, n, p[1], nb)
		}
		lw, err := s.h.PotrfBufferSize(dt, cusolver.Upper, n, p[0], n)
		if err != nil {
			return err
		}
		work, err := sc.alloc(lw * es)
		if err != nil {
			return err
		}
		for i := range nb {
			if err := s.h.Potrf(dt, cusolver.Upper, n, p[0]+uint64(i*n*n*es), n, work, lw, p[1]+uint64(i*4)); err != nil {
				return err
			}
		}
		return nil
	})
	if err == nil {
		err = checkInfo(op, info, ErrNotPositiveDefinite, batch, "matrix is not positive definite")
	}
	if err != nil {
		return array.Failed(err)
	}
	return array.Where(lowerMask(mk, n), w, 0)
}

// lowerMask is true on and below the diagonal of an n×n matrix.
func lowerMask(mk *array.Maker, n int) *array.Array {
	i := mk.Arange(array.Int32, float64(n))
	return i.ExpandDims(1).Ge(i.ExpandDims(0))
}

// gpuQR: geqrf needs A column-major, a transposed copy; R is read back
// through the transposed view, Q is formed (orgqr) in a copy of the
// reflectors and returned as its transposed view.
func gpuQR(op string, a *array.Array, batch []int, m, n int, mode QRMode) (q, r *array.Array) {
	nb := prod(batch)
	k := min(m, n)
	if nb*k == 0 {
		return cpuQRArrays(a, batch, m, n, mode)
	}
	s, err := solverFor(a)
	if err != nil {
		f := fail(2, deviceErr(op, err))
		return f[0], f[1]
	}
	dt, es := dtypeOf(a.DType())
	mk := array.On(a.Device())
	at := a.SwapAxes(-1, -2).Copy() // (..., n, m): column-major A
	tau := mk.Zeros(a.DType(), nb, k)
	info := mk.Zeros(array.Int32, nb)
	err = s.run(op, []*array.Array{at, tau, info}, func(p []uint64, sc *scratch, pp *ptrs, keep *[]*array.Array) error {
		lw, err := s.h.GeqrfBufferSize(dt, m, n, p[0], m)
		if err != nil {
			return err
		}
		work, err := sc.alloc(lw * es)
		if err != nil {
			return err
		}
		for i := range nb {
			if err := s.h.Geqrf(dt, m, n, p[0]+uint64(i*m*n*es), m, p[1]+uint64(i*k*es), work, lw, p[2]+uint64(i*4)); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		f := fail(2, err)
		return f[0], f[1]
	}
	rr := k
	if mode == Complete {
		rr = m
	}
	// (..., m, n), R in its upper triangle; rr ≤ m rows.
	f := at.SwapAxes(-1, -2).Slice(array.Ellipsis, array.S(0, rr), array.All)
	upper := mk.Arange(array.Int32, float64(rr)).ExpandDims(1).Le(mk.Arange(array.Int32, float64(n)).ExpandDims(0))
	r = array.Where(upper, f, 0)
	if mode == ROnly {
		return nil, r
	}
	qc := k
	if mode == Complete {
		qc = m
	}
	// Q's storage: qc column-major columns of m, the first k the reflectors.
	qs := at.Slice(array.Ellipsis, array.S(0, k), array.All)
	if qc > k {
		qs = array.Concat(-2, qs, mk.Zeros(a.DType(), concat(batch, qc-k, m)...))
	}
	qs = qs.Copy()
	err = s.run(op, []*array.Array{qs, tau, info}, func(p []uint64, sc *scratch, pp *ptrs, keep *[]*array.Array) error {
		lw, err := s.h.OrgqrBufferSize(dt, m, qc, k, p[0], m, p[1])
		if err != nil {
			return err
		}
		work, err := sc.alloc(lw * es)
		if err != nil {
			return err
		}
		for i := range nb {
			if err := s.h.Orgqr(dt, m, qc, k, p[0]+uint64(i*m*qc*es), m, p[1]+uint64(i*k*es), work, lw, p[2]+uint64(i*4)); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		f := fail(2, err)
		return f[0], f[1]
	}
	return qs.SwapAxes(-1, -2), r
}

// gpuSVD: a as stored is, column-major, Aᵀ (n×m) = V·S·Uᵀ. The Jacobi SVD
// of it gives, column-major, V (n × vc) and U (m × uc); read row-major
// those are vh (vc × n) as is and Uᵀ, returned as its transposed view.
func gpuSVD(op string, a *array.Array, batch []int, m, n int, full, uv bool) []*array.Array {
	nb := prod(batch)
	k := min(m, n)
	if nb*k == 0 {
		return cpuSVDArrays(op, a, batch, m, n, full, uv)
	}
	s, err := solverFor(a)
	if err != nil {
		return fail(3, deviceErr(op, err))
	}
	if SVDDriver(svdDriver.Load()) == QRIteration {
		return gesvd(op, s, a, batch, m, n, full, uv)
	}
	dt, es := dtypeOf(a.DType())
	mk := array.On(a.Device())
	batched := nb > 1 && m <= batchedJac && n <= batchedJac
	// The batched routine always computes full factors.
	fullCalc := full || batched
	uc, vc := k, k
	if fullCalc {
		uc, vc = m, n
	}
	w := a.Copy()
	sv := mk.Empty(a.DType(), concat(batch, k)...)
	info := mk.Zeros(array.Int32, nb)
	arrs := []*array.Array{w, sv, info}
	// The vectors are computed even when only the values are wanted:
	// gesvdj without them failed on an H200 (CUSOLVER_STATUS_EXECUTION_FAILED
	// for a 6×4 float64 matrix, then an illegal address).
	ub := mk.Empty(a.DType(), concat(batch, uc, m)...) // column-major U (m × uc) and V (n × vc) of A
	vb := mk.Empty(a.DType(), concat(batch, vc, n)...)
	arrs = append(arrs, vb, ub) // the U and V of Aᵀ
	err = s.run(op, arrs, func(p []uint64, sc *scratch, pp *ptrs, keep *[]*array.Array) error {
		jobz, pu, pv := cusolver.Vectors, p[3], p[4]
		s.jac.Lock()
		defer s.jac.Unlock()
		// Of Aᵀ: rows n, columns m; its U is n×(n or k), its V m×(m or k).
		d := &cusolver.SVD{Jobz: jobz, Econ: !fullCalc, M: n, N: m, A: p[0], LDA: n, S: p[1],
			U: pu, LDU: n, V: pv, LDV: m, Info: p[2], Params: s.svdj}
		if batched {
			d.Batch = nb
			lw, err := s.h.GesvdjBatchedBufferSize(dt, d)
			if err != nil {
				return err
			}
			if d.Work, err = sc.alloc(lw * es); err != nil {
				return err
			}
			d.LWork = lw
			return s.h.GesvdjBatched(dt, d)
		}
		lw, err := s.h.GesvdjBufferSize(dt, d)
		if err != nil {
			return err
		}
		if d.Work, err = sc.alloc(lw * es); err != nil {
			return err
		}
		d.LWork = lw
		base := *d
		for i := range nb {
			d.A = base.A + uint64(i*m*n*es)
			d.S = base.S + uint64(i*k*es)
			d.Info = base.Info + uint64(i*4)
			d.U = base.U + uint64(i*n*vc*es)
			d.V = base.V + uint64(i*m*uc*es)
			if err := s.h.Gesvdj(dt, d); err != nil {
				return err
			}
		}
		return nil
	})
	if err == nil {
		err = checkInfo(op, info, ErrNoConvergence, batch, "SVD did not converge")
	}
	_ = w.Close()
	if err != nil {
		return fail(3, err)
	}
	if !uv {
		_, _ = ub.Close(), vb.Close()
		return []*array.Array{nil, sv, nil}
	}
	u := ub.SwapAxes(-1, -2) // (..., m, uc)
	vh := vb                 // (..., vc, n)
	if batched && !full {
		u = u.Slice(array.Ellipsis, array.S(0, k))
		vh = vh.Slice(array.Ellipsis, array.S(0, k), array.All)
	}
	return []*array.Array{u, sv, vh}
}

// gpuEigh: a as stored is, column-major, Aᵀ = A, whose upper triangle is
// a's lower one; its eigenvectors come out as the columns of the
// column-major result, the rows read row-major: v is the transposed view.
func gpuEigh(op string, a *array.Array, batch []int, n int, vectors bool) []*array.Array {
	nb := prod(batch)
	if nb*n == 0 {
		return cpuEighArrays(op, a, batch, n, vectors)
	}
	s, err := solverFor(a)
	if err != nil {
		return fail(2, deviceErr(op, err))
	}
	dt, es := dtypeOf(a.DType())
	mk := array.On(a.Device())
	w := a.Copy()
	ev := mk.Empty(a.DType(), concat(batch, n)...)
	info := mk.Zeros(array.Int32, nb)
	jobz := cusolver.NoVectors
	if vectors {
		jobz = cusolver.Vectors
	}
	err = s.run(op, []*array.Array{w, ev, info}, func(p []uint64, sc *scratch, pp *ptrs, keep *[]*array.Array) error {
		if nb > 1 && n <= batchedJac {
			s.jac.Lock()
			defer s.jac.Unlock()
			e := &cusolver.Eig{Jobz: jobz, Uplo: cusolver.Upper, N: n, A: p[0], LDA: n, W: p[1], Info: p[2], Batch: nb, Params: s.eigj}
			lw, err := s.h.SyevjBatchedBufferSize(dt, e)
			if err != nil {
				return err
			}
			if e.Work, err = sc.alloc(lw * es); err != nil {
				return err
			}
			e.LWork = lw
			return s.h.SyevjBatched(dt, e)
		}
		lw, err := s.h.SyevdBufferSize(dt, jobz, cusolver.Upper, n, p[0], n, p[1])
		if err != nil {
			return err
		}
		work, err := sc.alloc(lw * es)
		if err != nil {
			return err
		}
		for i := range nb {
			if err := s.h.Syevd(dt, jobz, cusolver.Upper, n, p[0]+uint64(i*n*n*es), n, p[1]+uint64(i*n*es), work, lw, p[2]+uint64(i*4)); err != nil {
				return err
			}
		}
		return nil
	})
	if err == nil {
		err = checkInfo(op, info, ErrNoConvergence, batch, "eigenvalues did not converge")
	}
	if err != nil {
		return fail(2, err)
	}
	if !vectors {
		_ = w.Close()
		return []*array.Array{ev, nil}
	}
	return []*array.Array{ev, w.SwapAxes(-1, -2)}
}

// SVDDriver chooses the GPU's SVD algorithm, as torch.linalg.svd's driver.
type SVDDriver int32

// The drivers. The CPU always uses LAPACK's QR iteration (gonum's Dgesvd).
const (
	// Jacobi is cuSOLVER's gesvdj (and gesvdjBatched for batches of
	// matrices up to 32×32): one-sided Jacobi rotations, accurate and
	// parallel; the default.
	Jacobi SVDDriver = iota
	// QRIteration is cuSOLVER's gesvd, bidiagonalisation and QR
	// iteration, what CuPy uses.
	QRIteration
)

var svdDriver atomic.Int32

// SetSVDDriver sets the GPU's SVD algorithm for the whole process and
// returns the previous one.
func SetSVDDriver(d SVDDriver) SVDDriver { return SVDDriver(svdDriver.Swap(int32(d))) }

// gesvd is the SVD by cuSOLVER's gesvd, which needs rows ≥ columns in
// column-major order. For m ≤ n, a as stored is Aᵀ (n×m), whose U and Vᵀ
// read row-major are vh and u. For m > n it factors a column-major copy
// of A, and both come out as transposed views.
func gesvd(op string, s *solver, a *array.Array, batch []int, m, n int, full, uv bool) []*array.Array {
	nb := prod(batch)
	k := min(m, n)
	dt, es := dtypeOf(a.DType())
	mk := array.On(a.Device())
	wide := m <= n
	rows, cols := n, m // of the column-major matrix factored
	w := a.Copy()
	if !wide {
		rows, cols = m, n
		w = a.SwapAxes(-1, -2).Copy()
	}
	job, ur, vr := cusolver.JobNone, 0, 0 // U is rows×ur, Vᵀ vr×cols
	switch {
	case uv && full:
		job, ur, vr = cusolver.JobAll, rows, cols
	case uv:
		job, ur, vr = cusolver.JobSome, k, k
	}
	sv := mk.Empty(a.DType(), concat(batch, k)...)
	info := mk.Zeros(array.Int32, nb)
	arrs := []*array.Array{w, sv, info}
	var ub, vb *array.Array
	if uv {
		ub = mk.Empty(a.DType(), concat(batch, ur, rows)...) // column-major rows×ur
		vb = mk.Empty(a.DType(), concat(batch, cols, vr)...) // column-major vr×cols
		arrs = append(arrs, ub, vb)
	}
	err := s.run(op, arrs, func(p []uint64, sc *scratch, pp *ptrs, keep *[]*array.Array) error {
		lw, err := s.h.GesvdBufferSize(dt, rows, cols)
		if err != nil {
			return err
		}
		work, err := sc.alloc(lw * es)
		if err != nil {
			return err
		}
		var pu, pv uint64
		for i := range nb {
			if uv {
				pu, pv = p[3]+uint64(i*rows*ur*es), p[4]+uint64(i*vr*cols*es)
			}
			if err := s.h.Gesvd(dt, job, job, rows, cols, p[0]+uint64(i*m*n*es), rows, p[1]+uint64(i*k*es),
				pu, rows, pv, max(vr, 1), work, lw, 0, p[2]+uint64(i*4)); err != nil {
				return err
			}
		}
		return nil
	})
	if err == nil {
		err = checkInfo(op, info, ErrNoConvergence, batch, "SVD did not converge")
	}
	_ = w.Close()
	if err != nil {
		return fail(3, err)
	}
	if !uv {
		return []*array.Array{nil, sv, nil}
	}
	// ub read row-major is Uᵀ of the factored matrix (ur × rows), vb is
	// (Vᵀ)ᵀ = V (cols × vr).
	if wide {
		// Factored Aᵀ = V·S·Uᵀ: its U is A's V, its V is A's U.
		return []*array.Array{vb, sv, ub}
	}
	return []*array.Array{ub.SwapAxes(-1, -2), sv, vb.SwapAxes(-1, -2)}
}
