package cudagen

import (
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"

	"github.com/gocu-dev/gocu/internal/clangtest"
)

// The host harnesses run generated kernels under AddressSanitizer with
// every buffer allocated at exactly its bound size (and an empty buffer
// bound as a null pointer, which is what the GPU backend passes for one),
// so a read or write one element past what a launch was given fails the
// test with the kernel's source line, where the GPU would fault with
// CUDA_ERROR_ILLEGAL_ADDRESS or, worse, read a neighbour's memory silently.

var asan struct {
	once  sync.Once
	ok    bool
	probe string
}

// sanitizerFlags returns the clang flags that bounds-check the harness's
// memory accesses. A harness without them would accept out-of-bounds
// reads, so the test does not run without the ASan runtime: it skips, or
// fails under GOCU_REQUIRE_CLANG=1 (package clangtest).
func sanitizerFlags(t testing.TB) []string {
	t.Helper()
	asan.once.Do(func() {
		dir, err := os.MkdirTemp("", "gocu-asan")
		if err != nil {
			asan.probe = err.Error()
			return
		}
		defer os.RemoveAll(dir)
		src := filepath.Join(dir, "p.cpp")
		os.WriteFile(src, []byte("#include <cstdlib>\nint main() { int *p = (int*)malloc(8); p[1] = 1; free(p); return 0; }\n"), 0o600)
		out, err := exec.Command("clang++-16", "-fsanitize=address", "-o", filepath.Join(dir, "p"), src).CombinedOutput()
		asan.ok, asan.probe = err == nil, string(out)
	})
	if !asan.ok {
		clangtest.Unusable(t, "clang++-16 cannot build with -fsanitize=address (install libclang-rt-16-dev): "+firstLines(asan.probe, 5))
	}
	return []string{"-fsanitize=address", "-fno-omit-frame-pointer", "-gline-tables-only"}
}

// sanitizedRun runs a harness binary with the sanitizer's options: no leak
// check (buffers live to the end), no fake stacks (the harness switches
// ucontext stacks), and a report that names the kernel line.
func sanitizedRun(bin string, args ...string) *exec.Cmd {
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), "ASAN_OPTIONS=detect_leaks=0:detect_stack_use_after_return=0:abort_on_error=0:halt_on_error=1:symbolize=1",
		"ASAN_SYMBOLIZER_PATH="+symbolizer())
	return cmd
}

func symbolizer() string {
	for _, p := range []string{"llvm-symbolizer-16", "llvm-symbolizer"} {
		if q, err := exec.LookPath(p); err == nil {
			return q
		}
	}
	if _, err := os.Stat("/usr/lib/llvm-16/bin/llvm-symbolizer"); err == nil {
		return "/usr/lib/llvm-16/bin/llvm-symbolizer"
	}
	return ""
}
