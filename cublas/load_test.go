package cublas

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gocu-dev/gocu/internal/dynlib"
)

func TestOverrideNamesTheFile(t *testing.T) {
	t.Setenv("GOCU_LOAD_VERBOSE", "1") // the message lists the places
	bogus := filepath.Join(t.TempDir(), "libcublas.so.13")
	if err := os.WriteFile(bogus, []byte("not a library"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("GOCU_CUBLAS_LIB", bogus)
	_, err := dynlib.Open(spec)
	if !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), bogus+" (from GOCU_CUBLAS_LIB)") {
		t.Fatalf("err = %v", err)
	}
}

func TestSearchListsEveryPlace(t *testing.T) {
	t.Setenv("GOCU_LOAD_VERBOSE", "1") // the message lists the places
	t.Setenv("GOCU_CUBLAS_LIB", "")
	venv := t.TempDir()
	t.Setenv("VIRTUAL_ENV", venv)
	_, err := dynlib.Open(spec)
	if err == nil {
		t.Skip("libcublas is installed here; the not-found text cannot be produced")
	}
	msg := err.Error()
	for _, want := range []string{
		"libcublas (cuBLAS, CUDA 12 or 13) not found",
		"libcublas.so.13 (dynamic loader)",
		"libcublas.so.12 (dynamic loader)",
		"/usr/local/cuda/lib64",
		filepath.Join(venv, "lib/python3*/site-packages/nvidia/cu13/lib"),
		filepath.Join(venv, "lib/python3*/site-packages/nvidia/cublas/lib"),
		"set GOCU_CUBLAS_LIB",
	} {
		if !strings.Contains(msg, want) {
			t.Errorf("message lacks %q:\n%s", want, msg)
		}
	}
}

func TestWithoutLibrary(t *testing.T) {
	if Available() {
		t.Skip("libcublas is installed here")
	}
	if _, err := Create(); !errors.Is(err, ErrNotFound) {
		t.Errorf("Create: %v", err)
	}
	if _, _, _, err := Version(); !errors.Is(err, ErrNotFound) {
		t.Errorf("Version: %v", err)
	}
	if _, err := LibraryPath(); !errors.Is(err, ErrNotFound) {
		t.Errorf("Path: %v", err)
	}
}
