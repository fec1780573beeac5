package array

import (
	"os"
	"sync"
	"testing"

	"github.com/gocu-dev/gocu"
	"github.com/gocu-dev/gocu/internal/gputest"
)

// TestMain keeps the package-level constructors on the CPU unless
// GOCU_DEVICE chooses a device: the testable examples print CPU results
// (a GPU's float functions may differ in the last printed digit). GPU
// tests use GPU(0) explicitly.
func TestMain(m *testing.M) {
	if os.Getenv("GOCU_DEVICE") == "" {
		SetDefault(gocu.MustOpen("cpu"))
	}
	os.Exit(m.Run())
}

var gpuOnce = sync.OnceValues(func() (*Maker, error) {
	if err := gocu.GPUUsable(); err != nil {
		return nil, err
	}
	return GPU(0)
})

// gpuErr says why GPU tests skip (nil when GPU 0 can be used).
func gpuErr() error {
	_, err := gpuOnce()
	return err
}

// testGPU returns GPU 0, or skips the test with the reason.
func testGPU(t testing.TB) *Maker {
	t.Helper()
	d, err := gpuOnce()
	gputest.Need(t, err)
	return d
}
