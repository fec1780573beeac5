package cuda

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

func TestSearchListsEveryAttempt(t *testing.T) {
	dir := t.TempDir()
	notLib := filepath.Join(dir, "libcuda.so.1")
	if err := os.WriteFile(notLib, []byte("this is not a shared library\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(dir, "missing", "libcuda.so.1")
	paths := []string{missing, notLib}
	if runtime.GOOS == "linux" {
		paths = append(paths, "libm.so.6") // a real library, but not a CUDA driver
	}
	_, err := openDriver("", paths)
	if !errors.Is(err, ErrNoDriver) {
		t.Fatalf("openDriver: %v", err)
	}
	var le *LoadError
	if !errors.As(err, &le) || len(le.Attempts) != len(paths) {
		t.Fatalf("want %d attempts, got %v", len(paths), err)
	}
	if line := err.Error(); strings.Contains(line, "\n") || !strings.HasPrefix(line, fmt.Sprintf("no NVIDIA driver (libcuda.so.1 not found in %d places searched): ", len(paths))) {
		t.Errorf("the error is not one line:\n%s", line)
	}
	t.Setenv("GOCU_LOAD_VERBOSE", "1")
	msg := err.Error()
	for _, p := range paths {
		if !strings.Contains(msg, p+": ") {
			t.Errorf("error does not list %s:\n%s", p, msg)
		}
	}
	if runtime.GOOS == "linux" {
		for _, want := range []string{"No such file", "not a CUDA driver", "GOCU_CUDA_LIB"} {
			if !strings.Contains(msg, want) {
				t.Errorf("error lacks %q:\n%s", want, msg)
			}
		}
		if reason := le.Attempts[1].Err.Error(); reason == "" || strings.Contains(reason, "No such file") {
			t.Errorf("a file that is not a library should say why dlopen refused it, got %q", reason)
		}
	}
}

func TestSearchHonoursEnv(t *testing.T) {
	env := filepath.Join(t.TempDir(), "nowhere", "libcuda.so.1")
	_, err := openDriver(env, []string{"libc.so.6", "libm.so.6"})
	var le *LoadError
	if !errors.As(err, &le) || len(le.Attempts) != 1 || le.Attempts[0].Path != env {
		t.Fatalf("with GOCU_CUDA_LIB only that path may be tried: %v", err)
	}
	if msg := err.Error(); !strings.Contains(msg, "GOCU_CUDA_LIB="+env) || !strings.Contains(msg, "unset GOCU_CUDA_LIB") {
		t.Errorf("message: %s", msg)
	}
	if got, want := le.Summary(), "no NVIDIA driver (libcuda.so.1 not found in 1 places searched, GOCU_CUDA_LIB="+env+")"; got != want {
		t.Errorf("Summary = %q, want %q", got, want)
	}
}

func TestSearchPaths(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the search list is for Linux")
	}
	want := []string{"libcuda.so.1", "/usr/lib/x86_64-linux-gnu/libcuda.so.1", "/usr/lib64/libcuda.so.1",
		"/usr/local/nvidia/lib64/libcuda.so.1", "/usr/lib/wsl/lib/libcuda.so.1", "/usr/local/cuda/compat/libcuda.so.1"}
	for _, w := range want {
		found := false
		for _, p := range libraryPaths {
			found = found || p == w
		}
		if !found {
			t.Errorf("%s is not searched", w)
		}
	}
	if libraryPaths[0] != "libcuda.so.1" {
		t.Error("the dynamic loader's own search must come first")
	}
	for _, p := range libraryPaths {
		if strings.Contains(p, "stubs") {
			t.Errorf("%s: the toolkit's stub libcuda must never be loaded", p)
		}
	}
}

// TestEnvLibraryOverride runs the package in a child process with
// GOCU_CUDA_LIB pointing at a file that is not a library: nothing may
// panic, Available is false, and Init says what was tried.
func TestEnvLibraryOverride(t *testing.T) {
	t.Setenv("GOCU_LOAD_VERBOSE", "1") // the message lists the places
	if os.Getenv("GOCU_TEST_CHILD") == "envlib" {
		fmt.Printf("AVAILABLE=%v\n", Available())
		err := Init()
		fmt.Printf("NODRIVER=%v\nERR=%v\n", errors.Is(err, ErrNoDriver), err)
		_, derr := DeviceAt(0)
		fmt.Printf("DEVICEERR=%v\n", derr != nil)
		return
	}
	bad := filepath.Join(t.TempDir(), "libcuda.so.1")
	if err := os.WriteFile(bad, []byte("garbage"), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestEnvLibraryOverride$", "-test.v")
	cmd.Env = append(os.Environ(), "GOCU_TEST_CHILD=envlib", "GOCU_CUDA_LIB="+bad)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child failed: %v\n%s", err, out)
	}
	s := string(out)
	for _, want := range []string{"AVAILABLE=false", "NODRIVER=true", "DEVICEERR=true", "no NVIDIA driver",
		"GOCU_CUDA_LIB=" + bad, bad + ": "} {
		if !strings.Contains(s, want) {
			t.Errorf("child output lacks %q:\n%s", want, s)
		}
	}
}

// TestNoDriverHere checks the real search on a machine without a driver
// (CI): an error listing the places searched, never a panic.
func TestNoDriverHere(t *testing.T) {
	t.Setenv("GOCU_LOAD_VERBOSE", "1") // the message lists the places
	if os.Getenv(envLib) != "" {
		t.Skip("GOCU_CUDA_LIB is set")
	}
	err := Init()
	if err == nil {
		t.Skip("a CUDA driver is present")
	}
	if !errors.Is(err, ErrNoDriver) {
		t.Skipf("a driver was found but cannot be used: %v", err)
	}
	if Available() {
		t.Fatal("Available with an error from Init")
	}
	for _, p := range libraryPaths {
		if !strings.Contains(err.Error(), p) {
			t.Errorf("the error does not list %s", p)
		}
	}
	if _, err := DriverVersion(); !errors.Is(err, ErrNoDriver) {
		t.Errorf("DriverVersion: %v", err)
	}
	if n, err := DeviceCount(); n != 0 || err == nil {
		t.Errorf("DeviceCount = %d, %v", n, err)
	}
	if p, err := LibraryPath(); p != "" || !errors.Is(err, ErrNoDriver) {
		t.Errorf("LibraryPath without a driver: %q, %v", p, err)
	}
}
