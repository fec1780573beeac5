package cusolver

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gocu-dev/gocu/internal/dynlib"
)

func TestStatusNames(t *testing.T) {
	for s, want := range map[Status]string{
		0: "CUSOLVER_STATUS_SUCCESS", 3: "CUSOLVER_STATUS_INVALID_VALUE", 7: "CUSOLVER_STATUS_INTERNAL_ERROR",
		9: "CUSOLVER_STATUS_NOT_SUPPORTED", 10: "CUSOLVER_STATUS_ZERO_PIVOT", 31: "CUSOLVER_STATUS_INVALID_WORKSPACE",
	} {
		if s.String() != want || s.Description() == "unknown cuSOLVER status" {
			t.Errorf("Status(%d) = %q %q", int32(s), s.String(), s.Description())
		}
	}
	if s := Status(99); !strings.HasPrefix(s.String(), "CUSOLVER_STATUS_UNKNOWN(") {
		t.Errorf("Status(99) = %q", s)
	}
	err := check("cusolverDnSgetrf", StatusNotSupported)
	if !errors.Is(err, StatusNotSupported) || errors.Is(err, StatusInternalError) {
		t.Errorf("errors.Is on %v", err)
	}
	if !strings.Contains(err.Error(), "cusolverDnSgetrf") {
		t.Errorf("message lacks the function: %v", err)
	}
}

func TestOverrideNamesTheFile(t *testing.T) {
	bogus := filepath.Join(t.TempDir(), "libcusolver.so.12")
	if err := os.WriteFile(bogus, []byte("not a library"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("GOCU_CUSOLVER_LIB", bogus)
	_, err := dynlib.Open(spec)
	if !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), bogus+" (from GOCU_CUSOLVER_LIB)") {
		t.Fatalf("err = %v", err)
	}
	var nf *dynlib.NotFoundError
	if !errors.As(err, &nf) || strings.Contains(nf.Summary(), "\n") {
		t.Errorf("no one-line summary: %v", err)
	}
}

func TestOverrideWithAnotherLibrary(t *testing.T) {
	// libc loads but is no cuSOLVER: Require must reject it by name.
	t.Setenv("GOCU_CUSOLVER_LIB", "libc.so.6")
	_, err := dynlib.Open(spec)
	if !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), "has no cusolverDnCreate") {
		t.Fatalf("err = %v", err)
	}
}

func TestSearchListsEveryPlace(t *testing.T) {
	t.Setenv("GOCU_CUSOLVER_LIB", "")
	venv := t.TempDir()
	t.Setenv("VIRTUAL_ENV", venv)
	_, err := dynlib.Open(spec)
	if err == nil {
		t.Skip("libcusolver is installed here; the not-found text cannot be produced")
	}
	for _, want := range []string{
		"libcusolver (cuSOLVER, CUDA 12 or 13) not found",
		"libcusolver.so.12 (dynamic loader)",
		"libcusolver.so.11 (dynamic loader)",
		filepath.Join(venv, "lib/python3*/site-packages/nvidia/cusolver/lib"),
		"set GOCU_CUSOLVER_LIB",
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("message lacks %q:\n%s", want, err)
		}
	}
}

func TestWithoutLibrary(t *testing.T) {
	if Available() {
		t.Skip("libcusolver is installed here")
	}
	if _, err := Create(); !errors.Is(err, ErrNotFound) {
		t.Errorf("Create: %v", err)
	}
	if _, _, _, err := Version(); !errors.Is(err, ErrNotFound) {
		t.Errorf("Version: %v", err)
	}
	if _, err := NewGesvdjInfo(); !errors.Is(err, ErrNotFound) {
		t.Errorf("NewGesvdjInfo: %v", err)
	}
	if _, err := LibraryPath(); !errors.Is(err, ErrNotFound) {
		t.Errorf("LibraryPath: %v", err)
	}
}

// fakeLib points every entry at libc's sched_yield, which ignores its
// arguments and returns 0 (success): the Go side of every call, purego
// included, runs without cuSOLVER.
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
	l := &lib{path: "fake"}
	for _, s := range l.symbols() {
		*s.p = yield
	}
	return l
}

