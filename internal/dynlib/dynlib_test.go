package dynlib

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"unsafe"
)

var errSentinel = errors.New("test library not found")

// systemLib finds a real shared library on this machine to load from an
// unusual place, so that the directory and wheel stages are exercised.
func systemLib(t *testing.T) string {
	t.Helper()
	for _, p := range []string{"/usr/lib/x86_64-linux-gnu/libm.so.6", "/lib/x86_64-linux-gnu/libm.so.6", "/usr/lib64/libm.so.6"} {
		if fileExists(p) {
			return p
		}
	}
	t.Skip("no libm.so.6 to copy on this machine")
	return ""
}

func copyFile(t *testing.T, src, dst string) {
	t.Helper()
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dst, b, 0o755); err != nil {
		t.Fatal(err)
	}
}

func TestNotFoundListsEverything(t *testing.T) {
	t.Setenv("VIRTUAL_ENV", t.TempDir())
	t.Setenv("GOCU_TEST_LIB", "")
	dir := t.TempDir()
	_, err := Open(Spec{
		What:     "libgocunothere",
		Env:      "GOCU_TEST_LIB",
		Sonames:  []string{"libgocunothere.so.13", "libgocunothere.so.12"},
		Dirs:     []string{dir, "/nonexistent/gocu/lib64", "/nonexistent/cuda-1[23]*/lib64"},
		Wheel:    []string{"nvidia/cu13/lib"},
		NotFound: errSentinel,
	})
	if err == nil {
		t.Fatal("Open found a library that does not exist")
	}
	if !errors.Is(err, errSentinel) {
		t.Errorf("errors.Is(err, sentinel) = false for %v", err)
	}
	var nf *NotFoundError
	if !errors.As(err, &nf) {
		t.Fatalf("error %T is not a *NotFoundError", err)
	}
	if line := err.Error(); strings.Contains(line, "\n") || !strings.HasSuffix(line, "(GOCU_LOAD_VERBOSE=1 lists the places)") {
		t.Errorf("the error is not one line ending with how to see the places:\n%s", line)
	}
	t.Setenv("GOCU_LOAD_VERBOSE", "1")
	msg := err.Error()
	for _, want := range []string{
		"libgocunothere not found",
		"libgocunothere.so.13 (dynamic loader)",
		"libgocunothere.so.12 (dynamic loader)",
		filepath.Join(dir, "libgocunothere.so.13") + ": no such file",
		"/nonexistent/gocu/lib64: no such directory",
		"/nonexistent/cuda-1[23]*/lib64: no such directory",
		"site-packages/nvidia/cu13/lib: no such directory",
		"set GOCU_TEST_LIB",
	} {
		if !strings.Contains(msg, want) {
			t.Errorf("error text lacks %q:\n%s", want, msg)
		}
	}
	if got, want := nf.Summary(), fmt.Sprintf("libgocunothere not found (%d places searched)", len(nf.Tried)); got != want {
		t.Errorf("Summary = %q, want %q", got, want)
	}
	// 2 loader names + 2 files in dir + 2 patterns + wheel patterns (one per python prefix, at least 2)
	if len(nf.Tried) < 8 {
		t.Errorf("only %d attempts recorded: %v", len(nf.Tried), nf.Tried)
	}
}

