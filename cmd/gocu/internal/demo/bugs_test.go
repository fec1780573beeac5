package demo

import (
	"errors"
	"strings"
	"testing"

	"github.com/gocu-dev/gocu"
	"github.com/gocu-dev/gocu/sim"
)

// TestBugs checks each report: its kind, the kernel, and that it points
// into broken.go, for several schedules.
func TestBugs(t *testing.T) {
	for _, seed := range []uint64{1, 42, 0xfeed} {
		bugs, err := Bugs(seed)
		if err != nil {
			t.Fatal(err)
		}
		want := []struct {
			kind   sim.Kind
			kernel string
			text   []string
		}{
			{sim.KindSharedRace, "TiledMatMulNoSync", []string{"shared-memory race", "no SyncThreads between them"}},
			{sim.KindOutOfRange, "AddOffByOne", []string{"block (3,0,0) thread (232,0,0)", "index 1000 out of range [0:1000] of global memory (argument 1)", "(a[i])"}},
			{sim.KindDivergentBarrier, "BlockSumDivergent", []string{"divergent barrier", "returned from the kernel"}},
		}
		if len(bugs) != len(want) {
			t.Fatalf("%d reports, want %d", len(bugs), len(want))
		}
		for i, b := range bugs {
			e, w := b.Err, want[i]
			if e.Kind != w.kind || e.Kernel != w.kernel || e.Seed != seed || !errors.Is(e, b.Want) {
				t.Errorf("report %d: kind %v kernel %s seed %d: %v", i, e.Kind, e.Kernel, e.Seed, e)
			}
			if !strings.HasSuffix(e.Pos.File, "broken.go") || e.Pos.Line == 0 {
				t.Errorf("report %d points to %v, not into broken.go", i, e.Pos)
			}
			for _, s := range append(w.text, "broken.go:") {
				if !strings.Contains(e.Error(), s) {
					t.Errorf("report %d lacks %q: %v", i, s, e)
				}
			}
		}
		// The race names two threads of one block, one of them writing.
		if o := bugs[0].Err.Other; o == nil || o.Block != bugs[0].Err.Block || (o.Op != "write" && bugs[0].Err.Op != "write") {
			t.Errorf("race report without a writer in the same block: %v", bugs[0].Err)
		}
	}
}

// TestDebugOffByOneNoGPU: the GPU's debug mode needs a GPU.
func TestDebugOffByOneNoGPU(t *testing.T) {
	for _, dev := range []*gocu.Device{nil, simDevice(t)} {
		if _, err := DebugOffByOne(dev, newRand(t)); err == nil || !strings.Contains(err.Error(), "is not a GPU") {
			t.Errorf("DebugOffByOne(%v): %v, want an error saying it needs a GPU", dev, err)
		}
	}
}
