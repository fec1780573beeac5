package gen

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gocu-dev/gocu/internal/clangtest"
)

// clangPath returns Debian's clang-16, or skips the test (fails it under
// GOCU_REQUIRE_CLANG=1) where there is none: package clangtest.
func clangPath(t testing.TB) string {
	t.Helper()
	return clangtest.Need(t, "clang-16")
}

// compileCUDA compiles src to PTX for sm_90 with clang-16 and the test
// prelude, once as release and once with -DGOCU_DEBUG, and fails the test
// with clang's messages on an error.
func compileCUDA(t testing.TB, name, src string) {
	t.Helper()
	clang := clangPath(t)
	dir := t.TempDir()
	cu := filepath.Join(dir, name+".cu")
	if err := os.WriteFile(cu, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	prelude, err := filepath.Abs("testdata/clang")
	if err != nil {
		t.Fatal(err)
	}
	for _, debug := range []bool{false, true} {
		args := []string{"-x", "cuda", "--cuda-device-only", "-nocudainc", "-nocudalib", clangtest.NoCUDA, "--cuda-gpu-arch=sm_90",
			"-Xclang", "-target-feature", "-Xclang", "+ptx78", "-O2", "-S",
			"-I", prelude, "-include", "gocu_clang_prelude.h", "-Werror=return-type", "-Wno-unused-value",
			"-o", filepath.Join(dir, name+".ptx"), cu}
		if debug {
			args = append([]string{"-DGOCU_DEBUG"}, args...)
		}
		out, err := exec.Command(clang, args...).CombinedOutput()
		if err != nil {
			t.Fatalf("clang-16 (debug=%v) rejects the generated CUDA for %s: %v\n%s\n--- source ---\n%s", debug, name, err, out, numbered(src))
		}
	}
}

func numbered(src string) string {
	var b strings.Builder
	for i, l := range strings.Split(src, "\n") {
		b.WriteString(strings.TrimSpace(strings.Repeat(" ", 5)+itoa(i+1)) + "  " + l + "\n")
	}
	return b.String()
}

func itoa(i int) string {
	const digits = "0123456789"
	if i < 10 {
		return digits[i : i+1]
	}
	return itoa(i/10) + digits[i%10:i%10+1]
}
