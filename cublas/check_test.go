package cublas

import (
	"errors"
	"math"
	"strings"
	"testing"
	"unsafe"
)

// The zero Handle is not created: every call must fail cleanly, after the
// arguments are checked.
func TestCallsOnAHandleThatIsNotThere(t *testing.T) {
	h := &Handle{}
	const p = 0x7f0000000000
	for name, err := range map[string]error{
		"Sgemm":   h.Sgemm(NoTrans, NoTrans, 2, 2, 2, 1, p, 2, p, 2, 0, p, 2),
		"Dgemm":   h.Dgemm(NoTrans, NoTrans, 2, 2, 2, 1, p, 2, p, 2, 0, p, 2),
		"GemmEx":  h.GemmEx(GemmArgs{M: 2, N: 2, K: 2, A: p, B: p, C: p, LDA: 2, LDB: 2, LDC: 2, Compute: Compute32F, Algo: GemmDefault}),
		"SBatch":  h.SgemmStridedBatched(NoTrans, NoTrans, 2, 2, 2, 1, p, 2, 4, p, 2, 4, 0, p, 2, 4, 3),
		"DBatch":  h.DgemmStridedBatched(NoTrans, NoTrans, 2, 2, 2, 1, p, 2, 4, p, 2, 4, 0, p, 2, 4, 3),
		"ExBatch": h.GemmStridedBatchedEx(GemmArgs{M: 2, N: 2, K: 2, A: p, B: p, C: p, LDA: 2, LDB: 2, LDC: 2, Compute: Compute32F, StrideC: 4, Batch: 2}),
		"Sgemv":   h.Sgemv(NoTrans, 2, 2, 1, p, 2, p, 1, 0, p, 1),
		"Dgemv":   h.Dgemv(Trans, 2, 2, 1, p, 2, p, 1, 0, p, 1),
		"Saxpy":   h.Saxpy(2, 1, p, 1, p, 1),
		"Daxpy":   h.Daxpy(2, 1, p, 1, p, 1),
		"Sscal":   h.Sscal(2, 1, p, 1),
		"Dscal":   h.Dscal(2, 1, p, 1),
		"Stream":  h.SetStream(0),
		"Math":    h.SetMathMode(TF32TensorOpMath),
		"Work":    h.SetWorkspace(p, 1024),
	} {
		if !errors.Is(err, ErrDestroyed) {
			t.Errorf("%s on a zero Handle: %v, want ErrDestroyed", name, err)
		}
	}
	if _, err := h.Sdot(2, p, 1, p, 1); !errors.Is(err, ErrDestroyed) {
		t.Errorf("Sdot: %v", err)
	}
	if _, err := h.Ddot(2, p, 1, p, 1); !errors.Is(err, ErrDestroyed) {
		t.Errorf("Ddot: %v", err)
	}
	if _, err := h.Version(); !errors.Is(err, ErrDestroyed) {
		t.Errorf("Version: %v", err)
	}
	if _, err := h.MathMode(); !errors.Is(err, ErrDestroyed) {
		t.Errorf("MathMode: %v", err)
	}
	if err := h.Destroy(); err != nil {
		t.Errorf("Destroy of a zero handle: %v", err)
	}
	if h.Raw() != 0 {
		t.Error("Raw of a zero handle")
	}
}

