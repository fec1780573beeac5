package cuda

import (
	"testing"
	"unsafe"
)

// Pinned knows the ranges AllocHost handed out until they are freed.
func TestPinnedRanges(t *testing.T) {
	host := make([]float32, 1024) // stands for memory the driver pinned
	p := uintptr(unsafe.Pointer(&host[0]))
	if Pinned(host) {
		t.Fatal("Go memory reported pinned")
	}
	pinned.add(p, 4*len(host))
	defer pinned.remove(p)
	if !Pinned(host) || !Pinned(host[100:200]) || !Pinned(host[1023:]) {
		t.Error("slices of a pinned range not reported pinned")
	}
	other := make([]float32, 2048)
	if Pinned(other) || Pinned(host[:0]) {
		t.Error("memory outside the range, or an empty slice, reported pinned")
	}
	pinned.remove(p)
	if Pinned(host) {
		t.Error("a freed range still reported pinned")
	}
}
