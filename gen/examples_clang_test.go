package gen

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/gocu-dev/gocu/gen/testdata/kernels/lang"
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

// TestClangLang compiles the lang kernels to PTX and checks the new
// constructs: printf becomes a call of vprintf (declared extern), the
// constant tables are .const arrays with their values, read with
// ld.const, and the generic kernels are entry points per instance.
func TestClangLang(t *testing.T) {
	m, _, ok := meta.Lookup(lang.Conv1D)
	if !ok {
		t.Fatal("testdata/kernels/lang is not registered")
	}
	ptx := ptxOf(t, m.Source)
	for _, want := range []string{
		".extern .func  (.param .b32 func_retval0) vprintf",
		".const .align 4 .b8 mask[20] = {0, 0, 128, 61, 0, 0, 128, 62, 0, 0, 192, 62, 0, 0, 128, 62, 0, 0, 128, 61};",
		".const .align 4 .b8 mask2[36]",
		".const .align 4 .b8 util_Smooth[12]",
	} {
		if !strings.Contains(ptx, want) {
			t.Errorf("the PTX lacks %q", want)
		}
	}
	if n := len(regexp.MustCompile(`call\.uni \(retval0\),\s*vprintf,`).FindAllString(ptxFunc(t, ptx, "Debug"), -1)); n != 5 {
		t.Errorf("Debug calls vprintf %d times, want 5 (4 prints and report's, inlined)", n)
	}
	if !regexp.MustCompile(`ld\.const\.f32`).MatchString(ptxFunc(t, ptx, "Conv1D")) {
		t.Errorf("Conv1D does not read its mask with ld.const")
	}
	if !regexp.MustCompile(`ld\.const\.u32|ld\.const\.b32|ld\.const\.s32`).MatchString(ptxFunc(t, ptx, "Conv2D")) {
		t.Errorf("Conv2D does not read its mask with ld.const")
	}
	for _, e := range []string{"Axpy_float32", "Axpy_float64", "Clamp_int32", "Clamp_int64", "Clamp_float32", "Scale_float32_int32", "Scale_float64_int64"} {
		ptxFunc(t, ptx, e)
	}
	if f := ptxFunc(t, ptx, "Axpy_float64"); !strings.Contains(f, ".f64") {
		t.Errorf("Axpy_float64 computes no float64:\n%s", f)
	}
}
