package cufft

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gocu-dev/gocu/internal/dynlib"
)

func TestResultNames(t *testing.T) {
	if len(resultText) != 17 {
		t.Errorf("%d results, cufft.h has 17", len(resultText))
	}
	for r := ResultSuccess; r <= ResultNotSupported; r++ {
		if !strings.HasPrefix(r.String(), "CUFFT_") || r.Description() == "unknown cuFFT result" {
			t.Errorf("Result(%d) = %q %q", int32(r), r, r.Description())
		}
	}
	if r := Result(40); !strings.HasPrefix(r.String(), "CUFFT_RESULT_UNKNOWN(") {
		t.Errorf("Result(40) = %q", r)
	}
	err := check("cufftExecC2C", ResultInvalidSize)
	if !errors.Is(err, ResultInvalidSize) || errors.Is(err, ResultExecFailed) || !strings.Contains(err.Error(), "cufftExecC2C") {
		t.Errorf("%v", err)
	}
}

func TestOverrideNamesTheFile(t *testing.T) {
	t.Setenv("GOCU_LOAD_VERBOSE", "1") // the message names every place tried
	bogus := filepath.Join(t.TempDir(), "libcufft.so.12")
	if err := os.WriteFile(bogus, []byte("not a library"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("GOCU_CUFFT_LIB", bogus)
	_, err := dynlib.Open(spec)
	if !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), bogus+" (from GOCU_CUFFT_LIB)") {
		t.Fatalf("err = %v", err)
	}
	t.Setenv("GOCU_CUFFT_LIB", "libc.so.6")
	if _, err := dynlib.Open(spec); !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), "has no cufftMakePlanMany") {
		t.Fatalf("libc as cuFFT: %v", err)
	}
}

func TestSearchListsEveryPlace(t *testing.T) {
	t.Setenv("GOCU_LOAD_VERBOSE", "1") // the message lists the places
	t.Setenv("GOCU_CUFFT_LIB", "")
	venv := t.TempDir()
	t.Setenv("VIRTUAL_ENV", venv)
	_, err := dynlib.Open(spec)
	if err == nil {
		t.Skip("libcufft is installed here")
	}
	for _, want := range []string{"libcufft (cuFFT, CUDA 12 or 13) not found", "libcufft.so.12 (dynamic loader)",
		"libcufft.so.11 (dynamic loader)", filepath.Join(venv, "lib/python3*/site-packages/nvidia/cufft/lib"), "set GOCU_CUFFT_LIB"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("message lacks %q", want)
		}
	}
}

func TestWithoutLibrary(t *testing.T) {
	if Available() {
		t.Skip("libcufft is installed here")
	}
	if _, err := NewPlan(Layout{N: []int{64}, Batch: 1}, C2C); !errors.Is(err, ErrNotFound) {
		t.Errorf("NewPlan: %v", err)
	}
	if _, err := Version(); !errors.Is(err, ErrNotFound) {
		t.Errorf("Version: %v", err)
	}
}

// fakeLib points every entry at libc's sched_yield, which returns 0.
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

func TestLayoutChecks(t *testing.T) {
	for name, c := range map[string]struct {
		l    Layout
		t    Type
		want string
	}{
		"rank 0":     {Layout{Batch: 1}, C2C, "rank 0"},
		"rank 4":     {Layout{N: []int{2, 2, 2, 2}, Batch: 1}, C2C, "rank 4"},
		"size":       {Layout{N: []int{0}, Batch: 1}, C2C, "n[0] = 0"},
		"batch":      {Layout{N: []int{8}}, C2C, "batch = 0"},
		"one embed":  {Layout{N: []int{8}, Batch: 1, InEmbed: []int{8}}, C2C, "both embeddings"},
		"embed rank": {Layout{N: []int{8}, Batch: 1, InEmbed: []int{8, 1}, OutEmbed: []int{8}}, C2C, "embeddings of 2"},
		"stride":     {Layout{N: []int{8}, Batch: 1, InEmbed: []int{8}, OutEmbed: []int{8}, IDist: 8, OStride: 1, ODist: 8}, C2C, "must be positive"},
		"type":       {Layout{N: []int{8}, Batch: 1}, Type(3), "not a cuFFT transform type"},
	} {
		if _, err := NewPlan(c.l, c.t); !errors.Is(err, ErrInvalidArgument) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v", name, err)
		}
	}
}

func TestPlanThroughFakeLibrary(t *testing.T) {
	l := fakeLib(t)
	const p = 0x7f0000000000
	for _, typ := range []Type{C2C, R2C, C2R, Z2Z, D2Z, Z2D} {
		pl, err := newPlan(l, Layout{N: []int{16, 8}, Batch: 4}, typ)
		if err != nil {
			t.Fatalf("%v: %v", typ, err)
		}
		dir := Forward
		if typ == C2R || typ == Z2D {
			dir = Inverse
		}
		if err := pl.SetStream(5); err != nil {
			t.Error(err)
		}
		if err := pl.Exec(p, p, dir); err != nil {
			t.Errorf("%v Exec: %v", typ, err)
		}
		if typ != C2C && typ != Z2Z {
			if err := pl.Exec(p, p, -dir); !errors.Is(err, ErrInvalidArgument) {
				t.Errorf("%v in the wrong direction: %v", typ, err)
			}
		}
		if err := pl.Exec(0, p, dir); !errors.Is(err, ErrInvalidArgument) {
			t.Errorf("null input: %v", err)
		}
		if err := pl.Exec(p, p, 3); !errors.Is(err, ErrInvalidArgument) {
			t.Errorf("direction 3: %v", err)
		}
		if err := pl.Destroy(); err != nil {
			t.Error(err)
		}
		if err := pl.Exec(p, p, dir); !errors.Is(err, ErrDestroyed) {
			t.Errorf("after Destroy: %v", err)
		}
		if pl.Destroy() != nil {
			t.Error("second Destroy failed")
		}
	}
	// A plan that needs a work area refuses to run without one.
	pl, _ := newPlan(l, Layout{N: []int{1 << 20}, Batch: 1}, C2C)
	pl.work = 1 << 20
	if err := pl.Exec(p, p, Forward); !errors.Is(err, ErrInvalidArgument) || !strings.Contains(err.Error(), "SetWorkArea") {
		t.Errorf("no work area: %v", err)
	}
	if err := pl.SetWorkArea(0); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("null work area: %v", err)
	}
	if err := pl.SetWorkArea(p); err != nil || pl.Exec(p, p, Forward) != nil {
		t.Errorf("with a work area: %v", err)
	}
}

