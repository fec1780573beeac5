// Command 04-gray-gpu runs the same grayscale kernel on the GPU when there
// is one, and on the simulator otherwise, through gocu's device API.
package main

import (
	"fmt"
	"image"
	"image/png"
	"log"
	"os"
	"path/filepath"

	"github.com/gocu-dev/gocu"
	"github.com/gocu-dev/gocu/internal/lecture"
	"github.com/gocu-dev/gocu/internal/sample"
)

func main() {
	// The first GPU, or the simulator when there is none;
	// GOCU_DEVICE=sim, cuda or cuda:N chooses.
	dev, err := gocu.Default()
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("device:", dev)

	rgb, w, h := sample.Planar()
	n := w * h
	in, err := gocu.FromSlice(dev, rgb) // copied to the device
	if err != nil {
		log.Fatal(err)
	}
	defer in.Free()
	out, err := gocu.Alloc[uint8](dev, n)
	if err != nil {
		log.Fatal(err)
	}
	defer out.Free()

	// lecture.LaunchGray is the typed launcher gocu gen wrote beside the
	// kernel: on a GPU it runs the CUDA C++ gocu gen translated
	// lecture.Gray to, compiled for that GPU by NVRTC on the first launch
	// and cached on disk; on the simulator, lecture.Gray itself.
	cfg := gocu.Grid1D(n, 256)
	launch := func() error { return lecture.LaunchGray(dev, cfg, in, out, int32(n)) }
	if err := launch(); err != nil {
		log.Fatal(err)
	}
	gray, err := out.ToSlice() // waits for the kernel, copies back
	if err != nil {
		log.Fatal(err)
	}
	same := 0
	for i, v := range lecture.GrayReference(rgb, n) {
		if gray[i] == v {
			same++
		}
	}
	fmt.Printf("%v: %d of %d pixels as in plain Go\n", cfg, same, n)

	// Timing: on a GPU, CUDA events around 100 launches after a warm-up;
	// on the simulator the wall clock.
	d, err := lecture.Time(dev, 100, launch)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("kernel: %v, %.3g GB/s (3 bytes read and 1 written per pixel)\n", d, 4*float64(n)/d.Seconds()/1e9)

	path := filepath.Join(os.TempDir(), "gocu-04-gray.png")
	f, err := os.Create(path)
	if err != nil {
		log.Fatal(err)
	}
	err = png.Encode(f, &image.Gray{Pix: gray, Stride: w, Rect: image.Rect(0, 0, w, h)})
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("wrote", path)
}
