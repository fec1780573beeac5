package bugs_test

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
// committed zz_gocu_bugs.go to be exactly the translation: run go
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
	committed, err := os.ReadFile("zz_gocu_bugs.go")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(p.Go, committed) {
		dir := t.TempDir()
		os.WriteFile(dir+"/zz_gocu_bugs.go", p.Go, 0o644)
		t.Fatalf("zz_gocu_bugs.go is stale: run go generate in cmd/gocu/internal/demo/bugs (the fresh translation is in %s)", dir)
	}
	want := []string{"AddOffByOne", "TiledMatMulNoSync", "BlockSumDivergent"}
	if len(p.Kernels) != len(want) {
		t.Errorf("kernels %v, want %v", p.Kernels, want)
	}
	for _, k := range want {
		if !bytes.Contains(p.Go, []byte("func "+gen.LauncherName(k)+"(")) {
			t.Errorf("no launcher %s", gen.LauncherName(k))
		}
	}
}
