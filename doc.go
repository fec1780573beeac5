// Package gocu makes NVIDIA GPUs usable from Go without cgo.
//
// It ties together the driver bindings (package cuda), run-time compilation
// (package nvrtc) and the CPU simulator (package sim) behind one API:
// compile CUDA C at run time and launch it, like CuPy's RawKernel, or launch
// kernels written in Go and translated by gocu gen.
package gocu