func TestGemmArgumentChecks(t *testing.T) {
	const p = 0x7f0000000000
	type args struct {
		ta, tb        Op
		m, n, k       int
		lda, ldb, ldc int
		a, b, c       uint64
	}
	ok := args{NoTrans, NoTrans, 4, 3, 5, 4, 5, 4, p, p, p}
	cases := []struct {
		name string
		mod  func(*args)
		want string // "" means valid
	}{
		{"valid", func(*args) {}, ""},
		{"padded lds", func(a *args) { a.lda, a.ldb, a.ldc = 7, 9, 8 }, ""},
		{"transposed A", func(a *args) { a.ta, a.lda = Trans, 5 }, ""},
		{"transposed B", func(a *args) { a.tb, a.ldb = Trans, 3 }, ""},
		{"empty k needs no A, B", func(a *args) { a.k, a.a, a.b = 0, 0, 0 }, ""},
		{"empty m needs nothing", func(a *args) { a.m, a.lda, a.ldc, a.a, a.b, a.c = 0, 1, 1, 0, 0, 0 }, ""},
		{"bad transa", func(a *args) { a.ta = 7 }, "transa = Op(7)"},
		{"bad transb", func(a *args) { a.tb = -1 }, "transb = Op(-1)"},
		{"negative m", func(a *args) { a.m = -1 }, "m = -1"},
		{"negative n", func(a *args) { a.n = -2 }, "n = -2"},
		{"huge k", func(a *args) { a.k = math.MaxInt32 + 1 }, "k = 2147483648"},
		{"lda < m", func(a *args) { a.lda = 3 }, "lda = 3, must be at least max(1, 4)"},
		{"lda < k when transposed", func(a *args) { a.ta = Trans }, "lda = 4, must be at least max(1, 5)"},
		{"ldb < k", func(a *args) { a.ldb = 4 }, "ldb = 4, must be at least max(1, 5)"},
		{"ldb < n when transposed", func(a *args) { a.tb, a.ldb = Trans, 2 }, "ldb = 2, must be at least max(1, 3)"},
		{"ldc < m", func(a *args) { a.ldc = 3 }, "ldc = 3"},
		{"ld zero", func(a *args) { a.m, a.lda, a.ldc, a.a, a.c = 0, 0, 1, 0, 0 }, "lda = 0, must be at least max(1, 0)"},
		{"null C", func(a *args) { a.c = 0 }, "C is a null device pointer"},
		{"null A", func(a *args) { a.a = 0 }, "A or B is a null device pointer"},
		{"null B", func(a *args) { a.b = 0 }, "A or B is a null device pointer"},
	}
	for _, c := range cases {
		a := ok
		c.mod(&a)
		err := checkGemm("cublasSgemm_v2", a.ta, a.tb, a.m, a.n, a.k, a.lda, a.ldb, a.ldc, a.a, a.b, a.c)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: rejected: %v", c.name, err)
		case c.want != "" && (!errors.Is(err, ErrInvalidArgument) || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "cublasSgemm_v2")):
			t.Errorf("%s: err = %v, want one containing %q", c.name, err, c.want)
		}
	}
	// The public entry points check before anything else.
	h := &Handle{}
	if err := h.Sgemm(NoTrans, NoTrans, 4, 3, 5, 1, p, 3, p, 5, 0, p, 4); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("Sgemm with lda < m: %v", err)
	}
}

func TestBatchChecks(t *testing.T) {
	for _, c := range []struct {
		m, n, ldc  int
		sa, sb, sc int64
		batch      int
		want       string
	}{
		{4, 3, 4, 20, 15, 12, 5, ""},
		{4, 3, 6, 0, 15, 16, 5, ""}, // A shared by the batch; C padded: 6*2+4 = 16
		{4, 3, 6, 20, 15, 15, 5, "strideC = 15 < ldc*(n-1)+m = 16"},
		{4, 3, 4, 20, 15, 0, 1, ""}, // one matrix: the stride does not matter
		{4, 3, 4, -1, 15, 12, 5, "must not be negative"},
		{4, 3, 4, 20, 15, 12, -1, "batchCount = -1"},
	} {
		err := checkBatch("f", c.m, c.n, c.ldc, c.sa, c.sb, c.sc, c.batch)
		if c.want == "" && err != nil || c.want != "" && (!errors.Is(err, ErrInvalidArgument) || !strings.Contains(err.Error(), c.want)) {
			t.Errorf("%+v: err = %v", c, err)
		}
	}
}

