package prof_test

import (
	"fmt"
	"log"
	"os"
	"time"

	"github.com/gocu-dev/gocu/cuda"
	"github.com/gocu-dev/gocu/prof"
)

// Record the memory history of some allocations on a GPU and write it as
// a Chrome trace (GOCU_MEMORY_HISTORY=mem.json does it for a whole
// program).
func ExampleRecordMemoryHistory() {
	dev, err := cuda.DeviceAt(0)
	if err != nil {
		log.Fatal(err)
	}
	if err := prof.RecordMemoryHistory(prof.MemoryOptions{}); err != nil {
		log.Fatal(err)
	}
	m, err := dev.Alloc(64 << 20)
	if err != nil {
		log.Fatal(err)
	}
	m.Free()
	h, err := prof.StopMemoryHistory()
	if err != nil {
		log.Fatal(err)
	}
	h.WriteSummary(os.Stdout, 10)
	if err := h.WriteFile("mem.json"); err != nil { // open it in ui.perfetto.dev
		log.Fatal(err)
	}
}

// The summary of a history: its peak and the call sites live there.
func ExampleMemoryHistory_WriteSummary() {
	load := prof.Frame{Function: "main.load", File: "/app/main.go", Line: 12}
	step := prof.Frame{Function: "main.step", File: "/app/main.go", Line: 30}
	ev := func(kind string, addr uint64, mib, inUse int64, ms int, site prof.Frame) prof.MemoryEvent {
		return prof.MemoryEvent{Kind: kind, Device: "cuda:0", Addr: addr, Bytes: mib << 20, InUse: inUse << 20,
			Reserved: 64 << 20, Time: time.Duration(ms) * time.Millisecond, Site: site}
	}
	h := &prof.MemoryHistory{Events: []prof.MemoryEvent{
		ev("alloc", 0x1000, 16, 16, 1, load),
		ev("alloc", 0x2000, 8, 24, 2, step),
		ev("alloc", 0x3000, 8, 32, 3, step),
		ev("free", 0x2000, 8, 24, 4, step),
	}}
	h.WriteSummary(os.Stdout, 10)
	fmt.Println("peak:", h.Peaks()[0].PeakInUse>>20, "MiB")
	// Output:
	// cuda:0: 3 allocations, 1 frees, 0 driver allocations
	//   peak in use 32.0 MiB at 3ms, peak reserved 64.0 MiB; at the end 24.0 MiB in use, 64.0 MiB reserved
	//   live at the peak, by call site:
	//     16.0 MiB in     1 blocks  /app/main.go:12 (main.load)
	//     16.0 MiB in     2 blocks  /app/main.go:30 (main.step)
	// peak: 32 MiB
}
