// Package demo is what gocu demo and gocu gray run, and what the tutorial's
// example programs share: the lecture's Go kernels launched on a gocu
// device (the GPU, or the CPU simulator), image reading and writing,
// the grayscale pipeline, the matrix products checked against a CPU
// reference, and the simulator catching a planted race, an out-of-range
// index and a divergent barrier.
//
//go:generate go run ./internal/geninterim
package demo
