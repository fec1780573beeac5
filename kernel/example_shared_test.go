package kernel_test

import (
	"fmt"

	"github.com/gocu-dev/gocu/kernel"
	"github.com/gocu-dev/gocu/sim"
)

// blockSum adds the 8 values of each block in shared memory, halving the
// active threads at each step, and thread 0 writes the block's sum.
func blockSum(t *kernel.Thread, in, out []float32) {
	s := kernel.Shared[[8]float32](t)
	i := t.ThreadIdx.X
	s[i] = in[t.BlockIdx.X*8+i]
	t.SyncThreads()
	for half := int32(4); half > 0; half /= 2 {
		if i < half {
			s[i] += s[i+half]
		}
		t.SyncThreads() // every thread reaches it: no thread returns early
	}
	if i == 0 {
		out[t.BlockIdx.X] = s[0]
	}
}

// Shared memory is one array per block; SyncThreads makes each step's
// writes visible to the next. The simulator checks the barriers and
// reports a race between two threads of a block.
func ExampleShared() {
	in := []float32{1, 2, 3, 4, 5, 6, 7, 8, 10, 20, 30, 40, 50, 60, 70, 80}
	out := make([]float32, 2)
	cfg := sim.Config{Grid: kernel.Dim3{X: 2}, Block: kernel.Dim3{X: 8}}
	if err := sim.Run(cfg, blockSum, in, out); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(out)
	// Output: [36 360]
}
