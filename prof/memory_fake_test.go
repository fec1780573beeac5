//go:build gocu_fakedriver

package prof_test

import (
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/gocu-dev/gocu/cuda"
	"github.com/gocu-dev/gocu/prof"
)

// The memory history of a device on cuda's fake driver: the caching
// allocator is real, only the driver's memory is not.
func TestMemoryHistoryFakeGPU(t *testing.T) {
	d, err := cuda.FakeDevice()
	if err != nil {
		t.Skip(err)
	}
	checkMemoryHistory(t, d, d.FakeStream())
}

// Goroutines allocating and freeing while the history is recorded and its
// file written (run with -race): every event is kept, and the figures of
// the last one are the allocator's.
func TestMemoryHistoryConcurrentFakeGPU(t *testing.T) {
	d, err := cuda.FakeDevice()
	if err != nil {
		t.Skip(err)
	}
	path := filepath.Join(t.TempDir(), "mem.json")
	if err := prof.RecordMemoryHistory(prof.MemoryOptions{File: path, Interval: time.Millisecond}); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 200 {
				m, err := d.Alloc(512 * (1 + (g+i)%5))
				if err != nil {
					t.Error(err)
					return
				}
				m.Free()
			}
		}()
	}
	wg.Wait()
	h, err := prof.StopMemoryHistory()
	if err != nil {
		t.Fatal(err)
	}
	var allocs, frees int
	for _, e := range h.Events {
		switch e.Kind {
		case "alloc":
			allocs++
		case "free":
			frees++
		}
	}
	if allocs != 800 || frees != 800 || h.Events[len(h.Events)-1].InUse != d.Allocator().Stats().InUse {
		t.Fatalf("%d allocs, %d frees, in use at the end %d (allocator: %d)", allocs, frees, h.Events[len(h.Events)-1].InUse, d.Allocator().Stats().InUse)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if back, err := prof.ReadMemoryHistory(f); err != nil || len(back.Events) != len(h.Events) {
		t.Fatalf("the file: %v events, %v; want %d", len(back.Events), err, len(h.Events))
	}
}