func TestEnvOverrideIsExclusive(t *testing.T) {
	t.Setenv("GOCU_LOAD_VERBOSE", "1") // the message lists the places
	lib := systemLib(t)
	bogus := filepath.Join(t.TempDir(), "libbogus.so")
	if err := os.WriteFile(bogus, []byte("not an ELF file"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("GOCU_TEST_LIB", bogus)
	// The loader could find libm.so.6, but the override names a broken
	// file: that must be reported, not silently replaced.
	_, err := Open(Spec{What: "libm", Env: "GOCU_TEST_LIB", Sonames: []string{filepath.Base(lib)}, NotFound: errSentinel})
	if err == nil {
		t.Fatal("a broken override loaded")
	}
	if !errors.Is(err, errSentinel) || !strings.Contains(err.Error(), bogus+" (from GOCU_TEST_LIB)") {
		t.Errorf("unexpected error: %v", err)
	}

	t.Setenv("GOCU_TEST_LIB", lib)
	l, err := Open(Spec{What: "libm", Env: "GOCU_TEST_LIB", Sonames: []string{"libgocunothere.so"}, NotFound: errSentinel})
	if err != nil {
		t.Fatal(err)
	}
	if l.Path != lib {
		t.Errorf("loaded %s, want %s", l.Path, lib)
	}
	if _, err := l.Sym("cos"); err != nil {
		t.Error(err)
	}
	if _, err := l.Sym("gocu_no_such_symbol"); err == nil || !strings.Contains(err.Error(), "gocu_no_such_symbol") {
		t.Errorf("missing symbol error = %v", err)
	}
}

func TestLoaderName(t *testing.T) {
	l, err := Open(Spec{What: "libc", Sonames: []string{"libgocunothere.so.1", "libc.so.6"}, NotFound: errSentinel})
	if err != nil {
		t.Fatal(err)
	}
	if l.Path != "libc.so.6" {
		t.Errorf("Path = %q", l.Path)
	}
}

func TestFixedDirectory(t *testing.T) {
	lib := systemLib(t)
	dir := filepath.Join(t.TempDir(), "cuda-12.4", "lib64")
	copyFile(t, lib, filepath.Join(dir, "libgocufake.so.12"))
	l, err := Open(Spec{
		What:     "fake",
		Sonames:  []string{"libgocufake.so.13", "libgocufake.so.12"},
		Dirs:     []string{filepath.Join(filepath.Dir(filepath.Dir(dir)), "cuda-1[23]*", "lib64")},
		NotFound: errSentinel,
	})
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(dir, "libgocufake.so.12"); l.Path != want {
		t.Errorf("Path = %s, want %s", l.Path, want)
	}
}

func TestWheelLayout(t *testing.T) {
	lib := systemLib(t)
	venv := t.TempDir()
	t.Setenv("VIRTUAL_ENV", venv)
	libdir := filepath.Join(venv, "lib", "python3.12", "site-packages", "nvidia", "cu13", "lib")
	copyFile(t, lib, filepath.Join(libdir, "libgocuwheel.so.13"))
	copyFile(t, lib, filepath.Join(libdir, "libgocuwheeldep.so.13"))
	l, err := Open(Spec{
		What:     "wheel",
		Sonames:  []string{"libgocuwheel.so.13"},
		Wheel:    []string{"nvidia/cuda_nvrtc/lib", "nvidia/cu13/lib"},
		Deps:     []string{"libgocuwheeldep.so.13"},
		NotFound: errSentinel,
	})
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(libdir, "libgocuwheel.so.13"); l.Path != want {
		t.Errorf("Path = %s, want %s", l.Path, want)
	}
}

func TestCandidatesDeduplicate(t *testing.T) {
	d := t.TempDir()
	got := Candidates([]string{d, d, filepath.Join(d, "*")}, nil)
	if len(got) != 2 || got[0].Path != d || got[1].Pattern == "" {
		t.Errorf("Candidates = %+v", got)
	}
}

func TestCStrings(t *testing.T) {
	for _, s := range []string{"", "x", "kernel.cu", strings.Repeat("é", 100)} {
		p := CString(s)
		if got := GoString(p); got != s {
			t.Errorf("round trip of %q gave %q", s, got)
		}
	}
	if GoString(nil) != "" {
		t.Error("GoString(nil) is not empty")
	}
}

// TestPathsAndRequire: Paths are tried as given and recorded under their
// own names; a library without a required symbol is closed and passed
// over, saying why.
func TestPathsAndRequire(t *testing.T) {
	lib := systemLib(t)
	missing := filepath.Join(t.TempDir(), "missing", "libgocu.so.1")
	_, err := Open(Spec{What: "a test driver", Paths: []string{missing, lib}, Require: []string{"cuInit"}, Global: true, NotFound: errSentinel})
	var nf *NotFoundError
	if !errors.As(err, &nf) || !errors.Is(err, errSentinel) || len(nf.Tried) != 2 {
		t.Fatalf("want two attempts, got %v", err)
	}
	if a := nf.Tried[0]; a.Path != missing || !strings.Contains(a.Reason, "No such file") || strings.Contains(a.Reason, missing) {
		t.Errorf("first attempt %+v: want the path as given and dlopen's reason without it", a)
	}
	if a := nf.Tried[1]; a.Path != lib || a.Reason != "loaded, but it has no cuInit: not a test driver" {
		t.Errorf("second attempt %+v", a)
	}
	l, err := Open(Spec{What: "libm", Sonames: []string{"libgocunothere.so.1"}, Paths: []string{missing, lib}, Require: []string{"cos", "sin"}})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if l.Path != lib {
		t.Errorf("Path = %q, want %q", l.Path, lib)
	}
}

// TestCall calls libc through Call: integers in, integers out, and a
// pointer that C reads.
func TestCall(t *testing.T) {
	l, err := Open(Spec{What: "libc", Sonames: []string{"libc.so.6"}})
	if err != nil {
		t.Skip(err)
	}
	labs, err := l.Sym("labs")
	if err != nil {
		t.Fatal(err)
	}
	strlen, err := l.Sym("strlen")
	if err != nil {
		t.Fatal(err)
	}
	neg := int64(-42)
	if got := int64(Call(labs, uintptr(neg))); got != 42 {
		t.Errorf("labs(-42) = %d", got)
	}
	s := CString("kernel.cu")
	if got := Call(strlen, uintptr(unsafe.Pointer(s))); got != 9 {
		t.Errorf("strlen = %d, want 9", got)
	}
	// A call passing an existing argument slice allocates nothing (the
	// driver bindings' launch path does this with memory off the heap).
	args := []uintptr{uintptr(neg)}
	if n := testing.AllocsPerRun(100, func() { _ = Call(labs, args...) }); n != 0 {
		t.Errorf("Call with an existing slice allocates %v times", n)
	}
}

// Once opens once, however many goroutines ask, and keeps the error too.
func TestOnce(t *testing.T) {
	var calls atomic.Int32
	o := NewOnce(func() (*Lib, error) {
		calls.Add(1)
		return &Lib{Path: "libfake.so.1"}, nil
	}, func(l *Lib) string { return l.Path })
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if p, err := o.Path(); p != "libfake.so.1" || err != nil {
				t.Errorf("Path = %q, %v", p, err)
			}
		}()
	}
	wg.Wait()
	if n := calls.Load(); n != 1 {
		t.Errorf("open called %d times, want 1", n)
	}
	bad := errors.New("no such library")
	f := NewOnce(func() (*Lib, error) { return nil, bad }, func(l *Lib) string { return l.Path })
	if p, err := f.Path(); p != "" || err != bad || f.Err() != bad {
		t.Errorf("failed Once: Path = %q, %v; Err = %v", p, err, f.Err())
	}
	if l, err := f.Lib(); l != nil || err != bad {
		t.Errorf("failed Once: Lib = %v, %v", l, err)
	}
}
