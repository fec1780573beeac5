package prof

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/gocu-dev/gocu/cuda"
)

// allocHere stands for a call into gocu that allocates: the recorder sees
// the stack from here.
func allocHere(s cuda.MemoryRecorder, kind cuda.MemoryEventKind, addr uintptr, bytes, inUse, reserved int64) {
	var pcs [32]uintptr
	n := runtime.Callers(1, pcs[:])
	s.RecordMemory(&cuda.MemoryEvent{Kind: kind, Device: 2, Addr: addr, Bytes: bytes, Requested: bytes - 1, Stream: 0x10,
		Time: time.Now(), InUse: inUse, Reserved: reserved, Stack: append([]uintptr(nil), pcs[:n]...)})
}

// A history records the events the allocators report, writes them as a
// Chrome trace (a counter track and instant events with stacks), keeps
// its file complete while it runs, and reads back what it wrote.
func TestMemoryHistory(t *testing.T) {
	path := filepath.Join(t.TempDir(), "mem.json")
	if err := RecordMemoryHistory(MemoryOptions{File: path, Interval: time.Millisecond}); err != nil {
		t.Fatal(err)
	}
	if err := RecordMemoryHistory(MemoryOptions{}); !errors.Is(err, ErrMemoryRunning) {
		t.Fatalf("a second history: %v", err)
	}
	memMu.Lock()
	rec := memCur
	memMu.Unlock()
	allocHere(rec, cuda.MemSegmentAlloc, 0x1000, 2<<20, 0, 2<<20)
	allocHere(rec, cuda.MemAlloc, 0x1000, 4096, 4096, 2<<20)
	// The file is complete while recording goes on.
	deadline := time.Now().Add(5 * time.Second)
	for {
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		h, err := ReadMemoryHistory(f)
		f.Close()
		if err == nil && len(h.Events) == 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the file has %v after 5 s (%v), want 2 events", h, err)
		}
		time.Sleep(5 * time.Millisecond)
	}
	allocHere(rec, cuda.MemFree, 0x1000, 4096, 0, 2<<20)
	snap, err := MemorySnapshot()
	if err != nil || len(snap.Events) != 3 {
		t.Fatalf("snapshot: %v, %v", snap, err)
	}
	h, err := StopMemoryHistory()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := StopMemoryHistory(); !errors.Is(err, ErrMemoryNotRunning) {
		t.Fatalf("a second stop: %v", err)
	}
	kinds := []string{"segment alloc", "alloc", "free"}
	if len(h.Events) != 3 {
		t.Fatalf("%d events, want 3", len(h.Events))
	}
	for i, e := range h.Events {
		if e.Kind != kinds[i] || e.Device != "cuda:2" || e.Addr != 0x1000 || e.Stream != "0x10" || e.Time < 0 {
			t.Errorf("event %d: %+v", i, e)
		}
		if e.Site.Function != "github.com/gocu-dev/gocu/prof.allocHere" || !strings.HasSuffix(e.Site.File, "memory_internal_test.go") {
			t.Errorf("event %d: site %v, want allocHere (a test file is user code)", i, e.Site)
		}
		if len(e.Stack) < 2 || e.Stack[0].Function != "github.com/gocu-dev/gocu/prof.allocHere" {
			t.Errorf("event %d: stack %v", i, e.Stack)
		}
	}
	if h.Events[1].InUse != 4096 || h.Events[1].Requested != 4095 || h.Events[2].InUse != 0 || h.Events[2].Reserved != 2<<20 {
		t.Errorf("figures: %+v", h.Events)
	}

	// The file holds the same history as Stop's, and so does WriteTrace's
	// output read back.
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	fromFile, err := ReadMemoryHistory(f)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := h.WriteTrace(&b); err != nil {
		t.Fatal(err)
	}
	text := b.String()
	for _, want := range []string{`"name":"device memory","ph":"C"`, `"args":{"in use":4096,"reserved":2097152}`,
		`"name":"alloc 4.00 KiB","cat":"memory","ph":"i"`, `"name":"cuda:2 memory"`, `"stack":[{"func":"github.com/gocu-dev/gocu/prof.allocHere"`} {
		if !strings.Contains(text, want) {
			t.Errorf("the trace lacks %s:\n%s", want, text)
		}
	}
	back, err := ReadMemoryHistory(&b)
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range []*MemoryHistory{fromFile, back} {
		if len(g.Events) != len(h.Events) {
			t.Fatalf("read back %d events, want %d", len(g.Events), len(h.Events))
		}
		for i := range h.Events {
			want := h.Events[i]
			want.Time = g.Events[i].Time // microseconds in the file
			if d := h.Events[i].Time - g.Events[i].Time; d < -time.Microsecond || d > time.Microsecond {
				t.Errorf("event %d read back at %v, recorded at %v", i, g.Events[i].Time, h.Events[i].Time)
			}
			if !reflect.DeepEqual(g.Events[i], want) {
				t.Errorf("event %d read back as\n%+v, want\n%+v", i, g.Events[i], want)
			}
		}
	}
}

