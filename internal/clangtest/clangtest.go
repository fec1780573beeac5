// Package clangtest finds Debian's clang-16 for the tests that compile
// generated CUDA C and C++ without a GPU (DESIGN.md: CI compiles them with
// `clang-16 -x cuda --cuda-device-only -nocudainc -nocudalib`, and runs the
// array package's kernels on the host with clang++-16 and AddressSanitizer).
//
// Those tests pin what Debian's clang 16 accepts and writes: another clang,
// or clang-16 as another distribution builds it, warns, rejects or emits
// different code (the GPU machine's does). So they check for exactly that:
// the binary named clang-16 (or clang++-16) on PATH whose --version begins
// "Debian clang version 16.". Elsewhere they skip, saying why, unless
// GOCU_REQUIRE_CLANG=1 (as .ci/run sets), when they fail.
//
// Clang in CUDA mode also looks for a CUDA toolkit, and warns about one
// newer than it knows even with -nocudainc -nocudalib: NoCUDA keeps an
// installed toolkit out of the compile.
package clangtest

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
)

// Env names the variable that turns a skip for want of Debian's clang-16
// into a failure.
const Env = "GOCU_REQUIRE_CLANG"

// Vendor is how Debian's clang 16 begins its --version.
const Vendor = "Debian clang version 16."

// NoCUDA is the flag that points clang's CUDA mode at no toolkit, so that
// the compile is the same on a machine with CUDA installed (where clang 16
// warns "CUDA version is newer than the latest partially supported
// version") as on one without.
const NoCUDA = "--cuda-path=/nonexistent/gocu-clangtest-no-cuda"

type found struct {
	path string
	err  error
}

var cache sync.Map // name -> found

// Find returns the path of name ("clang-16" or "clang++-16") when it is
// Debian's clang 16, or an error saying what is there instead.
func Find(name string) (string, error) {
	if f, ok := cache.Load(name); ok {
		return f.(found).path, f.(found).err
	}
	f := find(name)
	cache.Store(name, f)
	return f.path, f.err
}

func find(name string) found {
	path, err := exec.LookPath(name)
	if err != nil {
		return found{err: fmt.Errorf("%s is not installed (apt-get install clang-16 libclang-rt-16-dev)", name)}
	}
	out, err := exec.Command(path, "--version").Output()
	if err != nil {
		return found{err: fmt.Errorf("%s --version: %v", path, err)}
	}
	first, _, _ := strings.Cut(string(bytes.TrimSpace(out)), "\n")
	if !strings.HasPrefix(first, Vendor) {
		return found{err: fmt.Errorf("%s is %q, not Debian's clang 16", path, first)}
	}
	return found{path: path}
}

// Required reports whether GOCU_REQUIRE_CLANG is set (to anything but 0).
func Required() bool {
	v := os.Getenv(Env)
	return v != "" && v != "0"
}

// Need returns the path of name when it is Debian's clang 16; otherwise it
// skips t, or fails it under GOCU_REQUIRE_CLANG=1.
func Need(t testing.TB, name string) string {
	t.Helper()
	p, err := Find(name)
	if err != nil {
		Unusable(t, err.Error())
	}
	return p
}

// Unusable skips t because Debian's clang-16 (or a part of it, such as
// its AddressSanitizer runtime) cannot be used, for the reason given; under
// GOCU_REQUIRE_CLANG=1 it fails t instead.
func Unusable(t testing.TB, reason string) {
	t.Helper()
	if Required() {
		t.Fatalf("%s (%s is set: the test needs Debian's clang-16)", reason, Env)
	}
	t.Skipf("%s: the test needs Debian's clang-16 (%s=1 makes this a failure)", reason, Env)
}
