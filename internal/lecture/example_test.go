package lecture_test

import (
	"fmt"

	"github.com/gocu-dev/gocu"
	"github.com/gocu-dev/gocu/internal/lecture"
	"github.com/gocu-dev/gocu/kernel"
	"github.com/gocu-dev/gocu/sim"
)

func ExampleGray() {
	// A 2x2 planar RGB image: red, green, blue, white.
	rgb := []uint8{
		255, 0, 0, 255, // R
		0, 255, 0, 255, // G
		0, 0, 255, 255, // B
	}
	gray := make([]uint8, 4)
	cfg := sim.Config{Grid: kernel.Dim3{X: 1}, Block: kernel.Dim3{X: 256}}
	if err := sim.Run(cfg, lecture.Gray, rgb, gray, int32(4)); err != nil {
		fmt.Println(err)
	}
	fmt.Println(gray)
	// Output: [76 149 29 254]
}

func ExampleTiledMatMul() {
	const n = 32
	a, b, c := make([]float32, n*n), make([]float32, n*n), make([]float32, n*n)
	for i := range n {
		a[i*n+i] = 2       // 2I
		b[i*n+(n-1-i)] = 1 // the exchange matrix
	}
	cfg := sim.Config{Grid: kernel.Dim3{X: n / lecture.Tile, Y: n / lecture.Tile}, Block: kernel.Dim3{X: lecture.Tile, Y: lecture.Tile}}
	if err := sim.Run(cfg, lecture.TiledMatMul, a, b, c, int32(n), int32(n), int32(n)); err != nil {
		fmt.Println(err)
	}
	fmt.Println(c[0*n+31], c[5*n+26], c[0])
	// Output: 2 2 0
}

// The generated launcher runs the kernel on whatever device it is given:
// here the simulator, so the example runs anywhere; gocu.Default() picks
// the GPU when there is one.
func ExampleLaunchGray() {
	d, err := gocu.Open("sim")
	if err != nil {
		fmt.Println(err)
		return
	}
	// A 2x2 planar RGB image: red, green, blue, white.
	rgb, _ := gocu.FromSlice(d, []uint8{
		255, 0, 0, 255, // R
		0, 255, 0, 255, // G
		0, 0, 255, 255, // B
	})
	gray, _ := gocu.Alloc[uint8](d, 4)
	if err := lecture.LaunchGray(d, gocu.Auto(4), rgb, gray, 4); err != nil {
		fmt.Println(err)
		return
	}
	out, _ := gray.ToSlice()
	fmt.Println(out)
	// Output: [76 149 29 254]
}
