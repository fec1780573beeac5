package kernel_test

import (
	"fmt"

	"github.com/gocu-dev/gocu/kernel"
	"github.com/gocu-dev/gocu/sim"
)

// handOver runs a producer warpgroup (threads 0-127) that fills a shared
// buffer three times and a consumer warpgroup (128-255) that adds up each
// filling: barrier 1 says a filling is in, barrier 2 that the consumers
// are done with it. The producer lowers its registers, the consumer
// raises its own.
func handOver(t *kernel.Thread, out []int32) {
	buf := kernel.Shared[[128]int32](t)
	tid := t.ThreadIdx.X
	if tid < 128 {
		kernel.SetMaxNReg(t, 40, false)
		for r := range int32(3) {
			if r > 0 {
				kernel.BarSync(t, 2, 256) // the consumers read filling r-1
			}
			buf[tid] = r + 1
			kernel.BarArrive(t, 1, 256) // filling r is in; go on at once
		}
		return
	}
	kernel.SetMaxNReg(t, 232, true)
	sum := int32(0)
	for r := range 3 {
		kernel.BarSync(t, 1, 256)
		sum += buf[(tid+1)%128] // another thread's element
		if r < 2 {
			kernel.BarArrive(t, 2, 256)
		}
	}
	out[tid-128] = sum
}

// Named barriers hand data from a producer warpgroup to a consumer
// warpgroup without stopping the whole block, as FlashAttention-3 does.
func ExampleBarSync() {
	out := make([]int32, 128)
	cfg := sim.Config{Grid: kernel.Dim3{X: 1}, Block: kernel.Dim3{X: 256}}
	if err := sim.Run(cfg, handOver, out); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(out[0], out[127])
	// Output: 6 6
}
