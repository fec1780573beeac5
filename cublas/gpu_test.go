package cublas

// GPU tests: they need libcublas, libcuda and a GPU, and skip otherwise.
// Results are compared with a float64 reference on fresh random inputs;
// outputs are poisoned first, and padding rows must survive untouched.

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"
	"time"
)

const u32, u64 = 0x1p-24, 0x1p-53 // unit roundoffs

func newRand(t testing.TB) *rand.Rand {
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	return rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15))
}

func randoms(r *rand.Rand, n int) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = r.Float64()*2 - 1
	}
	return out
}

func to32(x []float64) []float32 {
	out := make([]float32, len(x))
	for i, v := range x {
		out[i] = float32(v)
	}
	return out
}

// exact32 rounds x to float32 in place so the reference sees the inputs
// the GPU sees.
func exact32(x []float64) []float64 {
	for i, v := range x {
		x[i] = float64(float32(v))
	}
	return x
}

// refGemm computes alpha op(A) op(B) + beta C in float64, column-major, and
// for each element the error scale |alpha| Σ|op(A)||op(B)| + |beta||C|.
func refGemm(ta, tb Op, m, n, k int, alpha float64, a []float64, lda int, b []float64, ldb int, beta float64, c []float64, ldc int) (ref, scale []float64) {
	ref = append([]float64(nil), c...)
	scale = make([]float64, len(c))
	opA := func(i, l int) float64 {
		if ta == NoTrans {
			return a[i+l*lda]
		}
		return a[l+i*lda]
	}
	opB := func(l, j int) float64 {
		if tb == NoTrans {
			return b[l+j*ldb]
		}
		return b[j+l*ldb]
	}
	for j := range n {
		for i := range m {
			s, sa := 0.0, 0.0
			for l := range k {
				s += opA(i, l) * opB(l, j)
				sa += math.Abs(opA(i, l) * opB(l, j))
			}
			idx := i + j*ldc
			cv := c[idx]
			if beta == 0 {
				cv = 0 // C is not read when beta is 0 (it holds NaN poison)
			}
			ref[idx] = alpha*s + beta*cv
			scale[idx] = math.Abs(alpha)*sa + math.Abs(beta*cv)
		}
	}
	return ref, scale
}

// compare checks got against ref inside the m×n matrix and checks that the
// padding rows i >= m kept their poison.
func compare[T float32 | float64](t *testing.T, what string, got []T, ref, scale []float64, m, n, ld int, tol float64, poison []T) float64 {
	t.Helper()
	worst := 0.0
	for j := range n {
		for i := range ld {
			idx := i + j*ld
			g := float64(got[idx])
			if i >= m {
				if !sameBits(got[idx], poison[idx]) {
					t.Fatalf("%s: padding element (%d,%d) was overwritten: %v", what, i, j, g)
				}
				continue
			}
			err := math.Abs(g - ref[idx])
			if math.IsNaN(g) || err > tol*scale[idx]+1e-30 {
				t.Fatalf("%s: element (%d,%d) = %v, want %v (error %.3g, allowed %.3g)", what, i, j, g, ref[idx], err, tol*scale[idx])
			}
			if scale[idx] > 0 {
				worst = max(worst, err/scale[idx])
			}
		}
	}
	return worst
}

func nans[T float32 | float64](n int) []T {
	out := make([]T, n)
	for i := range out {
		out[i] = T(math.NaN())
	}
	return out
}

func sameBits[T float32 | float64](a, b T) bool {
	return a == b || a != a && b != b
}

// fill makes a column-major ld×cols matrix of random values.
func fill(r *rand.Rand, ld, cols int) []float64 { return exact32(randoms(r, ld*cols)) }

// poisoned returns an ld×n C: NaN where beta is 0 (never read, must be
// written), random values otherwise; padding rows always NaN or a sentinel.
func poisoned(r *rand.Rand, m, n, ld int, beta float64) []float64 {
	c := exact32(randoms(r, ld*n))
	for j := range n {
		for i := range ld {
			if beta == 0 || i >= m {
				c[i+j*ld] = math.NaN()
			}
			if i >= m && j%2 == 0 {
				c[i+j*ld] = 12345.5 // a finite sentinel too
			}
		}
	}
	return c
}

