package array

import (
	"runtime"
	"testing"
	"time"
)

// TestGCPacingGPU: arrays dropped without Close give their device memory
// back even when the Go heap alone would not start a collection (a large
// heap, little host allocation per array): the GPU backend's pacer starts
// one when device memory grows.
func TestGCPacingGPU(t *testing.T) { checkGCPacing(t, testGPU(t)) }

func checkGCPacing(t *testing.T, g *Maker) {
	const (
		each  = 1 << 20 // bytes of one dropped array
		count = 8000    // 8 GiB in all
		least = 8 << 20
	)
	ballast := make([]byte, 64<<20) // the heap's goal is then over 128 MiB
	g.gpu.SetGCMinGrowth(least)
	defer g.gpu.SetGCMinGrowth(0)
	runtime.GC()
	al := g.gpu.Device().Allocator()
	before, cycles := al.Stats().Reserved, g.gpu.GCCycles()
	for range count {
		x := g.Zeros(Float32, each/4).Eval() // dropped: only a cleanup frees it
		if err := x.Err(); err != nil {
			t.Fatal(err)
		}
	}
	if err := g.Sync(); err != nil {
		t.Fatal(err)
	}
	grown := al.Stats().Reserved - before
	runtime.KeepAlive(ballast)
	t.Logf("%d dropped arrays of %d bytes: the cache grew by %d bytes, %d paced collections",
		count, each, grown, g.gpu.GCCycles()-cycles)
	if g.gpu.GCCycles() == cycles {
		t.Fatalf("no collection started while %d bytes of dropped arrays piled up", count*each)
	}
	if grown > count*each/4 { // a collection lags the allocations by a few milliseconds
		t.Fatalf("the cache grew by %d bytes for %d bytes of dropped arrays: their memory was not reused", grown, count*each)
	}
}

// TestGCPacingClosedGPU: a program that closes its arrays keeps live
// device memory flat, so the pacer never starts a collection (one per
// 256 MiB allocated once stalled a fused chain's stream).
func TestGCPacingClosedGPU(t *testing.T) { checkGCPacingClosed(t, testGPU(t)) }

func checkGCPacingClosed(t *testing.T, g *Maker) {
	const each, count, least = 1 << 20, 4000, 8 << 20
	g.gpu.SetGCMinGrowth(least)
	defer g.gpu.SetGCMinGrowth(0)
	for range 4 { // reach the first goal, if live memory is above it already
		g.Zeros(Float32, each/4).Eval().Close()
	}
	if err := g.Sync(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(50 * time.Millisecond) // let a collection started above end
	cycles := g.gpu.GCCycles()
	for range count {
		x := g.Zeros(Float32, each/4).Eval()
		if err := x.Close(); err != nil {
			t.Fatal(err)
		}
	}
	if err := g.Sync(); err != nil {
		t.Fatal(err)
	}
	if n := g.gpu.GCCycles() - cycles; n != 0 {
		t.Fatalf("%d collections started while %d closed arrays of %d bytes came and went", n, count, each)
	}
}
