package nccl

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestSearchListsEveryPlace(t *testing.T) {
	t.Setenv("GOCU_LOAD_VERBOSE", "1") // the message lists the places
	t.Setenv("GOCU_NCCL_LIB", "")
	venv := t.TempDir()
	t.Setenv("VIRTUAL_ENV", venv)
	_, err := open(spec)
	if err == nil {
		t.Skip("libnccl is installed here; the not-found text cannot be produced")
	}
	if !errors.Is(err, ErrNoLibrary) {
		t.Fatalf("errors.Is(err, ErrNoLibrary) is false for %v", err)
	}
	msg := err.Error()
	for _, want := range []string{
		"libnccl (NCCL 2) not found",
		"libnccl.so.2 (dynamic loader)",
		"libnccl.so (dynamic loader)",
		"/usr/lib/x86_64-linux-gnu",
		filepath.Join(venv, "lib/python3*/site-packages/nvidia/nccl/lib"),
		"set GOCU_NCCL_LIB",
	} {
		if !strings.Contains(msg, want) {
			t.Errorf("message lacks %q:\n%s", want, msg)
		}
	}
}

func TestOverrideNamesTheFile(t *testing.T) {
	t.Setenv("GOCU_LOAD_VERBOSE", "1") // the message lists the places
	bogus := filepath.Join(t.TempDir(), "libnccl.so.2")
	if err := os.WriteFile(bogus, []byte("not a library"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("GOCU_NCCL_LIB", bogus)
	_, err := open(spec)
	if !errors.Is(err, ErrNoLibrary) || !strings.Contains(err.Error(), bogus+" (from GOCU_NCCL_LIB)") {
		t.Fatalf("err = %v", err)
	}
	// Only the named file is tried: a wrong override is not silently
	// replaced by another library.
	if strings.Contains(err.Error(), "dynamic loader") {
		t.Errorf("searched past the override:\n%v", err)
	}
}

// A real shared library that is not NCCL (libc) loads, and must be refused
// with a clear error rather than crash on the first call.
func TestOverrideWithTheWrongLibrary(t *testing.T) {
	libc := ""
	for _, p := range []string{"/lib/x86_64-linux-gnu/libc.so.6", "/usr/lib/x86_64-linux-gnu/libc.so.6", "/lib64/libc.so.6", "/lib/aarch64-linux-gnu/libc.so.6"} {
		if _, err := os.Stat(p); err == nil {
			libc = p
			break
		}
	}
	if libc == "" {
		t.Skip("no libc.so.6 at the usual places")
	}
	t.Setenv("GOCU_NCCL_LIB", libc)
	_, err := open(spec)
	var le *LoadError
	if !errors.As(err, &le) || !errors.Is(err, ErrNoLibrary) {
		t.Fatalf("err = %v, want a *LoadError matching ErrNoLibrary", err)
	}
	for _, want := range []string{libc, "is not a usable NCCL", "ncclGetVersion", "GOCU_NCCL_LIB"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("message lacks %q: %v", want, err)
		}
	}
}

func TestWithoutLibrary(t *testing.T) {
	if Available() {
		t.Skip("libnccl is installed here")
	}
	if _, err := NewUniqueID(); !errors.Is(err, ErrNoLibrary) {
		t.Errorf("NewUniqueID: %v", err)
	}
	if _, _, _, err := Version(); !errors.Is(err, ErrNoLibrary) {
		t.Errorf("Version: %v", err)
	}
	if _, err := LibraryPath(); !errors.Is(err, ErrNoLibrary) {
		t.Errorf("Path: %v", err)
	}
	if err := Group(func() error { return nil }); !errors.Is(err, ErrNoLibrary) {
		t.Errorf("Group: %v", err)
	}
	if Float32.Supported() {
		t.Error("Float32.Supported() without a library")
	}
}

func TestVersionCodes(t *testing.T) {
	for _, c := range []struct {
		code                int
		major, minor, patch int
	}{
		{2804, 2, 8, 4},
		{20903, 2, 9, 3},
		{21403, 2, 14, 3},
		{22605, 2, 26, 5},
		{23007, 2, 30, 7},
	} {
		ma, mi, pa := splitVersion(c.code)
		if ma != c.major || mi != c.minor || pa != c.patch {
			t.Errorf("splitVersion(%d) = %d.%d.%d", c.code, ma, mi, pa)
		}
		if got := versionCode(c.major, c.minor, c.patch); got != c.code {
			t.Errorf("versionCode(%d.%d.%d) = %d, want %d", c.major, c.minor, c.patch, got, c.code)
		}
	}
	l := &lib{version: 22403}
	if !l.atLeast(2, 24) || l.atLeast(2, 25) || !l.atLeast(2, 9) {
		t.Error("atLeast is wrong for 2.24.3")
	}
}

// The spec looks where PyTorch's wheel puts libnccl.
func TestSpecCoversTheWheel(t *testing.T) {
	if !strings.Contains(strings.Join(spec.Wheel, " "), "nvidia/nccl/lib") {
		t.Errorf("spec.Wheel = %v", spec.Wheel)
	}
	if spec.Sonames[0] != "libnccl.so.2" || spec.Env != "GOCU_NCCL_LIB" || spec.NotFound != ErrNoLibrary {
		t.Errorf("spec = %+v", spec)
	}

}
