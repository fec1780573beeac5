// Package kernels holds the lecture kernels of CUDA-mode lectures 3, 5 and
// 9, written in Go with package kernel: grayscale conversion on 1-D and 2-D
// grids, naive and tiled matrix multiplication (static and dynamic shared
// memory), a sum reduction with warp shuffles, a histogram privatised in
// shared memory and a Blelloch prefix scan. Each is marked //gocu:kernel,
// so gocu gen translates it to CUDA C, and each runs unchanged on the CPU
// simulator (package sim), where the tests check it against a CPU reference.
//
// broken.go keeps three classic bugs as kernels of their own, for the
// simulator's error reports: a missing barrier (a shared-memory race), an
// off-by-one guard (an out-of-range index) and a barrier inside a divergent
// branch.
package kernels
