package array

import (
	"strings"
	"testing"

	"github.com/gocu-dev/gocu/prof"
)

// checkMemoryHistory records the memory history of a few operations on
// d, a GPU: the allocations of their arrays and the frees of those closed
// are there, each named by its line in this file. (An array an evaluated
// program still references may be freed later, so x's free may not be.)
func checkMemoryHistory(t *testing.T, d *Maker) {
	if err := d.Sync(); err != nil {
		t.Fatal(err)
	}
	if err := prof.RecordMemoryHistory(prof.MemoryOptions{}); err != nil {
		t.Fatal(err)
	}
	x := d.Ones(Float32, 1024).Eval() // 4 KiB
	y := x.Add(x).Mul(2).Eval()       // one fused kernel, 4 KiB
	y.Close()
	x.Close()
	if err := d.Sync(); err != nil {
		t.Fatal(err)
	}
	h, err := prof.StopMemoryHistory()
	if err != nil {
		t.Fatal(err)
	}
	var allocs, frees int
	for _, e := range h.Events {
		if e.Kind != "alloc" && e.Kind != "free" || e.Requested != 0 && e.Requested != 4096 {
			continue // the backend's own memory (scratch, plans) may come and go
		}
		if e.Kind == "alloc" && e.Requested == 4096 {
			allocs++
		} else if e.Bytes == 4096 {
			frees++
		}
		if !strings.HasSuffix(e.Site.File, "array/memhist_test.go") {
			t.Errorf("%s of %d bytes: site %v, want a line of memhist_test.go; stack %v", e.Kind, e.Bytes, e.Site, e.Stack)
		}
	}
	if allocs != 2 || frees < 1 {
		t.Errorf("%d allocations and %d frees of 4 KiB, want 2 and at least 1:\n%+v", allocs, frees, h.Events)
	}
}

func TestMemoryHistoryGPU(t *testing.T) { checkMemoryHistory(t, testGPU(t)) }
