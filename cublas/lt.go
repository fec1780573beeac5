package cublas

import (
	"fmt"
	"math"
	"math/bits"
	"sync"
	"unsafe"

	"github.com/gocu-dev/gocu/internal/dynlib"
)

// cuBLASLt, the "lightweight" matrix multiply library, is where NVIDIA puts
// the tensor-core products cublasGemmEx does not reach: int8 by int8 into
// int32 (IMMA) and FP8 with per-tensor scales. It is a separate library
// (libcublasLt, which libcublas itself links against), loaded on first use
// like libcublas: GOCU_CUBLASLT_LIB names a file; otherwise the same
// places as for libcublas are searched.

var ltSpec = dynlib.Spec{
	What:     "libcublasLt (cuBLASLt, CUDA 12 or 13)",
	Env:      "GOCU_CUBLASLT_LIB",
	Sonames:  []string{"libcublasLt.so.13", "libcublasLt.so.12", "libcublasLt.so"},
	Dirs:     spec.Dirs,
	Wheel:    spec.Wheel,
	NotFound: ErrNotFound,
}

type ltLib struct {
	path                                                string
	create, destroy                                     uintptr
	descCreate, descDestroy, descSet                    uintptr
	layoutCreate, layoutDestroy, layoutSet              uintptr
	prefCreate, prefDestroy, prefSet, heuristic, matmul uintptr
}

var (
	ltOnce sync.Once
	ltLoad *ltLib
	ltErr  error
)

// LoadLt loads libcublasLt if it is not loaded yet; LtCreate calls it.
func LoadLt() error {
	_, err := loadLt()
	return err
}

func loadLt() (*ltLib, error) {
	ltOnce.Do(func() { ltLoad, ltErr = openLt() })
	return ltLoad, ltErr
}

func openLt() (*ltLib, error) {
	dl, err := dynlib.Open(ltSpec)
	if err != nil {
		return nil, err
	}
	l := &ltLib{path: dl.Path}
	for _, s := range []struct {
		name string
		p    *uintptr
	}{
		{"cublasLtCreate", &l.create},
		{"cublasLtDestroy", &l.destroy},
		{"cublasLtMatmulDescCreate", &l.descCreate},
		{"cublasLtMatmulDescDestroy", &l.descDestroy},
		{"cublasLtMatmulDescSetAttribute", &l.descSet},
		{"cublasLtMatrixLayoutCreate", &l.layoutCreate},
		{"cublasLtMatrixLayoutDestroy", &l.layoutDestroy},
		{"cublasLtMatrixLayoutSetAttribute", &l.layoutSet},
		{"cublasLtMatmulPreferenceCreate", &l.prefCreate},
		{"cublasLtMatmulPreferenceDestroy", &l.prefDestroy},
		{"cublasLtMatmulPreferenceSetAttribute", &l.prefSet},
		{"cublasLtMatmulAlgoGetHeuristic", &l.heuristic},
		{"cublasLtMatmul", &l.matmul},
	} {
		if *s.p, err = dl.Sym(s.name); err != nil {
			return nil, fmt.Errorf("cublas: %s is not a usable cuBLASLt: %w", dl.Path, err)
		}
	}
	return l, nil
}

// Attribute numbers of cublasLt.h (cublasLtMatmulDescAttributes_t,
// cublasLtMatrixLayoutAttribute_t, cublasLtMatmulPreferenceAttributes_t).
const (
	ltDescTransA       = 3
	ltDescTransB       = 4
	ltDescAScalePtr    = 17
	ltDescBScalePtr    = 18
	ltDescFastAccum    = 25
	ltLayoutBatchCount = 5
	ltLayoutBatchOff   = 6
	ltPrefMaxWorkspace = 1
	ltPrefAlignA       = 5 // ... B 6, C 7, D 8
)

// ltHeuristicSize is sizeof(cublasLtMatmulHeuristicResult_t): the 64-byte
// algorithm, size_t workspaceSize, cublasStatus_t state, float wavesCount
// and int reserved[4].
const ltHeuristicSize = 96

