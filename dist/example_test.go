package dist_test

import (
	"fmt"

	"github.com/gocu-dev/gocu"
	"github.com/gocu-dev/gocu/array"
	"github.com/gocu-dev/gocu/dist"
	"github.com/gocu-dev/gocu/grad"
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

// DDP all-reduces gradients in buckets as the backward pass makes them;
// Wait before the optimiser's step. Two replicas on the CPU here, each on
// its own data; on GPUs the reductions run on communication streams.
func ExampleDDP() {
	cpu := gocu.MustOpen("cpu")
	c, err := dist.New(cpu, cpu)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close()
	w := []*grad.Var{grad.Param(array.FromSliceOn(cpu, []float32{1, 2})), grad.Param(array.FromSliceOn(cpu, []float32{1, 2}))}
	d, err := dist.NewDDP(c, dist.DDPOptions{}, w[:1], w[1:])
	if err != nil {
		fmt.Println(err)
		return
	}
	defer d.Close()
	for r, x := range [][]float32{{1, 0}, {0, 3}} {
		loss := w[r].Mul(array.FromSliceOn(cpu, x)).Sum()
		if err := loss.Backward(); err != nil {
			fmt.Println(err)
			return
		}
	}
	if err := d.Wait(); err != nil {
		fmt.Println(err)
		return
	}
	g0, _ := w[0].Grad().Float32s()
	g1, _ := w[1].Grad().Float32s()
	fmt.Println(g0, g1)
	// Output: [0.5 1.5] [0.5 1.5]
}
