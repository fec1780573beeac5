package gocu_test

import (
	"fmt"

	"github.com/gocu-dev/gocu"
	"github.com/gocu-dev/gocu/internal/lecture"
)

// Autotune picks the fastest block size of a kernel and launches it; the
// choice is stored and reused by the next process. On the simulator there
// is nothing to time and the first candidate runs.
func ExampleAutotune() {
	d, _ := gocu.Open("sim") // gocu.Default() in a real program
	const n = 1 << 12
	rgb, _ := gocu.Alloc[uint8](d, 3*n)
	rgb.Zero()
	gray, _ := gocu.Alloc[uint8](d, n)
	var candidates []gocu.Config
	for _, block := range []int{64, 128, 256} {
		candidates = append(candidates, gocu.Grid1D(n/16, block))
	}
	best, err := gocu.Autotune(d, gocu.Tuning{Kernel: lecture.GrayFast, Shape: []int{n}}, candidates,
		func(c gocu.Config) error { return lecture.LaunchGrayFast(d, c, rgb, gray, n) })
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(best.Best.Block.X, best.Cached)
	// Output: 64 false
}
