package bugs_test

import (
	"fmt"
	"strings"

	"github.com/gocu-dev/gocu"
	"github.com/gocu-dev/gocu/cmd/gocu/internal/demo/bugs"
)

// A bug in a kernel is an error naming the kernel, the thread, the index
// and the Go line, on the simulator and, in debug mode, on the GPU.
func ExampleLaunchAddOffByOne() {
	d, _ := gocu.Open("sim")
	a, _ := gocu.FromSlice(d, make([]float32, 100))
	b, _ := gocu.FromSlice(d, make([]float32, 100))
	c, _ := gocu.Alloc[float32](d, 100)
	cfg := gocu.Grid1D(100, 64)
	cfg.Debug = true // Go's bounds checks on a GPU; the simulator always checks
	cfg.Checked = true
	err := bugs.LaunchAddOffByOne(d, cfg, a, b, c, 100)
	msg := err.Error()
	fmt.Println(msg[:strings.Index(msg, " [seed")])
	// Output: sim: kernel AddOffByOne: block (1,0,0) thread (36,0,0): index 100 out of range [0:100] of global memory (argument 1) at broken.go:16:10 (a[i])
}
