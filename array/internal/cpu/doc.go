// Package cpu is the pure-Go backend of package array: buffers are Go
// slices, fused elementwise programs run as a block interpreter (each
// operation of the program over a block of up to 1024 elements at a time,
// so intermediate values stay in L1 and are never materialised), work is
// split over all cores above a size threshold, float32 matrix products use
// a packed, blocked, parallel GEMM with an AVX2/FMA micro-kernel (gonum's
// BLAS where AVX2 is missing and for float64), and random fills use the
// shared Philox stream.
package cpu
