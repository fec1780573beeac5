// Command 06-matmul-2d runs the naive matmul kernel, one thread per
// element of c on a 2-D grid, on the GPU or the simulator, and checks it
// against a CPU reference.
package main

import (
	"fmt"
	"log"
	"math"
	"math/rand/v2"

	"github.com/gocu-dev/gocu"
	"github.com/gocu-dev/gocu/internal/lecture"
	"github.com/gocu-dev/gocu/internal/units"
)

func main() {
	dev, err := gocu.Default()
	if err != nil {
		log.Fatal(err)
	}
	size := lecture.DefaultSize(dev) // 256 on the simulator, 4096 on a GPU
	s := int32(size)
	r := rand.New(rand.NewPCG(1, 2))
	a, b := lecture.RandomMatrix(r, size, size), lecture.RandomMatrix(r, size, size)

	da, err := gocu.FromSlice(dev, a)
	if err != nil {
		log.Fatal(err)
	}
	defer da.Free()
	db, err := gocu.FromSlice(dev, b)
	if err != nil {
		log.Fatal(err)
	}
	defer db.Free()
	// NaN in c until a thread writes its element: an element no thread
	// writes fails the check.
	dc, err := gocu.FromSlice(dev, lecture.Fill(make([]float32, size*size), float32(math.NaN())))
	if err != nil {
		log.Fatal(err)
	}
	defer dc.Free()

	// 16x16 threads per block, as many blocks as it takes to cover c:
	// thread (x, y) of the grid computes c[y][x] (lecture.MatMul).
	cfg := gocu.Grid2D(size, size, 16, 16)
	d, err := lecture.Time(dev, 3, func() error { return lecture.LaunchMatMul(dev, cfg, da, db, dc, s, s, s) })
	if err != nil {
		log.Fatal(err)
	}
	c, err := dc.ToSlice()
	if err != nil {
		log.Fatal(err)
	}
	check, err := lecture.CheckMatMul(a, b, c, size, size, size, 1<<16, r)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("lecture.MatMul on %v, %d^3, %v\n", dev, size, cfg)
	fmt.Printf("%v, %s; checked %v\n", d, units.FLOPRate(2*math.Pow(float64(size), 3)/d.Seconds()), check)
}
