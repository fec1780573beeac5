// Package gputest is the one gate of the tests that need a GPU, or a CUDA
// library such as NVRTC, cuBLAS or NCCL.
//
// Without one, such a test skips with a one-line reason. On a GPU machine a
// skip would hide a broken driver or a missing library, so GOCU_REQUIRE_GPU=1
// turns the skip into a failure; the scripts in tools/gpu set it. Skips for
// want of a second GPU or a newer GPU stay skips: use t.Skip for those.
//
// It imports nothing of gocu, so the bindings' own tests can use it.
package gputest

import (
	"errors"
	"os"
	"strings"
	"testing"
)

// Env names the variable that turns a skip for want of a GPU into a failure.
const Env = "GOCU_REQUIRE_GPU"

// Required reports whether GOCU_REQUIRE_GPU is set to anything but 0.
func Required() bool {
	v := os.Getenv(Env)
	return v != "" && v != "0"
}

// Need does nothing when err is nil. Otherwise err says why the GPU, or a
// library, cannot be used: Need skips t with the first line of err, or
// fails t under GOCU_REQUIRE_GPU=1.
func Need(t testing.TB, err error) {
	t.Helper()
	if err == nil {
		return
	}
	if Required() {
		t.Fatalf("needs a GPU: %s (%s is set)", OneLine(err), Env)
	}
	t.Skipf("needs a GPU: %s", OneLine(err))
}

// OneLine is the first line of err, or its Summary when it has one. The
// loaders' errors list every path they tried, one a line.
func OneLine(err error) string {
	var s interface{ Summary() string }
	if errors.As(err, &s) {
		return s.Summary()
	}
	line, _, _ := strings.Cut(err.Error(), "\n")
	return line
}

// Usable reports whether err is nil, for the tests that run on the CPU and
// add the GPU when there is one. Otherwise it logs the first line of err,
// or fails t under GOCU_REQUIRE_GPU=1.
func Usable(t testing.TB, err error) bool {
	t.Helper()
	if err == nil {
		return true
	}
	if Required() {
		t.Errorf("no usable GPU: %s (%s is set)", OneLine(err), Env)
	} else {
		t.Logf("no usable GPU, the GPU case is not run: %s", OneLine(err))
	}
	return false
}
