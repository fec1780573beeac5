package cublas

import (
	"testing"

	"github.com/gocu-dev/gocu/internal/dynlib"
)

// fakeLib points every entry at libc's sched_yield, which ignores its
// arguments and returns 0 (success): the whole Go side of a call, purego
// included, runs without cuBLAS.
func fakeLib(t *testing.T) *lib {
	t.Helper()
	libc, err := dynlib.Open(dynlib.Spec{What: "libc", Sonames: []string{"libc.so.6"}})
	if err != nil {
		t.Skipf("no libc.so.6: %v", err)
	}
	yield, err := libc.Sym("sched_yield")
	if err != nil {
		t.Skip(err)
	}
	return &lib{path: "fake", sgemm: yield, dgemm: yield, cgemm: yield, zgemm: yield, gemmEx: yield, sgemmStridedBatched: yield,
		dgemmStridedBatched: yield, gemmStridedBatchedEx: yield, sgemv: yield, dgemv: yield,
		saxpy: yield, daxpy: yield, sdot: yield, ddot: yield, sscal: yield, dscal: yield,
		setStream: yield, setMathMode: yield, destroy: yield}
}

func TestCallsAllocateOnlyTheFFIArguments(t *testing.T) {
	h := &Handle{h: 1, l: fakeLib(t), scal: new([3]uint64)}
	const p = 0x7f0000000000
	ex := GemmArgs{M: 64, N: 64, K: 64, Alpha: 1, A: p, TypeA: R32F, LDA: 64, B: p, TypeB: R32F, LDB: 64,
		C: p, TypeC: R32F, LDC: 64, Compute: Compute32FFastTF32, Algo: GemmDefault, StrideC: 4096, Batch: 8}
	for name, f := range map[string]func() error{
		"Sgemm":                func() error { return h.Sgemm(NoTrans, Trans, 64, 64, 64, 1, p, 64, p, 64, 0, p, 64) },
		"Dgemm":                func() error { return h.Dgemm(NoTrans, Trans, 64, 64, 64, 1, p, 64, p, 64, 0, p, 64) },
		"Cgemm":                func() error { return h.Cgemm(NoTrans, ConjTrans, 64, 64, 64, 1i, p, 64, p, 64, 0, p, 64) },
		"Zgemm":                func() error { return h.Zgemm(ConjTrans, Trans, 64, 64, 64, 2-1i, p, 64, p, 64, 1, p, 64) },
		"GemmEx":               func() error { return h.GemmEx(ex) },
		"GemmStridedBatchedEx": func() error { return h.GemmStridedBatchedEx(ex) },
		"SgemmStridedBatched": func() error {
			return h.SgemmStridedBatched(NoTrans, NoTrans, 64, 64, 64, 1, p, 64, 4096, p, 64, 4096, 0, p, 64, 4096, 8)
		},
		"Sgemv":     func() error { return h.Sgemv(NoTrans, 64, 64, 1, p, 64, p, 1, 0, p, 1) },
		"Saxpy":     func() error { return h.Saxpy(64, 2, p, 1, p, 1) },
		"SetStream": func() error { return h.SetStream(0x1234) },
	} {
		if err := f(); err != nil {
			t.Fatalf("%s through the fake library: %v", name, err)
		}
		// dynlib.Call's variadic argument array is the one allocation
		// (its uintptrescapes marking makes it escape); scalars, checks
		// and locking add none.
		if n := testing.AllocsPerRun(100, func() { _ = f() }); n > 1 {
			t.Errorf("%s allocates %v times per call, want at most dynlib.Call's 1", name, n)
		}
	}
	if _, err := h.Sdot(64, p, 1, p, 1); err != nil {
		t.Fatal(err)
	}
	if err := h.Destroy(); err != nil {
		t.Fatal(err)
	}
	if err := h.Saxpy(64, 2, p, 1, p, 1); err != ErrDestroyed {
		t.Errorf("after Destroy: %v", err)
	}
}
