package nvrtc

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
	bogus := filepath.Join(t.TempDir(), "libnvrtc.so.13")
	if err := os.WriteFile(bogus, []byte("not a library"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("GOCU_NVRTC_LIB", bogus)
	_, err := dynlib.Open(spec)
	if !errors.Is(err, ErrNotFound) {
		t.Fatalf("err = %v, want ErrNotFound", err)
	}
	if msg := err.Error(); !strings.Contains(msg, bogus+" (from GOCU_NVRTC_LIB)") {
		t.Errorf("message does not name the override:\n%s", msg)
	}
}

func TestSearchListsEveryPlace(t *testing.T) {
	t.Setenv("GOCU_LOAD_VERBOSE", "1") // the message lists the places
	t.Setenv("GOCU_NVRTC_LIB", "")
	venv := t.TempDir()
	t.Setenv("VIRTUAL_ENV", venv)
	_, err := dynlib.Open(spec)
	if err == nil {
		t.Skip("libnvrtc is installed here; the not-found text cannot be produced")
	}
	if !errors.Is(err, ErrNotFound) {
		t.Fatalf("err = %v", err)
	}
	msg := err.Error()
	for _, want := range []string{
		"libnvrtc (NVRTC, CUDA 12 or 13) not found",
		"libnvrtc.so.13 (dynamic loader)",
		"libnvrtc.so.12 (dynamic loader)",
		"/usr/local/cuda/targets/x86_64-linux/lib",
		"/usr/local/cuda-13*/targets/x86_64-linux/lib",
		filepath.Join(venv, "lib/python3*/site-packages/nvidia/cu13/lib"),
		filepath.Join(venv, "lib/python3*/site-packages/nvidia/cuda_nvrtc/lib"),
		"/opt/*/.venv/lib/python3*/site-packages/nvidia/cu13/lib",
		"set GOCU_NVRTC_LIB",
	} {
		if !strings.Contains(msg, want) {
			t.Errorf("message lacks %q:\n%s", want, msg)
		}
	}
}

// TestLoadWithoutLibrary checks what every entry point does on a machine
// without NVRTC: a clear error, no panic.
func TestLoadWithoutLibrary(t *testing.T) {
	if Available() {
		t.Skip("libnvrtc is installed here")
	}
	err := Load()
	if !errors.Is(err, ErrNotFound) {
		t.Fatalf("Load() = %v", err)
	}
	if _, _, err := Version(); !errors.Is(err, ErrNotFound) {
		t.Errorf("Version: %v", err)
	}
	if _, err := SupportedArchs(); !errors.Is(err, ErrNotFound) {
		t.Errorf("SupportedArchs: %v", err)
	}
	if _, err := LibraryPath(); !errors.Is(err, ErrNotFound) {
		t.Errorf("Path: %v", err)
	}
	if _, err := Compile(testSrc, Options{Arch: "sm_90"}); !errors.Is(err, ErrNotFound) {
		t.Errorf("Compile: %v", err)
	}
	if _, err := NVRTC.ID(); !errors.Is(err, ErrNotFound) {
		t.Errorf("NVRTC.ID: %v", err)
	}
}
