package grad_test

import (
	"os"
	"sync"
	"testing"

	"github.com/gocu-dev/gocu"
	"github.com/gocu-dev/gocu/array"
	"github.com/gocu-dev/gocu/internal/gputest"
)

// TestMain keeps package-level constructors on the CPU unless GOCU_DEVICE
// chooses; GPU tests use GPU 0 explicitly.
func TestMain(m *testing.M) {
	if os.Getenv("GOCU_DEVICE") == "" {
		array.SetDefault(gocu.MustOpen("cpu"))
	}
	os.Exit(m.Run())
}

var gpuOnce = sync.OnceValues(func() (*array.Maker, error) {
	if err := gocu.GPUUsable(); err != nil {
		return nil, err
	}
	return array.GPU(0)
})

// devices returns the CPU and, when there is one, GPU 0, by name.
func devices(t *testing.T) map[string]*array.Maker {
	ds := map[string]*array.Maker{"cpu": array.CPU()}
	if g, err := gpuOnce(); gputest.Usable(t, err) {
		ds["gpu"] = g
	}
	return ds
}
