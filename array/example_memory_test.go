package array_test

import (
	"fmt"

	"github.com/gocu-dev/gocu/array"
)

func ExampleMaker_Memory() {
	dev := array.CPU()
	dev.ResetPeakMemory()
	before := dev.Memory()
	x := dev.Zeros(array.Float32, 1<<20).Copy() // 4 MiB
	x.Close()
	m := dev.Memory()
	fmt.Printf("in use: %d more bytes; peak: %d MiB more\n", m.InUse-before.InUse, (m.Peak-before.InUse)>>20)
	// Output: in use: 0 more bytes; peak: 4 MiB more
}