// LtHandle is a cuBLASLt context (cublasLtHandle_t). Like Handle, its
// calls must run on an OS thread where the CUDA context of the device is
// current; calls on one LtHandle are serialised.
type LtHandle struct {
	mu sync.Mutex
	h  uintptr
	l  *ltLib
}

// LtCreate makes a cuBLASLt handle (cublasLtCreate), loading libcublasLt
// on first use.
func LtCreate() (*LtHandle, error) {
	l, err := loadLt()
	if err != nil {
		return nil, err
	}
	var h uintptr
	if err := check("cublasLtCreate", call(l.create, uintptr(unsafe.Pointer(&h)))); err != nil {
		return nil, err
	}
	return &LtHandle{h: h, l: l}, nil
}

// Destroy releases the handle; later calls return ErrDestroyed.
func (h *LtHandle) Destroy() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.h == 0 {
		return nil
	}
	err := check("cublasLtDestroy", call(h.l.destroy, h.h))
	h.h = 0
	return err
}

// LtMatmul describes one cublasLtMatmul: D = Alpha·scaleA·scaleB·op(A)·op(B)
// + Beta·C, column-major as every cuBLAS routine, op(A) M×K, op(B) K×N, C
// and D M×N, with Batch matrices Stride* elements apart (Batch 0 or 1: one
// product).
//
// The products gocu uses, and the rules cuBLASLt sets for them, which
// Plan checks before cuBLASLt sees them (an error matching
// ErrInvalidArgument that names the rule):
//
//   - int8 (IMMA): TypeA = TypeB = R8I, TypeC = TypeD = R32I, Compute32I,
//     ScaleType R32I. Only the "TN" form: TransA = Trans, TransB = NoTrans;
//     M and K multiples of 4, every leading dimension a multiple of 4,
//     pointers aligned to 4 bytes (16 is faster).
//   - FP8: TypeA and TypeB R8FE4M3 or R8FE5M2 (not both E5M2), TypeC =
//     TypeD = R32F, R16BF or R16F, Compute32F, ScaleType R32F; the TN form;
//     M and K multiples of 16, leading dimensions multiples of 16 bytes,
//     pointers aligned to 16 bytes. The per-tensor scales are device
//     pointers to one float32 each, given to Run (0: 1). FP8 kernels exist
//     on compute capability 8.9 and later; elsewhere cuBLASLt finds no
//     algorithm and Plan returns StatusNotSupported.
//   - anything else cublasLtMatmul takes (float16 and bfloat16 with
//     Compute32F, for example) is passed on unchecked beyond dimensions.
type LtMatmul struct {
	TransA, TransB             Op
	M, N, K                    int
	TypeA, TypeB, TypeC, TypeD DataType
	LDA, LDB, LDC, LDD         int
	Compute                    ComputeType
	ScaleType                  DataType
	Batch                      int
	StrideA, StrideB           int64
	StrideC, StrideD           int64
	// Align is the alignment in bytes of the A, B, C and D pointers Run
	// will be given: a power of two up to 256 (0 means 256). Algorithms
	// that need more are excluded.
	Align [4]int
	// FastAccum lets FP8 kernels accumulate in lower precision (faster,
	// less accurate; torch._scaled_mm's use_fast_accum).
	FastAccum bool
	// WorkspaceBytes is the most workspace the algorithm may use.
	WorkspaceBytes int
}

func isFP8(t DataType) bool { return t == R8FE4M3 || t == R8FE5M2 }

