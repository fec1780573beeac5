//go:build gocu_fakedriver

package gpu

import (
	"errors"
	"testing"

	"github.com/gocu-dev/gocu/array/internal/backend"
	"github.com/gocu-dev/gocu/cuda"
)

// Freed buffers' objects are reused by Alloc, except a buffer whose
// Memory was handed out: that Memory keeps reporting ErrFreed, however
// many buffers are allocated and freed after it. A reused object holds
// its new allocation's size, dtype and address.
func TestFreedBuffersRecycled(t *testing.T) {
	b, alloc := fakeBackend(t)
	shared := alloc(backend.Float32, 16)
	m := shared.Memory()
	b.Free(shared)
	if !m.Freed() {
		t.Fatal("the memory of a freed buffer is not freed")
	}
	seen := map[*Buffer]bool{}
	for i := range 200 {
		g := alloc(backend.Int64, 8+i)
		if g == shared {
			t.Fatal("a buffer whose Memory was handed out was reused")
		}
		if g.Len() != 8+i || g.DType() != backend.Int64 || g.Memory().Freed() || g.Ptr() == 0 || uint64(g.Ptr()) != uint64(g.Memory().Ptr()) {
			t.Fatalf("allocation %d: %d %v at %#x, freed %v", i, g.Len(), g.DType(), g.Ptr(), g.Memory().Freed())
		}
		seen[g] = true
		g.shared.Store(false) // Memory was called by the check: let it be recycled
		b.Free(g)
		if _, err := b.buf(g); !errors.Is(err, cuda.ErrFreed) {
			t.Fatalf("a freed buffer: %v, want ErrFreed", err)
		}
	}
	if !m.Freed() {
		t.Fatal("a Memory handed out became live again")
	}
	if len(seen) == 200 {
		t.Error("no buffer object was reused in 200 allocations and frees")
	}
}
