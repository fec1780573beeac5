package gen

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/gocu-dev/gocu/internal/clangtest"
	"github.com/gocu-dev/gocu/internal/lecture"
	"github.com/gocu-dev/gocu/meta"
)

// ptxOf compiles src to PTX for sm_90 with clang-16 (release build) and
// returns it.
func ptxOf(t *testing.T, src string) string {
	t.Helper()
	clang := clangPath(t)
	dir := t.TempDir()
	cu, ptx := filepath.Join(dir, "k.cu"), filepath.Join(dir, "k.ptx")
	if err := os.WriteFile(cu, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	prelude, _ := filepath.Abs("testdata/clang")
	out, err := exec.Command(clang, "-x", "cuda", "--cuda-device-only", "-nocudainc", "-nocudalib", clangtest.NoCUDA, "--cuda-gpu-arch=sm_90",
		"-Xclang", "-target-feature", "-Xclang", "+ptx78", "-O3", "-S", "-I", prelude, "-include", "gocu_clang_prelude.h",
		"-o", ptx, cu).CombinedOutput()
	if err != nil {
		t.Fatalf("clang-16: %v\n%s", err, out)
	}
	b, err := os.ReadFile(ptx)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// ptxFunc returns the PTX of the entry point name.
func ptxFunc(t *testing.T, ptx, name string) string {
	t.Helper()
	i := strings.Index(ptx, ".entry "+name+"(")
	if i < 0 {
		t.Fatalf("no entry %s in the PTX", name)
	}
	rest := ptx[i:]
	if j := strings.Index(rest[1:], ".entry "); j >= 0 {
		rest = rest[:j+1]
	}
	return rest
}

// TestClangExamples compiles the examples' kernels (the lecture kernels,
// GrayFast and SGEMM) to PTX, release and debug, and checks that the fast
// kernels get the wide memory accesses they were written for and keep
// their tiles in registers.
func TestClangExamples(t *testing.T) {
	m, _, ok := meta.Lookup(lecture.Gray)
	if !ok {
		t.Fatal("internal/lecture is not registered")
	}
	compileCUDA(t, "examples", m.Source)
	ptx := ptxOf(t, m.Source)
	count := func(body, re string) int { return len(regexp.MustCompile(re).FindAllString(body, -1)) }

	gray := ptxFunc(t, ptx, "GrayFast")
	if n := count(gray, `ld\.global\.(nc\.)?v4\.u32`); n < 3 {
		t.Errorf("GrayFast: %d 128-bit loads of the image, want 3 per iteration (the planes):\n%s", n, gray)
	}
	if n := count(gray, `st\.global\.v4\.u32`); n < 1 {
		t.Errorf("GrayFast: no 128-bit store of gray:\n%s", gray)
	}
	if n := count(gray, `ld\.global\.(nc\.)?u8`); n > 0 {
		t.Errorf("GrayFast: %d byte loads", n)
	}

	gemm := ptxFunc(t, ptx, "SGEMM")
	if n := count(gemm, `ld\.shared\.v4\.f32`); n < 4*8 {
		t.Errorf("SGEMM: %d 128-bit shared loads, want at least 32 (4 per step of the unrolled panel)", n)
	}
	if n := count(gemm, `ld\.global\.(nc\.)?v4\.f32`); n < 2 {
		t.Errorf("SGEMM: %d 128-bit global loads of a and b, want at least 2", n)
	}
	if n := count(gemm, `st\.global\.v4\.f32`); n < 16 {
		t.Errorf("SGEMM: %d 128-bit stores of c, want 16", n)
	}
	if n := count(gemm, `fma\.rn\.f32|__nv_fmaf,`); n < 8*8*8 { // clang calls libdevice's fmaf
		t.Errorf("SGEMM: %d FMAs, want at least 512 (8 x 8 per step, 8 steps unrolled)", n)
	}
	if strings.Contains(gemm, ".local") {
		t.Errorf("SGEMM uses local memory: its tiles must stay in registers")
	}
}
