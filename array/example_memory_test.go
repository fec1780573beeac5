package array_test

import (
	"fmt"

	"github.com/gocu-dev/gocu/array"
)

func ExampleMaker_Memory() {
	dev := array.CPU()
	dev.ResetPeakMemory()
	start := dev.Memory().InUse
	mib := func(n int64) int64 { return (n + 1<<19) >> 20 } // to the nearest MiB
	x := dev.Zeros(array.Float32, 1<<20).Copy()             // 4 MiB
	fmt.Println("MiB in use while x is open:", mib(dev.Memory().InUse-start))
	x.Close()
	m := dev.Memory()
	fmt.Println("after Close:", mib(m.InUse-start), "MiB; the peak:", mib(m.Peak-start), "MiB")
	// Output:
	// MiB in use while x is open: 4
	// after Close: 0 MiB; the peak: 4 MiB
}
