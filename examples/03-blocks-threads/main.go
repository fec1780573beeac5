// Command 03-blocks-threads shows how a grid of blocks of threads covers
// an array and an image, what the guard if i < n is for, and what the
// simulator says when it is wrong.
package main

import (
	"bytes"
	"fmt"
	"log"

	"github.com/gocu-dev/gocu/internal/lecture"
	"github.com/gocu-dev/gocu/internal/sample"
	"github.com/gocu-dev/gocu/kernel"
	"github.com/gocu-dev/gocu/sim"
)

// whoAmI records, for each element, the block and the thread that
// handled it. A kernel is an ordinary Go function whose first parameter
// is the *kernel.Thread.
func whoAmI(t *kernel.Thread, block, thread []int32, n int32) {
	i := t.BlockIdx.X*t.BlockDim.X + t.ThreadIdx.X // what t.Index() computes
	if i < n {                                     // the grid has more threads than elements
		block[i], thread[i] = t.BlockIdx.X, t.ThreadIdx.X
	}
}

// AddOffByOne is c = a + b with the guard off by one: thread n indexes one
// past the end of a, b and c (all n long).
func AddOffByOne(t *kernel.Thread, a, b, c []float32, n int32) {
	i := t.Index()
	if i <= n { // should be i < n
		c[i] = a[i] + b[i]
	}
}

func main() {
	// 10 elements, blocks of 4 threads: 3 blocks, 12 threads, 2 idle.
	const n, threads = 10, 4
	block, thread := make([]int32, n), make([]int32, n)
	cfg := sim.Config{Grid: kernel.Dim3{X: (n + threads - 1) / threads}, Block: kernel.Dim3{X: threads}}
	if err := sim.Run(cfg, whoAmI, block, thread, int32(n)); err != nil {
		log.Fatal(err)
	}
	fmt.Println("element  block  thread")
	for i := range n {
		fmt.Printf("%7d  %5d  %6d\n", i, block[i], thread[i])
	}

	// Images are 2-D: a 2-D grid of 16x16 blocks, x for columns and y
	// for rows, covers the sample with 32x32 blocks; each thread finds
	// its pixel from its (x, y).
	rgb, w, h := sample.Planar()
	gray1, gray2 := make([]uint8, w*h), make([]uint8, w*h)
	cfg1 := sim.Config{Grid: kernel.Dim3{X: int32(w * h / 256)}, Block: kernel.Dim3{X: 256}}
	cfg2 := sim.Config{Grid: kernel.Dim3{X: int32(w) / 16, Y: int32(h) / 16}, Block: kernel.Dim3{X: 16, Y: 16}}
	if err := sim.Run(cfg1, lecture.Gray, rgb, gray1, int32(w*h)); err != nil {
		log.Fatal(err)
	}
	if err := sim.Run(cfg2, lecture.Gray2D, rgb, gray2, int32(w), int32(h)); err != nil {
		log.Fatal(err)
	}
	fmt.Printf("\n2-D grid of %dx%d blocks of %dx%d threads: same image as the 1-D grid: %v\n",
		cfg2.Grid.X, cfg2.Grid.Y, cfg2.Block.X, cfg2.Block.Y, bytes.Equal(gray1, gray2))

	// Without a correct guard a thread past the end reads and writes out
	// of bounds. On a GPU that is silent corruption, or a crash later;
	// the simulator stops at the faulty access and names it.
	a, b, c := make([]float32, 1000), make([]float32, 1000), make([]float32, 1000)
	cfg = sim.Config{Grid: kernel.Dim3{X: 4}, Block: kernel.Dim3{X: 256}, Seed: 1}
	err := sim.Run(cfg, AddOffByOne, a, b, c, int32(1000))
	fmt.Printf("\nAddOffByOne, whose guard is i <= n:\n%v\n", err)
}
