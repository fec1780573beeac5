//go:build gocu_fakedriver

package gpu

import (
	"testing"

	"github.com/gocu-dev/gocu/array/internal/backend"
)

// The indexing requests plan and launch on the fake driver: every
// kernel's arguments match its parameters, and a plan is reused for a
// request of the same structure.
func TestIndexingPlansFake(t *testing.T) {
	b, alloc := fakeBackend(t)
	src, out := alloc(backend.Float32, 50*768), alloc(backend.Float32, 4096*768)
	idx, idx32 := alloc(backend.Int64, 4096), alloc(backend.Int32, 4096)
	for _, x := range []backend.Buffer{idx, idx32} {
		for _, shape := range [][3]int{{1, 4096, 768}, {1, 4096, 1}, {4, 1024, 3}} {
			g := &backend.Gather{Src: src, Out: out, O: shape[0], M: shape[1], I: shape[2],
				Idx: []backend.Index{{Buf: x, Strides: [3]int{0, 1, 0}, Len: 50}}}
			if err := b.Gather(g); err != nil {
				t.Fatalf("gather %v: %v", shape, err)
			}
			s := &backend.Scatter{Op: backend.ScatterAdd, Dst: src, Val: out, ValStrides: [3]int{0, shape[2], 1},
				O: 1, M: shape[1], I: shape[2], Idx: g.Idx}
			if err := b.Scatter(s); err != nil {
				t.Fatalf("scatter %v: %v", shape, err)
			}
		}
	}
	n := b.PlanCount()
	g := &backend.Gather{Src: src, Out: out, O: 1, M: 4096, I: 768, Idx: []backend.Index{{Buf: idx, Strides: [3]int{0, 1, 0}, Len: 50}}}
	if err := b.Gather(g); err != nil {
		t.Fatal(err)
	}
	if b.PlanCount() != n {
		t.Errorf("a repeated gather planned again: %d plans, then %d", n, b.PlanCount())
	}
	mask, cnt := alloc(backend.Bool, 100000), alloc(backend.Int64, 1)
	if err := b.Nonzero(&backend.Nonzero{Mask: mask, N: 100000, Out: idx, Cap: 4096, Count: cnt}); err != nil {
		t.Fatal(err)
	}
	if err := b.Sync(); err != nil {
		t.Fatal(err)
	}
}