// Past MaxEvents events are counted, not kept.
func TestMemoryHistoryDrops(t *testing.T) {
	if err := RecordMemoryHistory(MemoryOptions{MaxEvents: 2}); err != nil {
		t.Fatal(err)
	}
	memMu.Lock()
	rec := memCur
	memMu.Unlock()
	for i := range 5 {
		allocHere(rec, cuda.MemAlloc, uintptr(0x1000*(i+1)), 512, int64(512*(i+1)), 2<<20)
	}
	h, err := StopMemoryHistory()
	if err != nil || len(h.Events) != 2 || h.Dropped != 3 {
		t.Fatalf("5 events with MaxEvents 2: %d kept, %d dropped, %v", len(h.Events), h.Dropped, err)
	}
}

// The reader refuses what no history holds, with the event and reason.
func TestReadMemoryHistoryErrors(t *testing.T) {
	ev := func(args string) string {
		return `{"traceEvents":[{"name":"x","cat":"memory","ph":"i","ts":1,"pid":1,"tid":1,"args":` + args + `}]}`
	}
	good := `{"kind":"alloc","device":"cuda:0","addr":"0x10","bytes":512,"in_use":512,"reserved":1024}`
	if h, err := ReadMemoryHistory(strings.NewReader(ev(good))); err != nil || len(h.Events) != 1 {
		t.Fatalf("a good event: %v, %v", h, err)
	}
	for _, c := range []struct{ in, want string }{
		{"", "empty memory history file"},
		{"{", "not a Chrome trace"},
		{ev(`{"kind":"leak","device":"cuda:0","addr":"0x10"}`), `kind "leak" is not alloc`},
		{ev(`{"kind":"alloc","device":"cuda:0","addr":"0x10","bytes":-1}`), "bytes -1 is not a size"},
		{ev(`{"kind":"alloc","device":"cuda:0","addr":"0x10","reserved":1e300}`), "event 0"},
		{ev(`{"kind":"alloc","device":"cuda:0","addr":"zz"}`), `address "zz"`},
		{ev(`{"kind":"alloc","addr":"0x10"}`), "no device"},
		{ev(`{"kind":"alloc","device":"cuda:0","addr":"0x10","stack":[{"func":"f","line":-2}]}`), "negative line"},
		{strings.Replace(ev(good), `"ts":1`, `"ts":-5`, 1), "time -5 µs is not in a history"},
		{`{"traceEvents":[],"otherData":{"producer":"gocu prof"}}`, "not a memory history"},
	} {
		_, err := ReadMemoryHistory(strings.NewReader(c.in))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("ReadMemoryHistory(%.60q): %v, want an error with %q", c.in, err, c.want)
		}
	}
}
