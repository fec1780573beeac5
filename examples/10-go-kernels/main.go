// Command 10-go-kernels runs kernels written in the Go one writes first:
// a convolution with its mask in constant memory, a generic Axpy
// launched for float32 and float64, and a block reduction through a
// method of a shared tile that prints from the kernel.
package main

import (
	"fmt"
	"log"
	"math"

	"github.com/gocu-dev/gocu"
)

func main() {
	dev, err := gocu.Default()
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("device:", dev)
	const n = 1000

	// 1. A convolution whose mask is a constant table.
	x := make([]float32, n)
	for i := range x {
		x[i] = float32(i % 10)
	}
	dx, err := gocu.FromSlice(dev, x)
	if err != nil {
		log.Fatal(err)
	}
	defer dx.Free()
	dout, err := gocu.Alloc[float32](dev, n)
	if err != nil {
		log.Fatal(err)
	}
	defer dout.Free()
	if err := LaunchConv1D(dev, gocu.Auto(n), dx, dout); err != nil {
		log.Fatal(err)
	}
	out, err := dout.ToSlice()
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("Conv1D: out[0:6] = %v\n", out[:6])

	// 2. One generic kernel, two element types: the launcher is generic
	// too, and the type argument is inferred from a.
	y32 := make([]float32, n)
	dy32, err := gocu.FromSlice(dev, y32)
	if err != nil {
		log.Fatal(err)
	}
	defer dy32.Free()
	if err := LaunchAxpy(dev, gocu.Auto(n), float32(0.5), dx, dy32); err != nil {
		log.Fatal(err)
	}
	x64 := make([]float64, n)
	for i := range x64 {
		x64[i] = float64(i) / 3
	}
	dx64, err := gocu.FromSlice(dev, x64)
	if err != nil {
		log.Fatal(err)
	}
	defer dx64.Free()
	dy64, err := gocu.FromSlice(dev, make([]float64, n))
	if err != nil {
		log.Fatal(err)
	}
	defer dy64.Free()
	if err := LaunchAxpy(dev, gocu.Auto(n), 3.0, dx64, dy64); err != nil {
		log.Fatal(err)
	}
	r32, err := dy32.ToSlice()
	if err != nil {
		log.Fatal(err)
	}
	r64, err := dy64.ToSlice()
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("Axpy[float32]: y[9] = %v; Axpy[float64]: y[999] = %v (error %.1g)\n", r32[9], r64[999], math.Abs(r64[999]-999))

	// 3. A reduction through a method of a shared tile, printing from the
	// kernel: on the simulator the lines come in block order, each naming
	// its block and thread.
	const blocks = (n + Block - 1) / Block
	dsums, err := gocu.Alloc[float32](dev, blocks)
	if err != nil {
		log.Fatal(err)
	}
	defer dsums.Free()
	cfg := gocu.Config{Grid: gocu.Dim3{X: blocks, Y: 1, Z: 1}, Block: gocu.Dim3{X: Block, Y: 1, Z: 1}}
	if err := LaunchBlockSums(dev, cfg, dx, dsums); err != nil {
		log.Fatal(err)
	}
	sums, err := dsums.ToSlice()
	if err != nil {
		log.Fatal(err)
	}
	var total float32
	for _, s := range sums {
		total += s
	}
	fmt.Printf("BlockSums: %v, total %v (want %v)\n", sums, total, 4.5*n)
}
