package linalg

import (
	"math"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/lapack"
	"gonum.org/v1/gonum/lapack/gonum"
)

// The CPU backend: gonum's LAPACK, which is pure Go and row-major (no
// transposes), in float64 whatever the input dtype (float32 results are
// rounded once at the end), with the matrices of a batch in parallel.

var impl gonum.Implementation

// cpuLU factors each n×n matrix of a in place; piv gets the 0-based pivot
// rows. singular[i] is set when matrix i has a zero pivot.
func cpuLU(a []float64, nb, n int) (piv []int, singular []bool) {
	piv = make([]int, nb*n)
	singular = make([]bool, nb)
	parallel(nb, func(i int) {
		if !impl.Dgetrf(n, n, a[i*n*n:(i+1)*n*n], max(n, 1), piv[i*n:(i+1)*n]) {
			singular[i] = true
		}
	})
	return piv, singular
}

// cpuSolve solves A_i X_i = B_i (A n×n, B n×k) into b; singular is set for
// matrices with a zero pivot.
func cpuSolve(a, b []float64, nb, n, k int) (singular []bool) {
	piv, singular := cpuLU(a, nb, n)
	parallel(nb, func(i int) {
		if !singular[i] && k > 0 {
			impl.Dgetrs(blas.NoTrans, n, k, a[i*n*n:(i+1)*n*n], max(n, 1), piv[i*n:(i+1)*n], b[i*n*k:(i+1)*n*k], max(k, 1))
		}
	})
	return singular
}

// cpuInv inverts each matrix of a in place.
func cpuInv(a []float64, nb, n int) (singular []bool) {
	piv, singular := cpuLU(a, nb, n)
	parallel(nb, func(i int) {
		if singular[i] || n == 0 {
			return
		}
		m := a[i*n*n : (i+1)*n*n]
		work := make([]float64, 1)
		impl.Dgetri(n, m, n, piv[i*n:(i+1)*n], work, -1)
		work = make([]float64, int(work[0]))
		if !impl.Dgetri(n, m, n, piv[i*n:(i+1)*n], work, len(work)) {
			singular[i] = true
		}
	})
	return singular
}

// cpuSlogdet returns the sign and log|det| of each matrix of a (a is
// destroyed): 0 and -Inf for a singular one, as NumPy.
func cpuSlogdet(a []float64, nb, n int) (sign, logdet []float64) {
	piv, singular := cpuLU(a, nb, n)
	sign, logdet = make([]float64, nb), make([]float64, nb)
	parallel(nb, func(i int) {
		if singular[i] {
			sign[i], logdet[i] = 0, math.Inf(-1)
			return
		}
		s, l := 1.0, 0.0
		for j := range n {
			d := a[i*n*n+j*n+j]
			if d < 0 {
				s = -s
			}
			l += math.Log(math.Abs(d))
			if piv[i*n+j] != j {
				s = -s
			}
		}
		sign[i], logdet[i] = s, l
	})
	return sign, logdet
}

// cpuCholesky replaces each matrix of a by its lower Cholesky factor,
// reading the lower triangle only and zeroing the upper one.
func cpuCholesky(a []float64, nb, n int) (bad []bool) {
	bad = make([]bool, nb)
	parallel(nb, func(i int) {
		m := a[i*n*n : (i+1)*n*n]
		if !impl.Dpotrf(blas.Lower, n, m, max(n, 1)) {
			bad[i] = true
			return
		}
		for r := range n {
			clear(m[r*n+r+1 : r*n+n])
		}
	})
	return bad
}

