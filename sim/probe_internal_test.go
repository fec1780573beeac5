package sim

import "testing"

func TestFramePointerCallers(t *testing.T) {
	if haveFP && !useFP {
		t.Fatal("fpCallers disagrees with runtime.Callers on this build; the simulator falls back to the slow path")
	}
	if !haveFP {
		t.Skip("no frame-pointer walker on this architecture")
	}
}