func TestSgemm(t *testing.T) {
	g := needGPU(t)
	h := newHandle(t)
	r := newRand(t)
	m, n, k := 67, 45, 129
	for _, ta := range []Op{NoTrans, Trans} {
		for _, tb := range []Op{NoTrans, Trans} {
			for _, beta := range []float64{0, -0.75} {
				ar, ac := storedRows(ta, m, k), storedRows(ta, k, m)
				br, bc := storedRows(tb, k, n), storedRows(tb, n, k)
				lda, ldb, ldc := ar+3, br+1, m+5
				a, b := fill(r, lda, ac), fill(r, ldb, bc)
				c := poisoned(r, m, n, ldc, beta)
				alpha := 1.5
				da, db, dc := upload(t, g, to32(a)), upload(t, g, to32(b)), upload(t, g, to32(c))
				if err := h.Sgemm(ta, tb, m, n, k, float32(alpha), da, lda, db, ldb, float32(beta), dc, ldc); err != nil {
					t.Fatal(err)
				}
				got := download[float32](t, g, dc, len(c))
				ref, scale := refGemm(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
				w := compare(t, "Sgemm "+ta.String()+tb.String(), got, ref, scale, m, n, ldc, 2*float64(k+2)*u32, to32(c))
				t.Logf("Sgemm %v%v beta=%v: worst relative error %.2e", ta, tb, beta, w)
			}
		}
	}
}

func TestDgemm(t *testing.T) {
	g := needGPU(t)
	h := newHandle(t)
	r := newRand(t)
	m, n, k := 33, 70, 91
	lda, ldb, ldc := k+2, k, m+1
	a, b := randoms(r, lda*m), randoms(r, ldb*n)
	c := poisoned(r, m, n, ldc, 0.5)
	for i := range c {
		if !math.IsNaN(c[i]) && c[i] != 12345.5 {
			c[i] = r.Float64()
		}
	}
	da, db, dc := upload(t, g, a), upload(t, g, b), upload(t, g, c)
	if err := h.Dgemm(Trans, NoTrans, m, n, k, -2, da, lda, db, ldb, 0.5, dc, ldc); err != nil {
		t.Fatal(err)
	}
	got := download[float64](t, g, dc, len(c))
	ref, scale := refGemm(Trans, NoTrans, m, n, k, -2, a, lda, b, ldb, 0.5, c, ldc)
	compare(t, "Dgemm", got, ref, scale, m, n, ldc, 2*float64(k+2)*u64, c)
}

// TF32 rounds inputs to 10-bit mantissas: each product is off by up to about
// 2·2^-11 relative (2·2^-10 if the hardware truncated), then FP32 sums.
func tolTF32(k int) float64 { return 2*0x1p-10 + 2*float64(k+2)*u32 }

func TestGemmExFP32AndTF32(t *testing.T) {
	g := needGPU(t)
	h := newHandle(t)
	r := newRand(t)
	m, n, k := 256, 192, 320
	a, b := fill(r, m, k), fill(r, k, n)
	da, db := upload(t, g, to32(a)), upload(t, g, to32(b))
	for _, c := range []struct {
		compute ComputeType
		tol     float64
	}{
		{Compute32F, 2 * float64(k+2) * u32},
		{Compute32FPedantic, 2 * float64(k+2) * u32},
		{Compute32FFastTF32, tolTF32(k)},
	} {
		cc := poisoned(r, m, n, m, 0)
		dc := upload(t, g, to32(cc))
		err := h.GemmEx(GemmArgs{TransA: NoTrans, TransB: NoTrans, M: m, N: n, K: k, Alpha: 1, Beta: 0,
			A: da, TypeA: R32F, LDA: m, B: db, TypeB: R32F, LDB: k, C: dc, TypeC: R32F, LDC: m,
			Compute: c.compute, Algo: GemmDefault})
		if c.compute == Compute32FPedantic && errors.Is(err, StatusNotSupported) {
			t.Logf("this cuBLAS does not offer %d with R32F matrices: %v", c.compute, err)
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		got := download[float32](t, g, dc, m*n)
		ref, scale := refGemm(NoTrans, NoTrans, m, n, k, 1, a, m, b, k, 0, cc, m)
		w := compare(t, "GemmEx", got, ref, scale, m, n, m, c.tol, to32(cc))
		t.Logf("GemmEx compute %d: worst relative error %.2e (allowed %.2e)", c.compute, w, c.tol)
	}
}

func TestMathModeTF32(t *testing.T) {
	g := needGPU(t)
	h := newHandle(t)
	r := newRand(t)
	m, n, k := 512, 256, 384
	a, b := fill(r, m, k), fill(r, k, n)
	da, db := upload(t, g, to32(a)), upload(t, g, to32(b))
	for _, mode := range []Math{TF32TensorOpMath, DefaultMath} {
		if err := h.SetMathMode(mode); err != nil {
			t.Fatal(err)
		}
		if got, err := h.MathMode(); err != nil || got != mode {
			t.Fatalf("MathMode() = %v, %v after setting %v", got, err, mode)
		}
		c := poisoned(r, m, n, m, 0)
		dc := upload(t, g, to32(c))
		if err := h.Sgemm(NoTrans, NoTrans, m, n, k, 1, da, m, db, k, 0, dc, m); err != nil {
			t.Fatal(err)
		}
		got := download[float32](t, g, dc, m*n)
		ref, scale := refGemm(NoTrans, NoTrans, m, n, k, 1, a, m, b, k, 0, c, m)
		tol := 2 * float64(k+2) * u32
		if mode == TF32TensorOpMath {
			tol = tolTF32(k)
		}
		w := compare(t, "Sgemm", got, ref, scale, m, n, m, tol, to32(c))
		t.Logf("math mode %d: worst relative error %.2e", mode, w)
	}
}

func TestStridedBatched(t *testing.T) {
	g := needGPU(t)
	h := newHandle(t)
	r := newRand(t)
	m, n, k, batch := 40, 24, 56, 5
	lda, ldb, ldc := k, k+2, m+2 // A is transposed: stored k×m
	sa, sb, sc := int64(lda*m+7), int64(ldb*n+3), int64(ldc*n+11)
	a, b := fill(r, int(sa), batch), fill(r, int(sb), batch)
	c := make([]float64, int(sc)*batch)
	for i := range c {
		c[i] = math.NaN()
	}
	alpha := 0.5
	da, db, dc := upload(t, g, to32(a)), upload(t, g, to32(b)), upload(t, g, to32(c))
	if err := h.SgemmStridedBatched(Trans, NoTrans, m, n, k, float32(alpha), da, lda, sa, db, ldb, sb, 0, dc, ldc, sc, batch); err != nil {
		t.Fatal(err)
	}
	got := download[float32](t, g, dc, len(c))

	// The same through GemmStridedBatchedEx in TF32, and in float64.
	dc2 := upload(t, g, to32(c))
	if err := h.GemmStridedBatchedEx(GemmArgs{TransA: Trans, TransB: NoTrans, M: m, N: n, K: k, Alpha: alpha,
		A: da, TypeA: R32F, LDA: lda, StrideA: sa, B: db, TypeB: R32F, LDB: ldb, StrideB: sb,
		C: dc2, TypeC: R32F, LDC: ldc, StrideC: sc, Batch: batch, Compute: Compute32FFastTF32, Algo: GemmDefault}); err != nil {
		t.Fatal(err)
	}
	got2 := download[float32](t, g, dc2, len(c))
	da64, db64, dc64 := upload(t, g, a), upload(t, g, b), upload(t, g, c)
	if err := h.DgemmStridedBatched(Trans, NoTrans, m, n, k, alpha, da64, lda, sa, db64, ldb, sb, 0, dc64, ldc, sc, batch); err != nil {
		t.Fatal(err)
	}
	got64 := download[float64](t, g, dc64, len(c))

	for i := range batch {
		ai, bi, ci := a[int64(i)*sa:], b[int64(i)*sb:], c[int64(i)*sc:int64(i+1)*sc]
		ref, scale := refGemm(Trans, NoTrans, m, n, k, alpha, ai, lda, bi, ldb, 0, ci, ldc)
		lo, hi := int64(i)*sc, int64(i+1)*sc
		compare(t, "SgemmStridedBatched", got[lo:hi], ref, scale, m, n, ldc, 2*float64(k+2)*u32, to32(ci))
		compare(t, "GemmStridedBatchedEx TF32", got2[lo:hi], ref, scale, m, n, ldc, tolTF32(k), to32(ci))
		compare(t, "DgemmStridedBatched", got64[lo:hi], ref, scale, m, n, ldc, 2*float64(k+2)*u64, ci)
		// The gap between one C and the next is never written.
		for x := int64(ldc*n) + lo; x < hi; x++ {
			if !math.IsNaN(float64(got[x])) {
				t.Fatalf("batch %d: element %d past the matrix was written", i, x-lo)
			}
		}
	}
}

// Half matrices, with half scalars (Compute16F) and float scalars
// (Compute32F): checks that alpha and beta travel as the right C type.
func TestGemmExHalf(t *testing.T) {
	g := needGPU(t)
	h := newHandle(t)
	r := newRand(t)
	m, n, k := 64, 32, 48
	halves := func(cnt int) ([]uint16, []float64) {
		hb, f := make([]uint16, cnt), make([]float64, cnt)
		for i := range hb {
			hb[i] = HalfBits(float32(r.Float64()*2 - 1))
			f[i] = float64(HalfToFloat32(hb[i]))
		}
		return hb, f
	}
	ah, a := halves(m * k)
	bh, b := halves(k * n)
	da, db := upload(t, g, ah), upload(t, g, bh)
	c := make([]float64, m*n)

	// float output, float scalars
	dc := upload(t, g, to32(poisoned(r, m, n, m, 0)))
	if err := h.GemmEx(GemmArgs{M: m, N: n, K: k, Alpha: 2, A: da, TypeA: R16F, LDA: m, B: db, TypeB: R16F, LDB: k,
		C: dc, TypeC: R32F, LDC: m, Compute: Compute32F, Algo: GemmDefault}); err != nil {
		t.Fatal(err)
	}
	ref, scale := refGemm(NoTrans, NoTrans, m, n, k, 2, a, m, b, k, 0, c, m)
	compare(t, "GemmEx 16F→32F", download[float32](t, g, dc, m*n), ref, scale, m, n, m, 2*float64(k+2)*u32, nil)

	// half output, half scalars: alpha 0.5 and beta 0 as binary16
	nan := make([]uint16, m*n)
	for i := range nan {
		nan[i] = 0x7e00
	}
	dh := upload(t, g, nan)
	if err := h.GemmEx(GemmArgs{M: m, N: n, K: k, Alpha: 0.5, A: da, TypeA: R16F, LDA: m, B: db, TypeB: R16F, LDB: k,
		C: dh, TypeC: R16F, LDC: m, Compute: Compute16F, Algo: GemmDefault}); err != nil {
		t.Fatal(err)
	}
	gh := download[uint16](t, g, dh, m*n)
	got := make([]float32, m*n)
	for i, v := range gh {
		got[i] = HalfToFloat32(v)
	}
	ref, scale = refGemm(NoTrans, NoTrans, m, n, k, 0.5, a, m, b, k, 0, c, m)
	compare(t, "GemmEx 16F", got, ref, scale, m, n, m, 2*float64(k+2)*0x1p-11, nil)
}

func TestGemvAxpyDot(t *testing.T) {
	g := needGPU(t)
	h := newHandle(t)
	r := newRand(t)
	m, n := 300, 170
	a := fill(r, m+4, n)
	x := exact32(randoms(r, 2*m)) // long enough for either op, stride 2
	y := exact32(randoms(r, m))
	da, dx := upload(t, g, to32(a)), upload(t, g, to32(x))
	for _, op := range []Op{NoTrans, Trans} {
		rows, cols := m, n
		if op == Trans {
			rows, cols = n, m
		}
		dy := upload(t, g, to32(y[:rows]))
		if err := h.Sgemv(op, m, n, 1.25, da, m+4, dx, 2, -1, dy, 1); err != nil {
			t.Fatal(err)
		}
		got := download[float32](t, g, dy, rows)
		for i := range rows {
			s, sa := 0.0, 0.0
			for j := range cols {
				var av float64
				if op == Trans {
					av = a[j+i*(m+4)]
				} else {
					av = a[i+j*(m+4)]
				}
				s += av * x[2*j]
				sa += math.Abs(av * x[2*j])
			}
			want := 1.25*s - y[i]
			if err := math.Abs(float64(got[i]) - want); err > 2*float64(cols+2)*u32*(1.25*sa+math.Abs(y[i])) {
				t.Fatalf("Sgemv %v: y[%d] = %v, want %v", op, i, got[i], want)
			}
		}
	}

	// Dgemv: y = A x in float64
	a64, x64 := randoms(r, m*n), randoms(r, n)
	dy64 := upload(t, g, nans[float64](m))
	if err := h.Dgemv(NoTrans, m, n, 1, upload(t, g, a64), m, upload(t, g, x64), 1, 0, dy64, 1); err != nil {
		t.Fatal(err)
	}
	got64 := download[float64](t, g, dy64, m)
	for i := range m {
		s := 0.0
		for j := range n {
			s += a64[i+j*m] * x64[j]
		}
		if math.Abs(got64[i]-s) > 1e-13 {
			t.Fatalf("Dgemv y[%d] = %v, want %v", i, got64[i], s)
		}
	}

	// Saxpy, Sscal, Sdot
	nv := 10007
	xv, yv := exact32(randoms(r, nv)), exact32(randoms(r, nv))
	dxv, dyv := upload(t, g, to32(xv)), upload(t, g, to32(yv))
	if err := h.Saxpy(nv, -3, dxv, 1, dyv, 1); err != nil {
		t.Fatal(err)
	}
	if err := h.Sscal(nv, 0.5, dyv, 1); err != nil {
		t.Fatal(err)
	}
	gy := download[float32](t, g, dyv, nv)
	for i := range nv {
		want := 0.5 * (-3*xv[i] + yv[i])
		if math.Abs(float64(gy[i])-want) > 4*u32*(1.5*math.Abs(xv[i])+0.5*math.Abs(yv[i])) {
			t.Fatalf("Saxpy/Sscal [%d] = %v, want %v", i, gy[i], want)
		}
	}
	dot, err := h.Sdot(nv, dxv, 1, dxv, 1)
	if err != nil {
		t.Fatal(err)
	}
	want, sa := 0.0, 0.0
	for _, v := range xv {
		want += v * v
		sa += v * v
	}
	if math.Abs(float64(dot)-want) > 2*float64(nv)*u32*sa {
		t.Errorf("Sdot = %v, want %v", dot, want)
	}
	d64, err := h.Ddot(n, upload(t, g, x64), 1, upload(t, g, x64), 1)
	if err != nil {
		t.Fatal(err)
	}
	w64 := 0.0
	for _, v := range x64 {
		w64 += v * v
	}
	if math.Abs(d64-w64) > 1e-12 {
		t.Errorf("Ddot = %v, want %v", d64, w64)
	}
}

// The row-major recipe of the package documentation.
func TestRowMajor(t *testing.T) {
	g := needGPU(t)
	h := newHandle(t)
	r := newRand(t)
	m, n, k := 31, 17, 23
	a, b := exact32(randoms(r, m*k)), exact32(randoms(r, k*n)) // row-major
	dc := upload(t, g, nans[float32](m*n))
	if err := h.Sgemm(NoTrans, NoTrans, n, m, k, 1, upload(t, g, to32(b)), n, upload(t, g, to32(a)), k, 0, dc, n); err != nil {
		t.Fatal(err)
	}
	got := download[float32](t, g, dc, m*n)
	for i := range m {
		for j := range n {
			s, sa := 0.0, 0.0
			for l := range k {
				s += a[i*k+l] * b[l*n+j]
				sa += math.Abs(a[i*k+l] * b[l*n+j])
			}
			if math.Abs(float64(got[i*n+j])-s) > 2*float64(k+2)*u32*sa {
				t.Fatalf("row-major C[%d][%d] = %v, want %v", i, j, got[i*n+j], s)
			}
		}
	}
}

func TestStreamAndVersion(t *testing.T) {
	g := needGPU(t)
	h := newHandle(t)
	r := newRand(t)
	s := g.stream(t)
	if err := h.SetStream(s); err != nil {
		t.Fatal(err)
	}
	m := 128
	a, b := fill(r, m, m), fill(r, m, m)
	c := poisoned(r, m, m, m, 0)
	dc := upload(t, g, to32(c))
	if err := h.Sgemm(NoTrans, Trans, m, m, m, 1, upload(t, g, to32(a)), m, upload(t, g, to32(b)), m, 0, dc, m); err != nil {
		t.Fatal(err)
	}
	ref, scale := refGemm(NoTrans, Trans, m, m, m, 1, a, m, b, m, 0, c, m)
	compare(t, "Sgemm on a stream", download[float32](t, g, dc, m*m), ref, scale, m, m, m, 2*float64(m+2)*u32, nil)

	v, err := h.Version()
	if err != nil || v < 110000 {
		t.Errorf("Handle.Version() = %d, %v", v, err)
	}
	major, minor, patch, err := Version()
	if err != nil || major < 11 || v/10000 != major {
		t.Errorf("Version() = %d.%d.%d, %v (handle says %d)", major, minor, patch, err, v)
	}
	p, _ := LibraryPath()
	t.Logf("cuBLAS %d.%d.%d (%d) from %s", major, minor, patch, v, p)

	if err := h.Destroy(); err != nil {
		t.Fatal(err)
	}
	if err := h.Sgemm(NoTrans, NoTrans, 1, 1, 1, 1, 8, 1, 8, 1, 0, 8, 1); err != ErrDestroyed {
		t.Errorf("Sgemm after Destroy: %v", err)
	}
}

// Workspace: cuBLAS runs with a buffer we give it.
func TestWorkspace(t *testing.T) {
	g := needGPU(t)
	h := newHandle(t)
	ws := upload(t, g, make([]byte, 32<<20))
	if err := h.SetWorkspace(ws, 32<<20); err != nil {
		t.Fatal(err)
	}
	r := newRand(t)
	m := 96
	a := fill(r, m, m)
	dc := upload(t, g, nans[float32](m*m))
	da := upload(t, g, to32(a))
	if err := h.Sgemm(NoTrans, NoTrans, m, m, m, 1, da, m, da, m, 0, dc, m); err != nil {
		t.Fatal(err)
	}
	ref, scale := refGemm(NoTrans, NoTrans, m, m, m, 1, a, m, a, m, 0, make([]float64, m*m), m)
	compare(t, "Sgemm with a workspace", download[float32](t, g, dc, m*m), ref, scale, m, m, m, 2*float64(m+2)*u32, nil)
}

func benchGemm(b *testing.B, mode Math) {
	g := needGPU(b)
	h := newHandle(b)
	if err := h.SetMathMode(mode); err != nil {
		b.Fatal(err)
	}
	const n = 4096
	x := make([]float32, n*n)
	for i := range x {
		x[i] = float32(i%7) * 0.25
	}
	da, db, dc := upload(b, g, x), upload(b, g, x), upload(b, g, x)
	gemm := func() {
		if err := h.Sgemm(NoTrans, NoTrans, n, n, n, 1, da, n, db, n, 0, dc, n); err != nil {
			b.Fatal(err)
		}
	}
	gemm() // warm-up: cuBLAS picks its kernel
	g.sync(b)
	b.ResetTimer()
	for range b.N {
		gemm()
	}
	g.sync(b)
	b.StopTimer()
	b.ReportMetric(2*n*n*n*float64(b.N)/b.Elapsed().Seconds()/1e12, "TFLOP/s")
}

// BenchmarkSgemm4096 is SGEMM 4096³ in FP32; torch's cuBLAS: 51.3 TFLOP/s.
func BenchmarkSgemm4096(b *testing.B) { benchGemm(b, DefaultMath) }

// BenchmarkSgemm4096TF32 is the same on TF32 tensor cores; torch: 374 TFLOP/s.
func BenchmarkSgemm4096TF32(b *testing.B) { benchGemm(b, TF32TensorOpMath) }

// BenchmarkSgemmSmallCall measures the host cost of one small Sgemm call
// (argument checks, lock, purego, cuBLAS's own launch).
func BenchmarkSgemmSmallCall(b *testing.B) {
	g := needGPU(b)
	h := newHandle(b)
	x := make([]float32, 64*64)
	da, dc := upload(b, g, x), upload(b, g, x)
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if err := h.Sgemm(NoTrans, NoTrans, 64, 64, 64, 1, da, 64, da, 64, 0, dc, 64); err != nil {
			b.Fatal(err)
		}
	}
	g.sync(b)
}
