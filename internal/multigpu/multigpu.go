// Package multigpu opens every GPU of the machine for the tests of the
// packages that spread work over several (dist, frame, internal/gpttrain,
// cmd/gocu), so that each skips, or fails under GOCU_REQUIRE_GPU, alike.
package multigpu

import (
	"fmt"
	"testing"

	"github.com/gocu-dev/gocu"
	"github.com/gocu-dev/gocu/cuda"
	"github.com/gocu-dev/gocu/internal/gputest"
	"github.com/gocu-dev/gocu/nccl"
)

// Names returns cuda:0 to cuda:n-1 for the machine's n GPUs, or skips
// the test when there is no usable GPU or no NCCL.
func Names(t testing.TB) []string {
	t.Helper()
	gputest.Need(t, gocu.GPUUsable())
	gputest.Need(t, nccl.Load())
	n, err := cuda.DeviceCount()
	if err != nil {
		t.Fatal(err)
	}
	names := make([]string, n)
	for i := range names {
		names[i] = fmt.Sprintf("cuda:%d", i)
	}
	return names
}

// Devices returns every GPU as a gocu device, or skips as Names does.
func Devices(t testing.TB) []*gocu.Device {
	t.Helper()
	names := Names(t)
	devs := make([]*gocu.Device, len(names))
	for i, name := range names {
		d, err := gocu.Open(name)
		if err != nil {
			t.Fatal(err)
		}
		devs[i] = d
	}
	return devs
}
