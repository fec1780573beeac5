package kernel_test

import (
	"github.com/gocu-dev/gocu/kernel"
	"github.com/gocu-dev/gocu/sim"
)

// sumRows prints the sum of its row from the first thread of every block.
func sumRows(t *kernel.Thread, m []float32, n int32) {
	row := t.BlockIdx.X
	if t.ThreadIdx.X == 0 {
		var s float32
		for j := range n {
			s += m[row*n+j]
		}
		kernel.Printf(t, "row %d: sum %.2f\n", row, s)
	}
}

// Printf in a kernel: on the simulator the output of every thread comes
// after the launch, in block and thread order, each line naming its
// block and thread (on a GPU it is CUDA's printf, in no order).
func ExamplePrintf() {
	m := []float32{1, 2, 3, 4, 5, 6}
	cfg := sim.Config{Grid: kernel.Dim3{X: 2}, Block: kernel.Dim3{X: 32}}
	if err := sim.Run(cfg, sumRows, m, int32(3)); err != nil {
		panic(err)
	}
	// Output:
	// block (0,0,0) thread (0,0,0): row 0: sum 6.00
	// block (1,0,0) thread (0,0,0): row 1: sum 15.00
}
