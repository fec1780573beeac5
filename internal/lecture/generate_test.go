package lecture_test

import (
	"bytes"
	"os"
	"os/exec"
	"testing"

	"github.com/gocu-dev/gocu/gen"
)

// needGo skips where there is no go command, which gocu gen runs to load
// packages (the GPU machine runs prebuilt test binaries).
func needGo(t testing.TB) {
	t.Helper()
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command to load packages with:", err)
	}
}

// TestGeneratedUpToDate translates the package again and requires the
// committed zz_gocu_lecture.go to be exactly the translation: run go
// generate after editing a kernel.
func TestGeneratedUpToDate(t *testing.T) {
	needGo(t)
	res, err := gen.Generate(gen.Config{}, ".")
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Packages) != 1 {
		t.Fatalf("translated %d packages, want 1", len(res.Packages))
	}
	p := res.Packages[0]
	committed, err := os.ReadFile("zz_gocu_lecture.go")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(p.Go, committed) {
		dir := t.TempDir()
		os.WriteFile(dir+"/zz_gocu_lecture.go", p.Go, 0o644)
		t.Fatalf("zz_gocu_lecture.go is stale: run go generate in internal/lecture (the fresh translation is in %s)", dir)
	}
	want := []string{"Gray", "Gray2D", "GrayVec4", "GrayFast",
		"Histogram", "MatMul", "TiledMatMul", "TiledMatMulDynamic", "Sum", "ScanBlocks", "ScanAdd", "SGEMM",
		"GemmBF16", "GemmBF16MMA", "FlashAttention128", "FlashAttention64", "WGProbe"}
	if len(p.Kernels) != len(want) {
		t.Errorf("kernels %v, want %v", p.Kernels, want)
	}
	for _, k := range want {
		if !bytes.Contains(p.Go, []byte("func "+gen.LauncherName(k)+"(")) {
			t.Errorf("no launcher %s", gen.LauncherName(k))
		}
	}
}

// BenchmarkGoGenerate is go generate's work for this package: loading it
// with go/packages, translating its kernels and formatting the file.
func BenchmarkGoGenerate(b *testing.B) {
	needGo(b)
	for b.Loop() {
		if _, err := gen.Generate(gen.Config{}, "."); err != nil {
			b.Fatal(err)
		}
	}
}