// cpuQR factors each m×n matrix of a. complete selects Q m×m and R m×n;
// otherwise Q is m×k and R k×n (k = min(m, n)). wantQ false skips Q.
func cpuQR(a []float64, nb, m, n int, complete, wantQ bool) (q, r []float64) {
	k := min(m, n)
	qc, rr := k, k
	if complete {
		qc, rr = m, m
	}
	r = make([]float64, nb*rr*n)
	if wantQ {
		q = make([]float64, nb*m*qc)
	}
	parallel(nb, func(i int) {
		x := a[i*m*n : (i+1)*m*n]
		tau := make([]float64, k)
		if m > 0 && n > 0 {
			work := make([]float64, 1)
			impl.Dgeqrf(m, n, x, n, tau, work, -1)
			work = make([]float64, max(int(work[0]), 1))
			impl.Dgeqrf(m, n, x, n, tau, work, len(work))
		}
		ri := r[i*rr*n : (i+1)*rr*n]
		for row := range k {
			copy(ri[row*n+row:row*n+n], x[row*n+row:row*n+n])
		}
		if !wantQ {
			return
		}
		qi := q[i*m*qc : (i+1)*m*qc]
		for row := range m {
			copy(qi[row*qc:row*qc+min(qc, n)], x[row*n:row*n+min(qc, n)])
		}
		if m > 0 && qc > 0 {
			work := make([]float64, 1)
			impl.Dorgqr(m, qc, k, qi, qc, tau, work, -1)
			work = make([]float64, max(int(work[0]), 1))
			impl.Dorgqr(m, qc, k, qi, qc, tau, work, len(work))
		}
	})
	return q, r
}

// cpuSVD computes the SVD of each m×n matrix of a (destroyed): s gets k =
// min(m, n) values, descending; with uv, u is m×m and vt n×n (full) or
// m×k and k×n.
func cpuSVD(a []float64, nb, m, n int, full, uv bool) (u, s, vt []float64, bad []bool) {
	k := min(m, n)
	job, uc, vr := lapack.SVDNone, 0, 0
	switch {
	case uv && full:
		job, uc, vr = lapack.SVDAll, m, n
	case uv:
		job, uc, vr = lapack.SVDStore, k, k
	}
	s = make([]float64, nb*k)
	if uv {
		u, vt = make([]float64, nb*m*uc), make([]float64, nb*vr*n)
	}
	bad = make([]bool, nb)
	parallel(nb, func(i int) {
		if k == 0 {
			// Empty: the orthogonal factors of a full SVD are identities.
			eye(u[i*m*uc:(i+1)*m*uc], uc)
			eye(vt[i*vr*n:(i+1)*vr*n], n)
			return
		}
		x := a[i*m*n : (i+1)*m*n]
		var ui, vi []float64
		if uv {
			ui, vi = u[i*m*uc:(i+1)*m*uc], vt[i*vr*n:(i+1)*vr*n]
		}
		si := s[i*k : (i+1)*k]
		work := make([]float64, 1)
		impl.Dgesvd(job, job, m, n, x, n, si, ui, max(uc, 1), vi, max(n, 1), work, -1)
		work = make([]float64, max(int(work[0]), 1))
		if !impl.Dgesvd(job, job, m, n, x, n, si, ui, max(uc, 1), vi, max(n, 1), work, len(work)) {
			bad[i] = true
		}
	})
	return u, s, vt, bad
}

// eye writes an identity of order n (rows of length n) into a, if any.
func eye(a []float64, n int) {
	if n == 0 || len(a) < n*n {
		return
	}
	clear(a)
	for i := range n {
		a[i*n+i] = 1
	}
}

// cpuEigh computes the eigenvalues (ascending) and, with vectors, the
// eigenvectors (as columns, in a) of each symmetric matrix of a, from its
// lower triangle.
func cpuEigh(a []float64, nb, n int, vectors bool) (w []float64, bad []bool) {
	w = make([]float64, nb*n)
	bad = make([]bool, nb)
	job := lapack.EVNone
	if vectors {
		job = lapack.EVCompute
	}
	parallel(nb, func(i int) {
		if n == 0 {
			return
		}
		x := a[i*n*n : (i+1)*n*n]
		wi := w[i*n : (i+1)*n]
		work := make([]float64, 1)
		impl.Dsyev(job, blas.Lower, n, x, n, wi, work, -1)
		work = make([]float64, max(int(work[0]), 1))
		if !impl.Dsyev(job, blas.Lower, n, x, n, wi, work, len(work)) {
			bad[i] = true
		}
	})
	return w, bad
}
