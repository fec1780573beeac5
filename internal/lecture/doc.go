// Package lecture holds the lecture kernels of CUDA-mode lectures 3, 5 and
// 9, written in Go with package kernel: grayscale conversion on 1-D and 2-D
// grids, naive and tiled matrix multiplication (static and dynamic shared
// memory), a sum reduction with warp shuffles, a histogram privatised in
// shared memory and a Blelloch prefix scan; and two kernels written for
// speed, GrayFast (16 pixels per thread in 128-bit accesses) and SGEMM (a
// register-tiled, double-buffered matrix product); and, on the tensor
// cores (docs/tensor-cores.md), GemmBF16, a bf16 matrix product on
// Hopper's warpgroup MMA, GemmBF16MMA, the same on the mma.sync of every
// GPU since Ampere, and flash attention (FlashAttention128 and
// FlashAttention64), with MatMulBF16 and Attention, which pick the
// kernel for a device, and WGProbe, which checks the warpgroup MMA's
// shared-memory layouts against the GPU. It also holds what
// checks and times them on the host: the CPU references (GrayReference,
// CheckMatMul) and Time. gocu bench, gocu demo and the tutorial's example
// programs run them; it is internal because it is material, not API.
//
// Each kernel is marked //gocu:kernel. go generate runs gocu gen, which
// translates them to CUDA C and writes zz_gocu_lecture.go with one typed
// launcher per kernel, such as
//
//	func LaunchGray(d *gocu.Device, cfg gocu.Config, rgb, gray gocu.Slice[uint8], n int32) error
//
// The same call runs the kernel on a GPU (compiled with NVRTC on first use)
// or on the CPU simulator (package sim), from the same Go source:
//
//	d, _ := gocu.Default() // the GPU, or the simulator without one
//	rgb, _ := gocu.FromSlice(d, pixels)
//	gray, _ := gocu.Alloc[uint8](d, n)
//	err := lecture.LaunchGray(d, gocu.Auto(n), rgb, gray, int32(n))
//
// The planted bugs that gocu demo shows (a missing barrier, an off-by-one
// guard, a barrier in a divergent branch) are kernels of their own, in
// cmd/gocu/internal/demo/bugs, so that nothing but the demo carries them.
package lecture

//go:generate go tool gocu-gen