func TestVectorChecks(t *testing.T) {
	const p = 0x7f0000000000
	if err := checkGemv("g", NoTrans, 5, 3, 5, 1, -2, p, p, p); err != nil {
		t.Errorf("valid gemv: %v", err)
	}
	for _, c := range []struct {
		err  error
		want string
	}{
		{checkGemv("g", 9, 5, 3, 5, 1, 1, p, p, p), "trans = Op(9)"},
		{checkGemv("g", NoTrans, 5, 3, 4, 1, 1, p, p, p), "lda = 4"},
		{checkGemv("g", NoTrans, 5, 3, 5, 0, 1, p, p, p), "incx = 0"},
		{checkGemv("g", NoTrans, 5, 3, 5, 1, 0, p, p, p), "incy = 0"},
		{checkGemv("g", NoTrans, 5, -3, 5, 1, 1, p, p, p), "n = -3"},
		{checkGemv("g", NoTrans, 5, 3, 5, 1, 1, p, 0, p), "null device pointer"},
		{checkVec("v", -1, 1, 1, p, p), "n = -1"},
		{checkVec("v", 3, 1, 0, p, p), "incy = 0"},
		{checkVec("v", 3, 1, 1, 0, p), "null device pointer"},
	} {
		if !errors.Is(c.err, ErrInvalidArgument) || !strings.Contains(c.err.Error(), c.want) {
			t.Errorf("err = %v, want one containing %q", c.err, c.want)
		}
	}
	if err := checkVec("v", 0, 1, 1, 0, 0); err != nil {
		t.Errorf("empty vectors need no pointers: %v", err)
	}
	h := &Handle{}
	if err := h.SetWorkspace(0, 100); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("workspace without a pointer: %v", err)
	}
	if err := h.GemmEx(GemmArgs{M: 1, N: 1, K: 1, A: p, B: p, C: p, LDA: 1, LDB: 1, LDC: 1, Compute: 3}); !errors.Is(err, ErrInvalidArgument) || !strings.Contains(err.Error(), "compute type 3") {
		t.Errorf("GemmEx with a bad compute type: %v", err)
	}
}

func TestScalarTypes(t *testing.T) {
	for c, want := range map[ComputeType]scalar{
		Compute16F: scalarHalf, Compute16FPedantic: scalarHalf,
		Compute32F: scalarFloat, Compute32FPedantic: scalarFloat, Compute32FFast16F: scalarFloat,
		Compute32FFast16BF: scalarFloat, Compute32FFastTF32: scalarFloat, Compute32FEmulated16BFx9: scalarFloat,
		Compute64F: scalarDouble, Compute64FPedantic: scalarDouble, Compute64FEmulatedFixed: scalarDouble,
		Compute32I: scalarInt32, Compute32IPedantic: scalarInt32, 0: scalarNone, 76: scalarNone,
	} {
		if got := c.scalar(); got != want {
			t.Errorf("ComputeType(%d).scalar() = %v, want %v", int32(c), got, want)
		}
	}
	h := &Handle{scal: new([3]uint64)}
	pa, pb := h.scalars(scalarFloat, 1.5, -2)
	if pa == 0 || pb == 0 || math.Float32frombits(uint32(h.scal[0])) != 1.5 || math.Float32frombits(uint32(h.scal[1])) != -2 {
		t.Errorf("float scalars: %x", h.scal)
	}
	h.scalars(scalarDouble, math.Pi, 1e300)
	if math.Float64frombits(h.scal[0]) != math.Pi || math.Float64frombits(h.scal[1]) != 1e300 {
		t.Errorf("double scalars: %x", h.scal)
	}
	h.scalars(scalarHalf, 0.5, -3)
	if h.scal[0] != 0x3800 || h.scal[1] != 0xc200 {
		t.Errorf("half scalars: %x", h.scal)
	}
	h.scalars(scalarInt32, -7, 3)
	if int32(uint32(h.scal[0])) != -7 || h.scal[1] != 3 {
		t.Errorf("int32 scalars: %x", h.scal)
	}
	if i32(-1) != ^uintptr(0) || i32(5) != 5 {
		t.Error("i32")
	}
}