func TestCache(t *testing.T) {
	l := fakeLib(t)
	sizes := map[int]int{64: 100, 128: 300, 256: 0}
	var allocs, frees []int
	c := NewCache(2, func(stream uintptr, bytes int) (uint64, func(), error) {
		allocs = append(allocs, bytes)
		return 0x1000 * uint64(len(allocs)), func() { frees = append(frees, bytes) }, nil
	})
	c.newP = func(lay Layout, t Type) (*Plan, error) {
		p, err := newPlan(l, lay, t)
		if err == nil {
			p.work = sizes[lay.N[0]]
		}
		return p, err
	}
	p1, err := c.Get(Layout{N: []int{64}, Batch: 1}, C2C, 5)
	if err != nil {
		t.Fatal(err)
	}
	if again, _ := c.Get(Layout{N: []int{64}, Batch: 1}, C2C, 5); again != p1 {
		t.Error("the same key made a second plan")
	}
	if other, _ := c.Get(Layout{N: []int{64}, Batch: 1}, Z2Z, 5); other == p1 {
		t.Error("another type shares the plan")
	}
	// A larger plan grows the stream's area: 100 then 300 bytes, the
	// first freed.
	if _, err := c.Get(Layout{N: []int{128}, Batch: 1}, C2C, 5); err != nil {
		t.Fatal(err)
	}
	if len(allocs) != 2 || allocs[1] != 300 || len(frees) != 1 || frees[0] != 100 {
		t.Errorf("allocs %v frees %v", allocs, frees)
	}
	if c.Len() != 2 {
		t.Errorf("Len %d, want 2 (the least recent evicted)", c.Len())
	}
	if err := p1.Exec(1, 1, Forward); !errors.Is(err, ErrDestroyed) {
		t.Errorf("the evicted plan: %v", err)
	}
	if _, err := c.Get(Layout{N: []int{256}, Batch: 1}, C2C, 6); err != nil || len(allocs) != 2 {
		t.Errorf("a plan without a work area allocated: %v %v", err, allocs)
	}
	if _, err := c.Get(Layout{N: []int{0}, Batch: 1}, C2C, 6); err == nil {
		t.Error("a bad layout through the cache: no error")
	}
	if err := c.Close(); err != nil || len(frees) != 2 {
		t.Errorf("Close: %v, frees %v", err, frees)
	}
	if _, err := c.Get(Layout{N: []int{64}, Batch: 1}, C2C, 5); err == nil {
		t.Error("Get after Close: no error")
	}
}

// TestCacheKeys checks that plan keys tell layouts, types and streams
// apart, match equal layouts held in other slices, and cost no allocation
// (Get runs once per transform).
func TestCacheKeys(t *testing.T) {
	base := Layout{N: []int{64, 32}, Batch: 4}
	emb := Layout{N: []int{64, 32}, Batch: 4, InEmbed: []int{64, 40}, IStride: 1, IDist: 2560,
		OutEmbed: []int{64, 32}, OStride: 1, ODist: 2048}
	others := []struct {
		name string
		l    Layout
		t    Type
		s    uintptr
	}{
		{"shape", Layout{N: []int{32, 64}, Batch: 4}, C2C, 1},
		{"rank", Layout{N: []int{64, 32, 1}, Batch: 4}, C2C, 1},
		{"batch", Layout{N: []int{64, 32}, Batch: 5}, C2C, 1},
		{"type", base, Z2Z, 1},
		{"stream", base, C2C, 2},
		{"embedding", emb, C2C, 1},
	}
	k := cacheKey(base, C2C, 1)
	if cacheKey(Layout{N: []int{64, 32}, Batch: 4}, C2C, 1) != k {
		t.Error("equal layouts in other slices give other keys")
	}
	seen := map[planKey]string{k: "base"}
	for _, o := range others {
		ok := cacheKey(o.l, o.t, o.s)
		if prev, dup := seen[ok]; dup {
			t.Errorf("%s: the key of %s", o.name, prev)
		}
		seen[ok] = o.name
	}
	e2 := emb
	e2.IDist = 2600
	if cacheKey(e2, C2C, 1) == cacheKey(emb, C2C, 1) {
		t.Error("another input distance: the same key")
	}
	if n := testing.AllocsPerRun(100, func() { _ = cacheKey(emb, C2C, 1) }); n != 0 {
		t.Errorf("cacheKey allocates %v times", n)
	}
}
