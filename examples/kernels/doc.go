// Package kernels holds the lecture kernels of CUDA-mode lectures 3, 5 and
// 9, written in Go with package kernel: grayscale conversion on 1-D and 2-D
// grids, naive and tiled matrix multiplication (static and dynamic shared
// memory), a sum reduction with warp shuffles, a histogram privatised in
// shared memory and a Blelloch prefix scan; and two kernels written for
// speed, GrayFast (16 pixels per thread in 128-bit accesses) and SGEMM (a
// register-tiled, double-buffered matrix product).
//
// Each is marked //gocu:kernel. go generate runs gocu gen, which
// translates them to CUDA C and writes zz_gocu_kernels.go with one typed
// launcher per kernel, such as
//
//	func LaunchGray(d *gocu.Device, cfg gocu.Config, rgb, gray *gocu.Buffer[uint8], n int32) error
//
// The same call runs the kernel on a GPU (compiled with NVRTC on first use)
// or on the CPU simulator (package sim), from the same Go source:
//
//	d, _ := gocu.Default() // the GPU, or the simulator without one
//	rgb, _ := gocu.FromSlice(d, pixels)
//	gray, _ := gocu.Alloc[uint8](d, n)
//	err := kernels.LaunchGray(d, gocu.Auto(n), rgb, gray, int32(n))
//
// broken.go keeps three classic bugs as kernels of their own, for the
// simulator's error reports and the GPU's debug mode: a missing barrier (a
// shared-memory race), an off-by-one guard (an out-of-range index) and a
// barrier inside a divergent branch.
package kernels

//go:generate go run github.com/gocu-dev/gocu/cmd/gocu gen