func TestEnumValues(t *testing.T) {
	// From cublas_api.h and library_types.h (CUDA 13.0).
	for _, c := range []struct {
		name      string
		got, want int32
	}{
		{"CUBLAS_OP_N", int32(NoTrans), 0}, {"CUBLAS_OP_T", int32(Trans), 1}, {"CUBLAS_OP_C", int32(ConjTrans), 2},
		{"CUBLAS_DEFAULT_MATH", int32(DefaultMath), 0}, {"CUBLAS_PEDANTIC_MATH", int32(PedanticMath), 2},
		{"CUBLAS_TF32_TENSOR_OP_MATH", int32(TF32TensorOpMath), 3},
		{"CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION", int32(DisallowReducedPrecisionReduction), 16},
		{"CUDA_R_32F", int32(R32F), 0}, {"CUDA_R_64F", int32(R64F), 1}, {"CUDA_R_16F", int32(R16F), 2},
		{"CUDA_R_8I", int32(R8I), 3}, {"CUDA_R_32I", int32(R32I), 10}, {"CUDA_R_16BF", int32(R16BF), 14},
		{"CUDA_R_8F_E4M3", int32(R8FE4M3), 28},
		{"CUBLAS_COMPUTE_16F", int32(Compute16F), 64}, {"CUBLAS_COMPUTE_32F", int32(Compute32F), 68},
		{"CUBLAS_COMPUTE_64F", int32(Compute64F), 70}, {"CUBLAS_COMPUTE_32I", int32(Compute32I), 72},
		{"CUBLAS_COMPUTE_32F_FAST_TF32", int32(Compute32FFastTF32), 77},
		{"CUBLAS_GEMM_DEFAULT", int32(GemmDefault), -1},
	} {
		if c.got != c.want {
			t.Errorf("%s = %d, want %d", c.name, c.got, c.want)
		}
	}
	if NoTrans.String() != "N" || Trans.String() != "T" || ConjTrans.String() != "C" {
		t.Error("Op.String")
	}
}

// Complex GEMMs read complex alpha and beta: the real values with zero
// imaginary parts, in cuComplex and cuDoubleComplex layout.
func TestComplexScalars(t *testing.T) {
	h := &Handle{scal: new([3]uint64)}
	h.scal[0], h.scal[1] = ^uint64(0), ^uint64(0) // poison
	pa, pb := h.scalars(scalarComplexFloat, 1.5, -2)
	if pa != uintptr(unsafe.Pointer(&h.scal[0])) || pb != uintptr(unsafe.Pointer(&h.scal[1])) ||
		h.scal[0] != uint64(math.Float32bits(1.5)) || h.scal[1] != uint64(math.Float32bits(-2)) {
		t.Errorf("complex64 scalars: %x", h.scal) // each word: the real half low, a zero imaginary half high
	}
	h.zscal = [4]uint64{^uint64(0), ^uint64(0), ^uint64(0), ^uint64(0)}
	pa, pb = h.scalars(scalarComplexDouble, math.Pi, -1)
	if pa != uintptr(unsafe.Pointer(&h.zscal[0])) || pb != uintptr(unsafe.Pointer(&h.zscal[2])) ||
		h.zscal != [4]uint64{math.Float64bits(math.Pi), 0, math.Float64bits(-1), 0} {
		t.Errorf("complex128 scalars: %x", h.zscal)
	}
	for _, c := range []struct {
		typ  DataType
		comp ComputeType
		want scalar
	}{
		{C32F, Compute32F, scalarComplexFloat}, {C64F, Compute64F, scalarComplexDouble}, {R32F, Compute32F, scalarFloat},
	} {
		g := GemmArgs{TransA: NoTrans, TransB: NoTrans, M: 2, N: 2, K: 2, A: 8, B: 8, C: 8, LDA: 2, LDB: 2, LDC: 2,
			TypeA: c.typ, TypeB: c.typ, TypeC: c.typ, Compute: c.comp}
		if s, err := g.check("test"); err != nil || s != c.want {
			t.Errorf("%v %v: scalar kind %v, %v; want %v", c.typ, c.comp, s, err, c.want)
		}
	}
}
