package gocu_test

import (
	"errors"
	"fmt"

	"github.com/gocu-dev/gocu"
)

// In the error mode an operation that would wait for a GPU fails with
// ErrHiddenSync instead; on the CPU nothing waits for a device.
func ExampleSetSyncDebugMode() {
	old := gocu.SetSyncDebugMode(gocu.SyncDebugError) // or GOCU_SYNC_DEBUG=error
	defer gocu.SetSyncDebugMode(old)

	dev := gocu.MustOpen("cpu") // "cuda" for a GPU
	b, err := gocu.FromSlice(dev, []float32{1, 2, 3})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer b.Free()
	s, err := b.ToSlice()
	if errors.Is(err, gocu.ErrHiddenSync) {
		fmt.Println("refused:", err) // on a GPU: ToSlice waits for the device at example_syncdebug_test.go:...
		return
	}
	fmt.Println(s, err, gocu.SyncDebug())
	// Output: [1 2 3] <nil> error
}