// check validates the description against cuBLASLt's rules.
func (m *LtMatmul) check() error {
	const fn = "cublasLtMatmul"
	if !m.TransA.valid() || !m.TransB.valid() {
		return invalid(fn, "transa = %v, transb = %v", m.TransA, m.TransB)
	}
	if err := checkDims(fn, "MNK", m.M, m.N, m.K); err != nil {
		return err
	}
	if err := checkLd(fn, "lda", m.LDA, storedRows(m.TransA, m.M, m.K)); err != nil {
		return err
	}
	if err := checkLd(fn, "ldb", m.LDB, storedRows(m.TransB, m.K, m.N)); err != nil {
		return err
	}
	if err := checkLd(fn, "ldc", m.LDC, m.M); err != nil {
		return err
	}
	if err := checkLd(fn, "ldd", m.LDD, m.M); err != nil {
		return err
	}
	if m.Batch < 0 || m.Batch > math.MaxInt32 || m.StrideA < 0 || m.StrideB < 0 || m.StrideC < 0 || m.StrideD < 0 {
		return invalid(fn, "batch %d with strides %d, %d, %d, %d", m.Batch, m.StrideA, m.StrideB, m.StrideC, m.StrideD)
	}
	for i, a := range m.Align {
		if a != 0 && (a < 0 || a > 256 || a&(a-1) != 0) {
			return invalid(fn, "alignment of %c = %d is not a power of two up to 256", "ABCD"[i], a)
		}
	}
	align := func(i int) int {
		if m.Align[i] == 0 {
			return 256
		}
		return m.Align[i]
	}
	switch {
	case m.TypeA == R8I || m.TypeB == R8I:
		if m.TypeA != R8I || m.TypeB != R8I || m.TypeC != R32I || m.TypeD != R32I || m.Compute != Compute32I || m.ScaleType != R32I {
			return invalid(fn, "an int8 product takes R8I A and B, R32I C and D, Compute32I and scale type R32I")
		}
		if m.TransA != Trans || m.TransB != NoTrans {
			return invalid(fn, "int8 (IMMA) kernels take only the TN form: A transposed, B not (got %v%v)", m.TransA, m.TransB)
		}
		if m.M%4 != 0 || m.K%4 != 0 {
			return invalid(fn, "int8 (IMMA) kernels need M and K multiples of 4, got M = %d, K = %d", m.M, m.K)
		}
		if m.LDA%4 != 0 || m.LDB%4 != 0 || m.LDC%4 != 0 || m.LDD%4 != 0 {
			return invalid(fn, "int8 (IMMA) kernels need leading dimensions that are multiples of 4, got %d, %d, %d, %d", m.LDA, m.LDB, m.LDC, m.LDD)
		}
		for i := range m.Align {
			if align(i) < 4 {
				return invalid(fn, "int8 (IMMA) kernels need pointers aligned to 4 bytes; %c is aligned to %d", "ABCD"[i], align(i))
			}
		}
	case isFP8(m.TypeA) || isFP8(m.TypeB):
		if !isFP8(m.TypeA) || !isFP8(m.TypeB) || (m.TypeA == R8FE5M2 && m.TypeB == R8FE5M2) {
			return invalid(fn, "an FP8 product takes E4M3 or E5M2 A and B, not both E5M2")
		}
		if m.TypeC != m.TypeD || (m.TypeD != R32F && m.TypeD != R16BF && m.TypeD != R16F) {
			return invalid(fn, "an FP8 product here writes R32F, R16BF or R16F, with C of the same type as D")
		}
		if m.Compute != Compute32F || m.ScaleType != R32F {
			return invalid(fn, "an FP8 product computes in Compute32F with scale type R32F")
		}
		if m.TransA != Trans || m.TransB != NoTrans {
			return invalid(fn, "FP8 kernels take only the TN form: A transposed, B not (got %v%v)", m.TransA, m.TransB)
		}
		if m.M%16 != 0 || m.K%16 != 0 {
			return invalid(fn, "FP8 kernels need M and K multiples of 16, got M = %d, K = %d", m.M, m.K)
		}
		if m.LDA%16 != 0 || m.LDB%16 != 0 {
			return invalid(fn, "FP8 kernels need leading dimensions of A and B that are multiples of 16, got %d, %d", m.LDA, m.LDB)
		}
		for i := range m.Align {
			if align(i) < 16 {
				return invalid(fn, "FP8 kernels need pointers aligned to 16 bytes; %c is aligned to %d", "ABCD"[i], align(i))
			}
		}
	}
	return nil
}

// LtPlan is a prepared cublasLtMatmul: descriptors and the algorithm
// cuBLASLt's heuristic chose, for one LtMatmul. Run it as often as needed;
// Destroy releases it.
type LtPlan struct {
	h              *LtHandle
	m              LtMatmul
	desc           uintptr
	la, lb, lc, ld uintptr
	result         [ltHeuristicSize / 8]uint64
	scal           [2]uint64 // alpha and beta, for the call in progress
}

