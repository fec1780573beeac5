package cuda

import (
	"runtime"
	"strings"
	"sync"
	"testing"
)

type memLog struct {
	mu  sync.Mutex
	evs []MemoryEvent
}

func (l *memLog) RecordMemory(e *MemoryEvent) {
	l.mu.Lock()
	l.evs = append(l.evs, *e)
	l.mu.Unlock()
}

// stackHas reports whether a stack passes through a function whose name
// ends with fn.
func stackHas(pcs []uintptr, fn string) bool {
	frames := runtime.CallersFrames(pcs)
	for {
		f, more := frames.Next()
		if strings.HasSuffix(f.Function, fn) {
			return true
		}
		if !more {
			return false
		}
	}
}

// The recorder sees every allocation, free, and driver allocation and
// release, with sizes, streams, the figures after each, and the stack.
func TestMemoryRecorder(t *testing.T) {
	log := &memLog{}
	defer SetMemoryRecorder(SetMemoryRecorder(log))
	a := newAllocator(newFake(1<<30), true, 0)
	a.ordinal = 3
	b1, err := a.alloc(5, 1000)
	if err != nil {
		t.Fatal(err)
	}
	b2, err := a.alloc(5, 3<<20)
	if err != nil {
		t.Fatal(err)
	}
	if err := a.free(b1, 5, false); err != nil {
		t.Fatal(err)
	}
	if err := a.free(b2, 5, true); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Trim(); err != nil {
		t.Fatal(err)
	}
	want := []struct {
		kind            MemoryEventKind
		bytes, req      int64
		inUse, reserved int64
	}{
		{MemSegmentAlloc, smallSegment, 0, 0, smallSegment},
		{MemAlloc, 1024, 1000, 1024, smallSegment},
		{MemSegmentAlloc, 4 << 20, 0, 1024, smallSegment + 4<<20},
		{MemAlloc, 4 << 20, 3 << 20, 1024 + 4<<20, smallSegment + 4<<20},
		{MemFree, 1024, 0, 4 << 20, smallSegment + 4<<20},
		{MemFree, 4 << 20, 0, 0, smallSegment + 4<<20},
		{MemSegmentFree, 0, 0, 0, 0}, // either segment first; sizes checked below
		{MemSegmentFree, 0, 0, 0, 0},
	}
	if len(log.evs) != len(want) {
		t.Fatalf("%d events, want %d: %+v", len(log.evs), len(want), log.evs)
	}
	var freed int64
	for i, w := range want {
		e := log.evs[i]
		if e.Kind != w.kind || e.Device != 3 || e.Time.IsZero() || len(e.Stack) == 0 {
			t.Errorf("event %d: %v on device %d at %v with %d frames; want %v on device 3", i, e.Kind, e.Device, e.Time, len(e.Stack), w.kind)
		}
		if w.kind == MemSegmentFree {
			freed += e.Bytes
			continue
		}
		if e.Bytes != w.bytes || e.Requested != w.req || e.InUse != w.inUse || e.Reserved != w.reserved {
			t.Errorf("event %d (%v): bytes %d, requested %d, in use %d, reserved %d; want %d, %d, %d, %d",
				i, e.Kind, e.Bytes, e.Requested, e.InUse, e.Reserved, w.bytes, w.req, w.inUse, w.reserved)
		}
		if (e.Kind == MemAlloc || e.Kind == MemFree) && e.Stream != 5 {
			t.Errorf("event %d (%v) on stream %#x, want 0x5", i, e.Kind, e.Stream)
		}
		if !stackHas(e.Stack, "cuda.TestMemoryRecorder") {
			t.Errorf("event %d (%v): the stack does not reach the test", i, e.Kind)
		}
	}
	if freed != smallSegment+4<<20 || log.evs[len(log.evs)-1].Reserved != 0 {
		t.Errorf("segments released: %d bytes, reserved after %d", freed, log.evs[len(log.evs)-1].Reserved)
	}
	if log.evs[1].Addr != log.evs[0].Addr || log.evs[4].Addr != log.evs[1].Addr {
		t.Errorf("addresses: segment %#x, alloc %#x, free %#x", log.evs[0].Addr, log.evs[1].Addr, log.evs[4].Addr)
	}
}

// The plain allocator records allocations and frees too.
func TestMemoryRecorderPlain(t *testing.T) {
	log := &memLog{}
	defer SetMemoryRecorder(SetMemoryRecorder(log))
	a := newAllocator(newFake(1<<30), false, 0)
	b, err := a.alloc(0, 100)
	if err != nil {
		t.Fatal(err)
	}
	if err := a.free(b, 0, false); err != nil {
		t.Fatal(err)
	}
	if len(log.evs) != 2 || log.evs[0].Kind != MemAlloc || log.evs[0].Reserved != 100 || log.evs[1].Kind != MemFree || log.evs[1].Reserved != 0 {
		t.Fatalf("plain allocator events: %+v", log.evs)
	}
}

// Without a recorder nothing is recorded and no stack is taken.
func TestMemoryRecorderOff(t *testing.T) {
	SetMemoryRecorder(nil)
	if n := testing.AllocsPerRun(100, func() {
		if memoryStack() != nil {
			t.Fatal("a stack without a recorder")
		}
	}); n != 0 {
		t.Fatalf("%v allocations without a recorder", n)
	}
}
