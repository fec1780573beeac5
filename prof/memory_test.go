package prof_test

import (
	"bytes"
	"strconv"
	"strings"
	"testing"

	"github.com/gocu-dev/gocu/cuda"
	"github.com/gocu-dev/gocu/prof"
)

// checkMemoryHistory records allocations and frees on d through the
// allocator and checks what the history holds: every event, in order,
// with sizes, figures and this file's lines as sites.
// s is a stream of d other than the default one.
func checkMemoryHistory(t *testing.T, d *cuda.Device, s *cuda.Stream) {
	a := d.Allocator()
	if _, err := a.Trim(); err != nil {
		t.Fatal(err)
	}
	base := a.Stats()
	if err := prof.RecordMemoryHistory(prof.MemoryOptions{}); err != nil {
		t.Fatal(err)
	}
	stopped := false
	defer func() {
		if !stopped {
			prof.StopMemoryHistory()
		}
	}()
	m1, err := d.Alloc(1000) // a small block, in a new 2 MiB segment
	if err != nil {
		t.Fatal(err)
	}
	m2, err := d.AllocOn(s, 3<<20) // a large block, a segment of its own
	if err != nil {
		t.Fatal(err)
	}
	if err := m1.Free(); err != nil {
		t.Fatal(err)
	}
	if err := m2.Free(); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Trim(); err != nil {
		t.Fatal(err)
	}
	h, err := prof.StopMemoryHistory()
	stopped = true
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	var allocs []prof.MemoryEvent
	for _, e := range h.Events {
		kinds = append(kinds, e.Kind)
		if e.Kind == "alloc" || e.Kind == "free" {
			allocs = append(allocs, e)
		}
		if !strings.HasSuffix(e.Site.File, "prof/memory_test.go") || e.Device != "cuda:"+strconv.Itoa(d.Ordinal()) {
			t.Errorf("%s event: site %v on %s; want a line of memory_test.go on cuda:%d", e.Kind, e.Site, e.Device, d.Ordinal())
		}
	}
	// The blocks' events in order; the segments' around them (other
	// memory of the process may lie in the cache on a GPU).
	var segs [2]int
	for _, e := range h.Events {
		switch e.Kind {
		case "segment alloc":
			segs[0]++
		case "segment free":
			segs[1]++
		}
	}
	if segs[0] < 1 || segs[0] != segs[1] || len(allocs) != 4 || allocs[0].Kind != "alloc" || allocs[1].Kind != "alloc" ||
		allocs[2].Kind != "free" || allocs[3].Kind != "free" {
		t.Fatalf("events %v; want two allocs, two frees, and as many segments released by Trim as obtained", kinds)
	}
	if d.Ordinal() == 7 && segs[0] != 2 { // the fake driver: a clean allocator
		t.Errorf("events %v; want 2 segments", kinds)
	}
	if len(allocs) != 4 || allocs[0].Requested != 1000 || allocs[0].Bytes != 1024 || allocs[1].Requested != 3<<20 ||
		allocs[1].Bytes != 4<<20 || allocs[1].InUse != base.InUse+1024+4<<20 || allocs[3].InUse != base.InUse {
		t.Errorf("allocations and frees: %+v", allocs)
	}
	if allocs[0].Addr != uint64(m1.Ptr()) || allocs[2].Addr != uint64(m1.Ptr()) || allocs[0].Stream != "default" ||
		allocs[1].Stream == "default" || allocs[3].Stream != allocs[1].Stream {
		t.Errorf("first block at %#x, freed at %#x, on %s, second on %s and %s; want %#x on the default stream, then another",
			allocs[0].Addr, allocs[2].Addr, allocs[0].Stream, allocs[1].Stream, allocs[3].Stream, m1.Ptr())
	}
	if last := h.Events[len(h.Events)-1]; last.Reserved != base.Reserved {
		t.Errorf("reserved after the trim: %d, want %d", last.Reserved, base.Reserved)
	}
	var b bytes.Buffer
	if err := h.WriteTrace(&b); err != nil {
		t.Fatal(err)
	}
	back, err := prof.ReadMemoryHistory(&b)
	if err != nil || len(back.Events) != len(h.Events) {
		t.Fatalf("read back: %v, %v", back, err)
	}
}

func TestMemoryHistoryGPU(t *testing.T) {
	ds, err := cuda.Devices()
	if err != nil || len(ds) == 0 {
		t.Skipf("no GPU: %v", err)
	}
	s, err := ds[0].NewStream(cuda.StreamNonBlocking)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	checkMemoryHistory(t, ds[0], s)
}
