//go:build !amd64

package cpu

const hasGemmKernel = false

func sgemm6x16(kc int, a, b, c *float32, ldc int, acc int) { panic("unreachable") }

func dgemm6x8(kc int, a, b, c *float64, ldc int, acc int) { panic("unreachable") }
