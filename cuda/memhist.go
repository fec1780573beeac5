package cuda

import (
	"runtime"
	"strconv"
	"sync/atomic"
	"time"
)

// Memory history: a MemoryRecorder installed with SetMemoryRecorder sees
// every allocation and free of the caching allocators, and every driver
// allocation they make or release, with the Go stack of the call, in the
// spirit of torch.cuda.memory._record_memory_history. Package prof keeps
// such a history and writes it as a Chrome trace (GOCU_MEMORY_HISTORY).
// With no recorder installed (the normal case) an allocation or free costs
// one atomic load more and allocates nothing.

// MemoryEventKind says what a MemoryEvent records.
type MemoryEventKind uint8

// The kinds of memory event.
const (
	MemAlloc        MemoryEventKind = iota + 1 // a block handed out (Alloc and friends)
	MemFree                                    // a block given back, ordered on its stream
	MemSegmentAlloc                            // memory obtained from the driver (cuMemAlloc)
	MemSegmentFree                             // memory returned to the driver (cuMemFree)
)

func (k MemoryEventKind) String() string {
	switch k {
	case MemAlloc:
		return "alloc"
	case MemFree:
		return "free"
	case MemSegmentAlloc:
		return "segment alloc"
	case MemSegmentFree:
		return "segment free"
	}
	return "MemoryEventKind(" + strconv.Itoa(int(k)) + ")"
}

// MemoryEvent is one allocator event as a MemoryRecorder sees it.
type MemoryEvent struct {
	Kind   MemoryEventKind
	Device int     // the device's ordinal
	Addr   uintptr // the block's or segment's device address
	// Bytes is the size of the block (rounded up to the allocator's size
	// classes) or of the segment.
	Bytes     int64
	Requested int64   // MemAlloc: the bytes asked for
	Stream    uintptr // the handle of the stream the block is ordered on (0: the default stream)
	Time      time.Time
	// InUse and Reserved are the allocator's figures after the event (see
	// AllocStats).
	InUse, Reserved int64
	// Stack holds the program counters of the call that caused the event
	// (runtime.Callers), innermost first, from the caller of the
	// allocator; runtime.CallersFrames turns them into functions and lines.
	Stack []uintptr
}

// MemoryRecorder observes the allocators' events. RecordMemory is called
// with the allocator's lock held, on the goroutine that allocates or
// frees (a collector's cleanup included): it must be quick, must not call
// into this package, and must copy what it keeps, for e is reused.
type MemoryRecorder interface {
	RecordMemory(e *MemoryEvent)
}

type recorderRef struct{ r MemoryRecorder }

var memRecorder atomic.Pointer[recorderRef]

// SetMemoryRecorder installs r as the process's memory recorder (nil
// removes it) and returns the one it replaces.
func SetMemoryRecorder(r MemoryRecorder) MemoryRecorder {
	var ref *recorderRef
	if r != nil {
		ref = &recorderRef{r}
	}
	if old := memRecorder.Swap(ref); old != nil {
		return old.r
	}
	return nil
}

// maxMemoryStack bounds the frames a MemoryEvent keeps.
const maxMemoryStack = 48

// memoryStack returns the caller's stack for a memory event when a
// recorder is installed, else nil at the cost of one atomic load.
func memoryStack() []uintptr {
	if memRecorder.Load() == nil {
		return nil
	}
	var pcs [maxMemoryStack]uintptr
	n := runtime.Callers(3, pcs[:]) // from memoryStack's caller's caller
	return append([]uintptr(nil), pcs[:n]...)
}

// record passes an event to the recorder, if one is installed; a.mu is
// held. stack is the stack of the call, or nil.
func (a *Allocator) record(kind MemoryEventKind, addr uintptr, bytes, req int64, stream uintptr, stack []uintptr) {
	ref := memRecorder.Load()
	if ref == nil {
		return
	}
	ref.r.RecordMemory(&MemoryEvent{Kind: kind, Device: a.ordinal, Addr: addr, Bytes: bytes, Requested: req,
		Stream: stream, Time: time.Now(), InUse: a.st.InUse, Reserved: a.st.Reserved, Stack: stack})
}
