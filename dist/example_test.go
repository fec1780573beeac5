package dist_test

import (
	"fmt"

	"github.com/gocu-dev/gocu"
	"github.com/gocu-dev/gocu/array"
	"github.com/gocu-dev/gocu/dist"
)

// Two ranks on the CPU: each holds its own gradient, and AllReduce with
// Avg leaves the mean in both. On GPUs the devices are dist.New(gpu0,
// gpu1) and the collective runs through NCCL.
func ExampleComm_AllReduce() {
	cpu := gocu.MustOpen("cpu")
	c, err := dist.New(cpu, cpu)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close()
	g0 := array.FromSliceOn(cpu, []float32{1, 2, 3})
	g1 := array.FromSliceOn(cpu, []float32{3, 4, 5})
	if err := c.AllReduce(dist.Avg, g0, g1); err != nil {
		fmt.Println(err)
		return
	}
	v0, _ := g0.Float32s()
	v1, _ := g1.Float32s()
	fmt.Println(v0, v1)
	// Output: [2 3 4] [2 3 4]
}
