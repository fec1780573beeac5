//go:build gocu_fakedriver

package prof_test

import (
	"testing"

	"github.com/gocu-dev/gocu/cuda"
)

// The memory history of a device on cuda's fake driver: the caching
// allocator is real, only the driver's memory is not.
func TestMemoryHistoryFakeGPU(t *testing.T) {
	d, err := cuda.FakeDevice()
	if err != nil {
		t.Skip(err)
	}
	checkMemoryHistory(t, d, d.FakeStream())
}