// Workspace returns the workspace bytes the chosen algorithm needs.
func (p *LtPlan) Workspace() int { return int(p.result[8]) }

// Plan checks m, creates the descriptors and asks cuBLASLt's heuristic for
// an algorithm. When there is none for the combination (an FP8 product
// below compute capability 8.9, for example) the error matches
// StatusNotSupported.
func (h *LtHandle) Plan(m LtMatmul) (*LtPlan, error) {
	if err := m.check(); err != nil {
		return nil, err
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.h == 0 {
		return nil, ErrDestroyed
	}
	p := &LtPlan{h: h, m: m}
	ok := false
	defer func() {
		if !ok {
			p.destroy()
		}
	}()
	l := h.l
	if err := check("cublasLtMatmulDescCreate", call(l.descCreate, uintptr(unsafe.Pointer(&p.desc)), uintptr(m.Compute), uintptr(m.ScaleType))); err != nil {
		return nil, err
	}
	ta, tb := int32(m.TransA), int32(m.TransB)
	if err := p.setDesc(ltDescTransA, unsafe.Pointer(&ta), 4); err != nil {
		return nil, err
	}
	if err := p.setDesc(ltDescTransB, unsafe.Pointer(&tb), 4); err != nil {
		return nil, err
	}
	if m.FastAccum {
		fa := int8(1)
		if err := p.setDesc(ltDescFastAccum, unsafe.Pointer(&fa), 1); err != nil {
			return nil, err
		}
	}
	layouts := []struct {
		out        *uintptr
		t          DataType
		rows, cols int
		ld         int
		stride     int64
	}{
		{&p.la, m.TypeA, storedRows(m.TransA, m.M, m.K), storedRows(m.TransA, m.K, m.M), m.LDA, m.StrideA},
		{&p.lb, m.TypeB, storedRows(m.TransB, m.K, m.N), storedRows(m.TransB, m.N, m.K), m.LDB, m.StrideB},
		{&p.lc, m.TypeC, m.M, m.N, m.LDC, m.StrideC},
		{&p.ld, m.TypeD, m.M, m.N, m.LDD, m.StrideD},
	}
	for _, x := range layouts {
		if err := check("cublasLtMatrixLayoutCreate", call(l.layoutCreate, uintptr(unsafe.Pointer(x.out)), uintptr(x.t),
			uintptr(uint64(x.rows)), uintptr(uint64(x.cols)), uintptr(int64(x.ld)))); err != nil {
			return nil, err
		}
		if m.Batch > 1 {
			n, off := int32(m.Batch), x.stride
			if err := check("cublasLtMatrixLayoutSetAttribute", call(l.layoutSet, *x.out, ltLayoutBatchCount, uintptr(unsafe.Pointer(&n)), 4)); err != nil {
				return nil, err
			}
			if err := check("cublasLtMatrixLayoutSetAttribute", call(l.layoutSet, *x.out, ltLayoutBatchOff, uintptr(unsafe.Pointer(&off)), 8)); err != nil {
				return nil, err
			}
		}
	}
	var pref uintptr
	if err := check("cublasLtMatmulPreferenceCreate", call(l.prefCreate, uintptr(unsafe.Pointer(&pref)))); err != nil {
		return nil, err
	}
	defer call(l.prefDestroy, pref)
	ws := uint64(max(m.WorkspaceBytes, 0))
	if err := check("cublasLtMatmulPreferenceSetAttribute", call(l.prefSet, pref, ltPrefMaxWorkspace, uintptr(unsafe.Pointer(&ws)), 8)); err != nil {
		return nil, err
	}
	for i, a := range m.Align {
		if a == 0 {
			continue
		}
		v := uint32(a)
		if err := check("cublasLtMatmulPreferenceSetAttribute", call(l.prefSet, pref, uintptr(ltPrefAlignA+i), uintptr(unsafe.Pointer(&v)), 4)); err != nil {
			return nil, err
		}
	}
	var count int32
	if err := check("cublasLtMatmulAlgoGetHeuristic", call(l.heuristic, h.h, p.desc, p.la, p.lb, p.lc, p.ld, pref, 1,
		uintptr(unsafe.Pointer(&p.result[0])), uintptr(unsafe.Pointer(&count)))); err != nil {
		return nil, err
	}
	if count < 1 {
		return nil, &Error{Func: "cublasLtMatmulAlgoGetHeuristic", Status: StatusNotSupported}
	}
	ok = true
	return p, nil
}

func (p *LtPlan) setDesc(attr int, v unsafe.Pointer, size int) error {
	return check("cublasLtMatmulDescSetAttribute", call(p.h.l.descSet, p.desc, uintptr(attr), uintptr(v), uintptr(size)))
}

// LtArgs are the operands of one run of an LtPlan: device pointers, the
// scales of an FP8 product (device pointers to float32, 0 for 1), alpha
// and beta (passed as the plan's scale type), the workspace and the raw
// CUstream to queue on.
type LtArgs struct {
	A, B, C, D     uint64
	ScaleA, ScaleB uint64
	Alpha, Beta    float64
	Workspace      uint64
	WorkspaceBytes int
	Stream         uintptr
}

// Run queues the product (cublasLtMatmul).
func (p *LtPlan) Run(a LtArgs) error {
	const fn = "cublasLtMatmul"
	m := &p.m
	if m.M > 0 && m.N > 0 && (a.C == 0 || a.D == 0 || (m.K > 0 && (a.A == 0 || a.B == 0))) {
		return invalid(fn, "a null device pointer")
	}
	for i, ptr := range [4]uint64{a.A, a.B, a.C, a.D} {
		if need := m.Align[i]; ptr != 0 && need > 0 && 1<<bits.TrailingZeros64(ptr) < need {
			return invalid(fn, "%c = %#x is not aligned to the %d bytes the plan was made for", "ABCD"[i], ptr, need)
		}
	}
	if a.WorkspaceBytes < p.Workspace() {
		return invalid(fn, "workspace of %d bytes, the algorithm needs %d", a.WorkspaceBytes, p.Workspace())
	}
	h := p.h
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.h == 0 || p.desc == 0 {
		return ErrDestroyed
	}
	if isFP8(m.TypeA) {
		sa, sb := a.ScaleA, a.ScaleB
		if err := p.setDesc(ltDescAScalePtr, unsafe.Pointer(&sa), 8); err != nil {
			return err
		}
		if err := p.setDesc(ltDescBScalePtr, unsafe.Pointer(&sb), 8); err != nil {
			return err
		}
	}
	for i, v := range [2]float64{a.Alpha, a.Beta} {
		switch m.ScaleType {
		case R32I:
			p.scal[i] = uint64(uint32(int32(v)))
		case R64F:
			p.scal[i] = math.Float64bits(v)
		default:
			p.scal[i] = uint64(math.Float32bits(float32(v)))
		}
	}
	return check(fn, call(h.l.matmul, h.h, p.desc, uintptr(unsafe.Pointer(&p.scal[0])), uintptr(a.A), p.la, uintptr(a.B), p.lb,
		uintptr(unsafe.Pointer(&p.scal[1])), uintptr(a.C), p.lc, uintptr(a.D), p.ld,
		uintptr(unsafe.Pointer(&p.result[0])), uintptr(a.Workspace), uintptr(a.WorkspaceBytes), a.Stream))
}

// Destroy releases the plan's descriptors.
func (p *LtPlan) Destroy() {
	p.h.mu.Lock()
	defer p.h.mu.Unlock()
	p.destroy()
}

func (p *LtPlan) destroy() {
	l := p.h.l
	for _, x := range []*uintptr{&p.la, &p.lb, &p.lc, &p.ld} {
		if *x != 0 {
			call(l.layoutDestroy, *x)
			*x = 0
		}
	}
	if p.desc != 0 {
		call(l.descDestroy, p.desc)
		p.desc = 0
	}
}

// call is dynlib.Call typed for cuBLASLt's status results. Like it, it is
// marked uintptrescapes: pointers converted to uintptr in the call
// expression stay alive for the call.
//
//go:uintptrescapes
func call(fn uintptr, args ...uintptr) Status { return Status(dynlib.Call(fn, args...)) }
