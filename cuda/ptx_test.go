package cuda_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gocu-dev/gocu/internal/clangtest"
)

// TestKernelsPTXUpToDate regenerates the test kernels' PTX from
// testdata/kernels.cu with clang and compares it with the embedded copy.
func TestKernelsPTXUpToDate(t *testing.T) {
	// Only where CI asks for it: another build of clang-16 (the GPU
	// machine's Ubuntu one) writes different, equally valid PTX.
	if !clangtest.Required() {
		t.Skip("set GOCU_REQUIRE_CLANG=1 (as .ci/run does) to compare the PTX with clang-16's output")
	}
	clang := clangtest.Need(t, "clang-16")
	out := filepath.Join(t.TempDir(), "k.ptx")
	cmd := exec.Command(clang, "-x", "cuda", "--cuda-device-only", "-nocudainc", "-nocudalib", clangtest.NoCUDA, "--cuda-gpu-arch=sm_52",
		"-O2", "-S", "-o", out, "testdata/kernels.cu")
	if msg, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("clang-16 cannot compile testdata/kernels.cu: %v\n%s", err, msg)
	}
	got, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != kernelsPTX {
		t.Fatal("testdata/kernels.ptx is stale: run testdata/gen.sh")
	}
	for _, k := range []string{"vadd", "inc", "inc1", "saxpy", "oob", "rev256", "revdyn", "affine"} {
		if !strings.Contains(kernelsPTX, ".visible .entry "+k+"(") {
			t.Errorf("kernel %s missing from the PTX", k)
		}
	}
}
