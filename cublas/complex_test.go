package cublas

import (
	"math"
	"math/cmplx"
	"testing"
)

// TestComplexGemmScalars checks the cuComplex and cuDoubleComplex alpha
// and beta that Cgemm and Zgemm hand over (through a fake library).
func TestComplexGemmScalars(t *testing.T) {
	h := &Handle{h: 1, l: fakeLib(t), scal: new([3]uint64)}
	const p = 0x7f0000000000
	if err := h.Cgemm(NoTrans, NoTrans, 4, 4, 4, 1.5-2i, p, 4, p, 4, 0.25i, p, 4); err != nil {
		t.Fatal(err)
	}
	w := func(v complex64) uint64 {
		return uint64(math.Float32bits(real(v))) | uint64(math.Float32bits(imag(v)))<<32
	}
	if h.scal[0] != w(1.5-2i) || h.scal[1] != w(0.25i) {
		t.Errorf("Cgemm scalars %x", h.scal)
	}
	if err := h.Zgemm(NoTrans, NoTrans, 4, 4, 4, -1+3i, p, 4, p, 4, 2, p, 4); err != nil {
		t.Fatal(err)
	}
	if h.zscal != [4]uint64{math.Float64bits(-1), math.Float64bits(3), math.Float64bits(2), 0} {
		t.Errorf("Zgemm scalars %x", h.zscal)
	}
	if err := h.Cgemm(Op(7), NoTrans, 4, 4, 4, 1, p, 4, p, 4, 0, p, 4); err == nil {
		t.Error("Cgemm accepted an invalid op")
	}
	if err := h.Zgemm(NoTrans, NoTrans, 4, 4, 4, 1, p, 2, p, 4, 0, p, 4); err == nil {
		t.Error("Zgemm accepted lda < m")
	}
}

// refCgemm is alpha·op(A)·op(B) in complex128, column-major.
func refCgemm(ta, tb Op, m, n, k int, alpha complex128, a []complex128, lda int, b []complex128, ldb int) []complex128 {
	at := func(x []complex128, ld int, op Op, i, j int) complex128 {
		switch op {
		case Trans:
			return x[j+i*ld]
		case ConjTrans:
			return cmplx.Conj(x[j+i*ld])
		}
		return x[i+j*ld]
	}
	c := make([]complex128, m*n)
	for i := range m {
		for j := range n {
			var s complex128
			for l := range k {
				s += at(a, lda, ta, i, l) * at(b, ldb, tb, l, j)
			}
			c[i+j*m] = alpha * s
		}
	}
	return c
}

func TestGPUCgemmZgemm(t *testing.T) {
	g := needGPU(t)
	h := newHandle(t)
	r := newRand(t)
	const m, n, k = 5, 3, 4
	for _, ops := range [][2]Op{{NoTrans, NoTrans}, {ConjTrans, Trans}, {Trans, ConjTrans}} {
		ta, tb := ops[0], ops[1]
		ar, ac := m, k
		if ta != NoTrans {
			ar, ac = k, m
		}
		br, bc := k, n
		if tb != NoTrans {
			br, bc = n, k
		}
		a := make([]complex128, ar*ac)
		b := make([]complex128, br*bc)
		for i := range a {
			a[i] = complex(float64(float32(r.NormFloat64())), float64(float32(r.NormFloat64())))
		}
		for i := range b {
			b[i] = complex(float64(float32(r.NormFloat64())), float64(float32(r.NormFloat64())))
		}
		alpha := complex(0.5, -1.25)
		want := refCgemm(ta, tb, m, n, k, alpha, a, ar, b, br)
		poison := make([]complex128, m*n)
		for i := range poison {
			poison[i] = cmplx.NaN()
		}
		pa, pb, pc := upload(t, g, a), upload(t, g, b), upload(t, g, poison)
		if err := h.Zgemm(ta, tb, m, n, k, alpha, pa, ar, pb, br, 0, pc, m); err != nil {
			t.Fatal(err)
		}
		for i, v := range download[complex128](t, g, pc, m*n) {
			if cmplx.Abs(v-want[i]) > 1e-12*float64(k) {
				t.Errorf("Zgemm %v %v [%d] = %v, want %v", ta, tb, i, v, want[i])
			}
		}
		a64, b64, p64 := make([]complex64, len(a)), make([]complex64, len(b)), make([]complex64, m*n)
		for i, v := range a {
			a64[i] = complex64(v)
		}
		for i, v := range b {
			b64[i] = complex64(v)
		}
		for i := range p64 {
			p64[i] = complex64(cmplx.NaN())
		}
		qa, qb, qc := upload(t, g, a64), upload(t, g, b64), upload(t, g, p64)
		if err := h.Cgemm(ta, tb, m, n, k, complex64(alpha), qa, ar, qb, br, 0, qc, m); err != nil {
			t.Fatal(err)
		}
		for i, v := range download[complex64](t, g, qc, m*n) {
			if cmplx.Abs(complex128(v)-want[i]) > 1e-5*float64(k) {
				t.Errorf("Cgemm %v %v [%d] = %v, want %v", ta, tb, i, v, want[i])
			}
		}
	}
}
