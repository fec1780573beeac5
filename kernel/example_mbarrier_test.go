package kernel_test

import (
	"fmt"

	"github.com/gocu-dev/gocu/kernel"
	"github.com/gocu-dev/gocu/sim"
)

// bulkLoad has thread 0 copy x into shared memory with one bulk copy,
// which the barrier expects; every thread waits for the barrier's first
// phase (parity 0) and then reads its neighbour's element.
func bulkLoad(t *kernel.Thread, x, out []float32) {
	buf := kernel.Shared[[64]float32](t)
	bar := kernel.Shared[[1]kernel.MBarrier](t)
	tid := t.ThreadIdx.X
	if tid == 0 {
		kernel.MBarInit(t, &bar[0], 1)
	}
	t.SyncThreads()
	if tid == 0 {
		kernel.MBarArriveExpectTx(t, &bar[0], 64*4)
		kernel.CpAsyncBulk(t, buf[:], x, &bar[0])
	}
	kernel.MBarWait(t, &bar[0], 0)
	out[tid] = buf[(tid+1)%64]
}

// A memory barrier completes a phase once its arrivals and the bytes of
// the bulk copies it expects are in; threads that wait for the phase then
// see the copied data.
func ExampleCpAsyncBulk() {
	x, out := make([]float32, 64), make([]float32, 64)
	for i := range x {
		x[i] = float32(i)
	}
	cfg := sim.Config{Grid: kernel.Dim3{X: 1}, Block: kernel.Dim3{X: 64}}
	if err := sim.Run(cfg, bulkLoad, x, out); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(out[0], out[63])
	// Output: 1 0
}
