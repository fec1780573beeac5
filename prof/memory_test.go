package prof_test

import (
	"bytes"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

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

// Peaks finds each device's peak and the call sites live there, replaying
// the events; WriteSummary prints them.
func TestMemoryPeaks(t *testing.T) {
	a := prof.Frame{Function: "main.load", File: "/app/main.go", Line: 10}
	b := prof.Frame{Function: "main.step", File: "/app/main.go", Line: 20}
	ev := func(kind string, addr uint64, bytes, inUse int64, at time.Duration, site prof.Frame) prof.MemoryEvent {
		return prof.MemoryEvent{Kind: kind, Device: "cuda:0", Addr: addr, Bytes: bytes, InUse: inUse, Reserved: 8 << 20,
			Time: at, Site: site, Stack: []prof.Frame{site}}
	}
	h := &prof.MemoryHistory{Events: []prof.MemoryEvent{
		ev("segment alloc", 0x0, 8<<20, 0, 0, a),
		ev("alloc", 0x100, 1<<20, 1<<20, 1*time.Millisecond, a),
		ev("alloc", 0x200, 2<<20, 3<<20, 2*time.Millisecond, b),
		ev("alloc", 0x300, 2<<20, 5<<20, 3*time.Millisecond, b), // the peak: a 1 MiB, b 4 MiB
		ev("free", 0x200, 2<<20, 3<<20, 4*time.Millisecond, b),
		ev("free", 0x300, 2<<20, 1<<20, 5*time.Millisecond, b),
		ev("alloc", 0x200, 3<<20, 4<<20, 6*time.Millisecond, b),
	}}
	ps := h.Peaks()
	if len(ps) != 1 {
		t.Fatalf("%d devices", len(ps))
	}
	p := ps[0]
	if p.PeakInUse != 5<<20 || p.PeakAt != 3*time.Millisecond || p.Allocs != 4 || p.Frees != 2 || p.Segments != 1 ||
		p.InUse != 4<<20 || p.PeakReserved != 8<<20 {
		t.Fatalf("peak %+v", p)
	}
	want := []prof.MemorySite{{Site: b, Blocks: 2, Bytes: 4 << 20}, {Site: a, Blocks: 1, Bytes: 1 << 20}}
	if !reflect.DeepEqual(p.Sites, want) {
		t.Fatalf("sites at the peak %+v, want %+v", p.Sites, want)
	}
	var out bytes.Buffer
	if err := h.WriteSummary(&out, 1); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"cuda:0: 4 allocations, 2 frees, 1 driver allocations", "peak in use 5.00 MiB at 3ms",
		"4.00 MiB in     2 blocks  /app/main.go:20 (main.step)", "... 1 more call sites"} {
		if !strings.Contains(out.String(), s) {
			t.Errorf("summary lacks %q:\n%s", s, out.String())
		}
	}
}
