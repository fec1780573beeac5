// Command 02-gray-sim runs the grayscale kernel, written in Go, on the CPU
// simulator: every thread of every block of the grid, with CUDA's
// semantics.
package main

import (
	"bytes"
	"fmt"
	"log"
	"time"

	"github.com/gocu-dev/gocu/internal/lecture"
	"github.com/gocu-dev/gocu/internal/sample"
	"github.com/gocu-dev/gocu/kernel"
	"github.com/gocu-dev/gocu/sim"
)

func main() {
	rgb, w, h := sample.Planar() // as in step 1: red plane, green plane, blue plane
	n := w * h
	gray := make([]uint8, n)

	// One thread per pixel, in blocks of 256 threads: enough blocks to
	// cover n, rounding up.
	threads := int32(256)
	blocks := (int32(n) + threads - 1) / threads
	cfg := sim.Config{Grid: kernel.Dim3{X: blocks}, Block: kernel.Dim3{X: threads}}

	start := time.Now()
	if err := sim.Run(cfg, lecture.Gray, rgb, gray, int32(n)); err != nil {
		log.Fatal(err)
	}
	elapsed := time.Since(start)
	fmt.Printf("sim.Run: %d blocks of %d threads in %v, %.1f ns per thread\n",
		blocks, threads, elapsed, float64(elapsed.Nanoseconds())/float64(blocks*threads))

	// sim.Run calls the kernel through reflection. A closure with the
	// arguments bound, which is what generated launchers pass, calls it
	// directly.
	gray2 := make([]uint8, n)
	k := sim.Kernel{Name: "Gray", Func: func(t *kernel.Thread) { lecture.Gray(t, rgb, gray2, int32(n)) }}
	start = time.Now()
	if err := sim.Launch(cfg, k); err != nil {
		log.Fatal(err)
	}
	elapsed = time.Since(start)
	fmt.Printf("sim.Launch: %v, %.1f ns per thread\n", elapsed, float64(elapsed.Nanoseconds())/float64(blocks*threads))

	// The simulator computes exactly what the plain-Go loop of step 1
	// computes.
	want := lecture.GrayReference(rgb, n)
	fmt.Println("same as the plain-Go loop:", bytes.Equal(gray, want) && bytes.Equal(gray2, want))
}
