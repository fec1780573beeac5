package frame_test

import (
	"fmt"

	"github.com/gocu-dev/gocu"
	"github.com/gocu-dev/gocu/dist"
	"github.com/gocu-dev/gocu/frame"
)

// A frame split across two ranks on the CPU stand-in, grouped and joined
// by hash partitioning. On a host of GPUs the communicator is
// dist.New(gpu0, gpu1) and the rows travel through NCCL.
func ExampleShards() {
	cpu := gocu.MustOpen("cpu")
	c, err := dist.New(cpu, cpu)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close()
	id, _ := frame.NewSeries(cpu, "id", []string{"a", "b", "a", "c", "b", "a"})
	v, _ := frame.NewSeries(cpu, "v", []float64{1, 2, 3, 4, 5, 6})
	x, _ := frame.New(cpu, id, v)
	s, err := frame.Scatter(c, x) // rows 0-2 on rank 0, 3-5 on rank 1
	if err != nil {
		fmt.Println(err)
		return
	}
	g, err := s.GroupBy("id").Agg(frame.Sum("v"), frame.Mean("v").Named("mean"), frame.First("v").Named("first"))
	if err != nil {
		fmt.Println(err)
		return
	}
	name, _ := frame.NewSeries(cpu, "id", []string{"a", "c"})
	n, _ := frame.NewSeries(cpu, "n", []int64{10, 30})
	y, _ := frame.New(cpu, name, n)
	ys, _ := frame.Scatter(c, y)
	j, err := g.Join(ys, frame.Left, "id")
	if err != nil {
		fmt.Println(err)
		return
	}
	out, err := j.Gather() // each rank's groups, rank 0's first
	if err != nil {
		fmt.Println(err)
		return
	}
	out, err = out.Sort(frame.Asc("id"))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(out)
	// Output:
	//    id     v      mean  first     n
	// 0   a  10.0  3.333333    1.0    10
	// 1   b   7.0  3.500000    2.0  <NA>
	// 2   c   4.0  4.000000    4.0    30
}
