//go:build amd64

package cpu

import "golang.org/x/sys/cpu"

// hasGemmKernel reports whether the AVX2/FMA micro-kernels can run.
var hasGemmKernel = cpu.X86.HasAVX2 && cpu.X86.HasFMA

//go:noescape
func sgemm6x16(kc int, a, b, c *float32, ldc int, acc int)

//go:noescape
func dgemm6x8(kc int, a, b, c *float64, ldc int, acc int)
