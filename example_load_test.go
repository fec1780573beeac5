package gocu_test

import (
	"fmt"
	"log"
	"os"

	"github.com/gocu-dev/gocu"
)

// A kernel built ahead of time by nvcc (nvcc -cubin -arch=sm_90
// saxpy.cu) launches like one compiled by Compile. Without a GPU there is
// nothing to run, so the example has no output to check.
func ExampleLoad() {
	dev, err := gocu.Open("cuda")
	if err != nil {
		fmt.Println("no GPU:", err)
		return
	}
	image, err := os.ReadFile("saxpy.cubin")
	if err != nil {
		log.Fatal(err)
	}
	m, err := gocu.Load(dev, image) // a CUBIN, fatbinary or PTX
	if err != nil {
		log.Fatal(err) // errors.Is(err, gocu.ErrWrongArch) for another GPU's CUBIN
	}
	k, err := m.Kernel("saxpy")
	if err != nil {
		log.Fatal(err)
	}
	x, _ := gocu.FromSlice(dev, []float32{1, 2, 3})
	y, _ := gocu.FromSlice(dev, []float32{1, 1, 1})
	if err := k.Launch(gocu.Auto(3), float32(2), x, y, int32(3)); err != nil {
		log.Fatal(err)
	}
	fmt.Println(y.ToSlice())
}
