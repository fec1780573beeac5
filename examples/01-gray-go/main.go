// Command 01-gray-go converts an image to grayscale in plain Go: where
// CUDA-mode lecture 3 starts, before any GPU.
package main

import (
	"fmt"
	"image"
	"image/png"
	"log"
	"os"
	"path/filepath"
	"time"

	"github.com/gocu-dev/gocu/internal/sample"
)

func main() {
	img := sample.Image() // a 512x512 *image.NRGBA: 4 bytes per pixel, RGBA
	w, h := img.Rect.Dx(), img.Rect.Dy()
	n := w * h

	// The lecture's kernels take the image planar (CHW, as PyTorch
	// stores it): all the red values, then all the green, then all the
	// blue.
	rgb := make([]uint8, 3*n)
	for i := range n {
		rgb[i], rgb[n+i], rgb[2*n+i] = img.Pix[4*i], img.Pix[4*i+1], img.Pix[4*i+2]
	}

	// One loop over the pixels: this is what every GPU thread will do
	// for one i.
	start := time.Now()
	gray := make([]uint8, n)
	for i := range n {
		r, g, b := float32(rgb[i]), float32(rgb[i+n]), float32(rgb[i+2*n])
		gray[i] = uint8(0.2989*r + 0.5870*g + 0.1140*b)
	}
	elapsed := time.Since(start)
	fmt.Printf("%dx%d pixels in %v: %.2f ns per pixel\n", w, h, elapsed, float64(elapsed.Nanoseconds())/float64(n))

	// Red and blue balloons, far apart in colour, come out nearly the
	// same gray.
	for _, p := range []struct {
		name string
		x, y int
	}{{"red balloon", 102, 113}, {"yellow balloon", 169, 169}, {"blue balloon", 235, 92}} {
		i := p.y*w + p.x
		fmt.Printf("%-14s rgb(%3d,%3d,%3d) -> gray %3d\n", p.name, rgb[i], rgb[n+i], rgb[2*n+i], gray[i])
	}

	out := filepath.Join(os.TempDir(), "gocu-01-gray.png")
	f, err := os.Create(out)
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
	fmt.Println("wrote", out)
}
