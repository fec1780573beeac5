package kernels_test

import (
	"fmt"

	"github.com/gocu-dev/gocu/examples/kernels"
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
	if err := sim.Run(cfg, kernels.Gray, rgb, gray, int32(4)); err != nil {
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
	cfg := sim.Config{Grid: kernel.Dim3{X: n / kernels.Tile, Y: n / kernels.Tile}, Block: kernel.Dim3{X: kernels.Tile, Y: kernels.Tile}}
	if err := sim.Run(cfg, kernels.TiledMatMul, a, b, c, int32(n), int32(n), int32(n)); err != nil {
		fmt.Println(err)
	}
	fmt.Println(c[0*n+31], c[5*n+26], c[0])
	// Output: 2 2 0
}
