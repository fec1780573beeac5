// Command 08-arrays does the lecture's work with arrays instead of
// kernels: grayscale as an expression over a 3 x H x W array, and the
// library's matrix product, which is what to use in practice.
package main

import (
	"fmt"
	"log"
	"math"
	"math/rand/v2"
	"time"

	"github.com/gocu-dev/gocu/array"
	"github.com/gocu-dev/gocu/internal/lecture"
	"github.com/gocu-dev/gocu/internal/sample"
	"github.com/gocu-dev/gocu/internal/units"
)

func main() {
	// Grayscale as NumPy would write it: weights of shape (3, 1, 1)
	// broadcast over the (3, H, W) image, then a sum over the channels.
	img := array.FromImage(sample.Image(), array.CHW, 3).AsType(array.Float32)
	weights := array.FromSlice([]float32{0.2989, 0.5870, 0.1140}, 3, 1, 1)
	gray := img.Mul(weights).Sum(0).AsType(array.Uint8)
	if err := gray.Err(); err != nil {
		log.Fatal(err)
	}
	fmt.Println("gray:", gray.Shape(), gray.DType())

	// The kernel adds the three products in float32; Sum adds them in
	// float64 and rounds once, which could truncate a value lying within
	// a rounding of an integer to the other level.
	got, err := array.ToSlice[uint8](gray)
	if err != nil {
		log.Fatal(err)
	}
	rgb, w, h := sample.Planar()
	off := 0
	for i, v := range lecture.GrayReference(rgb, w*h) {
		if got[i] != v {
			off++
		}
	}
	fmt.Printf("%d of %d pixels differ from the kernel's\n", off, w*h)

	// The library matmul: a packed, cache-blocked GEMM with an AVX2/FMA
	// micro-kernel on all CPU cores (cuBLAS on a GPU).
	r := rand.New(rand.NewPCG(1, 2))
	for _, size := range []int{256, 1024} {
		a, b := lecture.RandomMatrix(r, size, size), lecture.RandomMatrix(r, size, size)
		x, y := array.FromSlice(a, size, size), array.FromSlice(b, size, size)
		x.MatMul(y).Eval() // warm up
		start := time.Now()
		z := x.MatMul(y).Eval()
		if err := x.Device().Synchronize(); err != nil { // a GPU computes asynchronously
			log.Fatal(err)
		}
		elapsed := time.Since(start)
		c, err := z.Float32s()
		if err != nil {
			log.Fatal(err)
		}
		check, err := lecture.CheckMatMul(a, b, c, size, size, size, 4096, r)
		if err != nil {
			log.Fatal(err)
		}
		fmt.Printf("MatMul %d^3 on %v: %v, %s; checked %v\n",
			size, x.Device(), elapsed, units.FLOPRate(2*math.Pow(float64(size), 3)/elapsed.Seconds()), check)
	}
}
