//go:build gocu_fakedriver

package gocu

import (
	"testing"

	"github.com/gocu-dev/gocu/cuda"
)

// fakeGPU returns a gocu device over cuda's fake driver (-tags
// gocu_fakedriver): every host-side step of a copy or launch is real, the
// driver's work is not, so values are not checked.
func fakeGPU(t *testing.T) *Device {
	g, err := cuda.FakeDevice()
	if err != nil {
		t.Skip(err)
	}
	d := &Device{kind: CUDA, gpu: g}
	d.stream = &Stream{dev: d, s: g.DefaultStream()}
	return d
}

func TestSyncDebugFakeGPU(t *testing.T) {
	d := fakeGPU(t)
	k := &Kernel{dev: d, fn: d.gpu.FakeFunction("twice"), name: "twice"}
	checkSyncDebug(t, d, k, false)
	checkSyncDebugOutOfMemory(t, d)
}
