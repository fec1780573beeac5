package dist_test

import (
	"fmt"

	"github.com/gocu-dev/gocu"
	"github.com/gocu-dev/gocu/array"
	"github.com/gocu-dev/gocu/dist"
	"github.com/gocu-dev/gocu/grad"
	"github.com/gocu-dev/gocu/nn"
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

// ZeRO-1 keeps half the optimiser state on each of two ranks: the shard of
// the five parameters' elements that the rank updates is three long.
func ExampleZeRO1() {
	cpu := gocu.MustOpen("cpu")
	c, err := dist.New(cpu, cpu)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close()
	var reps [][]*grad.Var
	for range 2 {
		reps = append(reps, []*grad.Var{
			grad.Param(array.FromSliceOn(cpu, []float32{1, 2, 3})),
			grad.Param(array.FromSliceOn(cpu, []float32{4, 5})),
		})
	}
	z, err := dist.NewZeRO1(c, func(p []*grad.Var) nn.Optimizer { return nn.NewSGD(p, 0.5) }, reps...)
	if err != nil {
		fmt.Println(err)
		return
	}
	for r, rep := range reps {
		g := float32(r + 1) // rank 0's gradients are 1, rank 1's 2: the average 1.5
		rep[0].SetGrad(array.FromSliceOn(cpu, []float32{g, g, g}))
		rep[1].SetGrad(array.FromSliceOn(cpu, []float32{g, g}))
	}
	if err := z.Step(); err != nil {
		fmt.Println(err)
		return
	}
	z.ZeroGrad()
	w, _ := reps[1][1].Value().Float32s()
	fmt.Println(z.ShardSize(), w)
	// Output: 3 [3.25 4.25]
}

// MaxNorm clips the averaged gradients by their total norm over all the
// shards, as nn.ClipGradNorm would over all the parameters: here the
// average 1.5 of four elements has the norm 3, scaled down to 1.
func ExampleZeRO1_maxNorm() {
	cpu := gocu.MustOpen("cpu")
	c, err := dist.New(cpu, cpu)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close()
	var reps [][]*grad.Var
	for range 2 {
		reps = append(reps, []*grad.Var{
			grad.Param(array.FromSliceOn(cpu, []float32{1, 2, 3})),
			grad.Param(array.FromSliceOn(cpu, []float32{4})),
		})
	}
	z, err := dist.NewZeRO1(c, func(p []*grad.Var) nn.Optimizer { return nn.NewSGD(p, 1) }, reps...)
	if err != nil {
		fmt.Println(err)
		return
	}
	z.MaxNorm = 1
	for r, rep := range reps {
		g := float32(r + 1)
		rep[0].SetGrad(array.FromSliceOn(cpu, []float32{g, g, g}))
		rep[1].SetGrad(array.FromSliceOn(cpu, []float32{g}))
	}
	if err := z.Step(); err != nil {
		fmt.Println(err)
		return
	}
	w, _ := reps[0][0].Value().Float32s()
	fmt.Printf("%.4f\n", w) // each weight less 1.5/3
	// Output: [0.5000 1.5000 2.5000]
}

// Two ranks on the CPU swap pieces of different lengths: rank 0 keeps
// [1] and sends [2 3] to rank 1; rank 1 sends [4] to rank 0 and keeps
// nothing. On GPUs the pieces travel through NCCL's send and receive.
func ExampleComm_AllToAll() {
	cpu := gocu.MustOpen("cpu")
	c, err := dist.New(cpu, cpu)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close()
	m := array.On(cpu)
	sends := [][]*array.Array{
		{array.FromSliceOn(cpu, []int64{1}), array.FromSliceOn(cpu, []int64{2, 3})},
		{array.FromSliceOn(cpu, []int64{4}), m.Zeros(array.Int64, 0)},
	}
	recvs, err := c.AllToAll(sends)
	if err != nil {
		fmt.Println(err)
		return
	}
	for r, pieces := range recvs {
		for j, p := range pieces {
			v, _ := p.Int64s()
			fmt.Printf("rank %d from rank %d: %v\n", r, j, v)
		}
	}
	// Output:
	// rank 0 from rank 0: [1]
	// rank 0 from rank 1: [4]
	// rank 1 from rank 0: [2 3]
	// rank 1 from rank 1: []
}
