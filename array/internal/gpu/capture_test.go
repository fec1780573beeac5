package gpu

import (
	"testing"

	"github.com/gocu-dev/gocu/cuda"
)

// The bookkeeping of graph memory, without a GPU: buffers a capture
// touches are held until the last graph holding them is released, and
// freed then only if their owners freed them meanwhile.
func TestGraphMemory(t *testing.T) {
	var gm graphMem
	a, b, c, d := &Buffer{n: 1}, &Buffer{n: 2}, &Buffer{n: 3}, &Buffer{n: 4}
	if gm.deferFree(a) {
		t.Fatal("a free was deferred with no graph")
	}
	gm.touch(a) // no capture: nothing recorded
	if !gm.begin() || gm.begin() {
		t.Fatal("begin: a second capture must be refused")
	}
	gm.touch(a)
	gm.touch(b)
	gm.touch(b)
	if !gm.deferFree(a) {
		t.Fatal("a buffer the capture uses was freed during the capture")
	}
	if gm.deferFree(c) {
		t.Fatal("an untouched buffer's free was deferred")
	}
	g1 := gm.end()
	if len(g1) != 2 {
		t.Fatalf("the first graph holds %d buffers, want 2", len(g1))
	}
	if !gm.deferFree(b) {
		t.Fatal("a held buffer was freed")
	}
	// A second graph shares b and holds d.
	gm.begin()
	gm.touch(b)
	gm.touch(d)
	g2 := gm.end()
	gm.retired = append(gm.retired, &cuda.Memory{})
	free, retired, last := gm.release(g1)
	if len(free) != 1 || free[0] != a {
		t.Fatalf("releasing the first graph frees %v, want a only", free)
	}
	if last || retired != nil {
		t.Fatal("the retired arenas went before the last graph")
	}
	if !gm.deferFree(b) || gm.held[b].graphs != 1 {
		t.Fatal("b is not held by the second graph")
	}
	free, retired, last = gm.release(g2)
	if len(free) != 1 || free[0] != b {
		t.Fatalf("releasing the second graph frees %v, want b (d's owner still has it)", free)
	}
	if !last || len(retired) != 1 {
		t.Fatalf("last %v, %d retired arenas", last, len(retired))
	}
	if gm.deferFree(d) || len(gm.held) != 0 || gm.live.Load() != 0 {
		t.Fatalf("state left: %d held, %d live", len(gm.held), gm.live.Load())
	}
}