func TestArgumentChecks(t *testing.T) {
	h := &Handle{h: 1, l: fakeLib(t)}
	const p = 0x7f0000000000
	params := &GesvdjInfo{p: 1, l: h.l}
	for name, c := range map[string]struct {
		err  error
		want string
	}{
		"dtype":        {h.Getrf(DType(7), 4, 4, p, 4, p, p, p), "only Float32 and Float64"},
		"negative m":   {h.Getrf(Float32, -1, 4, p, 4, p, p, p), "m = -1"},
		"lda":          {h.Getrf(Float64, 8, 4, p, 4, p, p, p), "lda = 4"},
		"null A":       {h.Getrf(Float32, 4, 4, 0, 4, p, p, p), "A is a null"},
		"null ipiv":    {h.Getrf(Float32, 4, 4, p, 4, p, 0, p), "ipiv is a null"},
		"trans":        {h.Getrs(Float32, Op(5), 4, 1, p, 4, p, p, 4, p), "trans = Op(5)"},
		"ldb":          {h.Getrs(Float32, NoTrans, 4, 1, p, 4, p, p, 3, p), "ldb = 3"},
		"uplo":         {h.Potrf(Float32, Fill(3), 4, p, 4, p, 10, p), "uplo = Fill(3)"},
		"lwork":        {h.Potrf(Float32, Lower, 4, p, 4, p, -1, p), "lwork = -1"},
		"nrhs batched": {h.PotrsBatched(Float32, Lower, 4, 2, p, 4, p, 4, p, 3), "nrhs = 2"},
		"batch":        {h.PotrfBatched(Float32, Lower, 4, p, 4, p, 0), "batchSize = 0"},
		"orgqr":        {h.Orgqr(Float32, 3, 4, 2, p, 4, p, p, 10, p), "need m ≥ n ≥ k"},
		"gesvd m<n":    {h.Gesvd(Float32, JobAll, JobAll, 3, 4, p, 3, p, p, 3, p, 4, p, 10, 0, p), "needs m ≥ n"},
		"gesvd job":    {h.Gesvd(Float32, Job('X'), JobAll, 4, 4, p, 4, p, p, 4, p, 4, p, 10, 0, p), "'X'"},
		"syevd jobz":   {h.Syevd(Float32, EigMode(4), Lower, 4, p, 4, p, p, 10, p), "jobz = 4"},
		"gesvdj params": {h.Gesvdj(Float32, &SVD{Jobz: Vectors, M: 4, N: 4, A: p, LDA: 4, S: p, U: p, LDU: 4, V: p, LDV: 4,
			Work: p, LWork: 10, Info: p}), "no GesvdjInfo"},
		"gesvdj batched size": {h.GesvdjBatched(Float32, &SVD{Jobz: Vectors, M: 33, N: 4, A: p, LDA: 33, S: p, U: p, LDU: 33,
			V: p, LDV: 4, Work: p, LWork: 10, Info: p, Batch: 2, Params: params}), "at most 32×32"},
		"gesvdj batched econ": {h.GesvdjBatched(Float32, &SVD{Jobz: Vectors, Econ: true, M: 4, N: 4, A: p, LDA: 4, S: p, U: p, LDU: 4,
			V: p, LDV: 4, Work: p, LWork: 10, Info: p, Batch: 2, Params: params}), "no economy mode"},
		"syevj size": {h.SyevjBatched(Float32, &Eig{Jobz: Vectors, N: 40, A: p, LDA: 40, W: p, Work: p, LWork: 1, Info: p, Batch: 1,
			Params: &SyevjInfo{p: 1, l: h.l}}), "at most 32×32"},
	} {
		if !errors.Is(c.err, ErrInvalidArgument) || !strings.Contains(c.err.Error(), c.want) {
			t.Errorf("%s: %v, want ErrInvalidArgument mentioning %q", name, c.err, c.want)
		}
	}
}

func TestCallsThroughFakeLibrary(t *testing.T) {
	l := fakeLib(t)
	h := &Handle{h: 1, l: l}
	const p = 0x7f0000000000
	params := &GesvdjInfo{p: 1, l: l}
	sp := &SyevjInfo{p: 1, l: l}
	svd := &SVD{Jobz: Vectors, M: 8, N: 6, A: p, LDA: 8, S: p, U: p, LDU: 8, V: p, LDV: 6, Work: p, LWork: 100, Info: p, Params: params}
	bsvd := *svd
	bsvd.Batch = 3
	eig := &Eig{Jobz: Vectors, Uplo: Lower, N: 8, A: p, LDA: 8, W: p, Work: p, LWork: 10, Info: p, Batch: 4, Params: sp}
	for dt := Float32; dt <= Float64; dt++ {
		for name, f := range map[string]func() error{
			"Getrf":         func() error { return h.Getrf(dt, 8, 8, p, 8, p, p, p) },
			"Getrs":         func() error { return h.Getrs(dt, Trans, 8, 3, p, 8, p, p, 8, p) },
			"Potrf":         func() error { return h.Potrf(dt, Upper, 8, p, 8, p, 10, p) },
			"Potrs":         func() error { return h.Potrs(dt, Upper, 8, 2, p, 8, p, 8, p) },
			"PotrfBatched":  func() error { return h.PotrfBatched(dt, Lower, 8, p, 8, p, 5) },
			"PotrsBatched":  func() error { return h.PotrsBatched(dt, Lower, 8, 1, p, 8, p, 8, p, 5) },
			"Geqrf":         func() error { return h.Geqrf(dt, 8, 6, p, 8, p, p, 10, p) },
			"Orgqr":         func() error { return h.Orgqr(dt, 8, 6, 6, p, 8, p, p, 10, p) },
			"Gesvd":         func() error { return h.Gesvd(dt, JobSome, JobAll, 8, 6, p, 8, p, p, 8, p, 6, p, 10, 0, p) },
			"Syevd":         func() error { return h.Syevd(dt, Vectors, Lower, 8, p, 8, p, p, 10, p) },
			"Gesvdj":        func() error { return h.Gesvdj(dt, svd) },
			"GesvdjBatched": func() error { return h.GesvdjBatched(dt, &bsvd) },
			"SyevjBatched":  func() error { return h.SyevjBatched(dt, eig) },
			"sizes": func() error {
				for _, f := range []func() (int, error){
					func() (int, error) { return h.GetrfBufferSize(dt, 8, 8, p, 8) },
					func() (int, error) { return h.PotrfBufferSize(dt, Lower, 8, p, 8) },
					func() (int, error) { return h.GeqrfBufferSize(dt, 8, 6, p, 8) },
					func() (int, error) { return h.OrgqrBufferSize(dt, 8, 6, 6, p, 8, p) },
					func() (int, error) { return h.GesvdBufferSize(dt, 8, 6) },
					func() (int, error) { return h.SyevdBufferSize(dt, Vectors, Lower, 8, p, 8, p) },
					func() (int, error) { return h.GesvdjBufferSize(dt, svd) },
					func() (int, error) { return h.GesvdjBatchedBufferSize(dt, &bsvd) },
					func() (int, error) { return h.SyevjBatchedBufferSize(dt, eig) },
				} {
					// sched_yield writes nothing: the size stays 0.
					if n, err := f(); err != nil || n != 0 {
						return errors.Join(err, errors.New("nonzero size"))
					}
				}
				return nil
			},
		} {
			if err := f(); err != nil {
				t.Errorf("%v %s: %v", dt, name, err)
			}
		}
	}
	if err := h.SetStream(0x5); err != nil {
		t.Error(err)
	}
	if err := params.SetMaxSweeps(15); err != nil {
		t.Error(err)
	}
	if err := params.SetMaxSweeps(0); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("SetMaxSweeps(0): %v", err)
	}
	if err := params.Destroy(); err != nil || params.SetSort(true) != ErrDestroyed {
		t.Errorf("Destroy: %v", err)
	}
	if err := h.Destroy(); err != nil {
		t.Fatal(err)
	}
	if err := h.Getrf(Float32, 8, 8, p, 8, p, p, p); !errors.Is(err, ErrDestroyed) {
		t.Errorf("after Destroy: %v", err)
	}
	if err := h.Destroy(); err != nil {
		t.Errorf("second Destroy: %v", err)
	}
}
