package linalg

import "github.com/gocu-dev/gocu/array"

// Until the cuSOLVER paths exist, GPU arrays go through the host.

func gpuSolve(op string, a, b *array.Array, batch []int, n, k int) *array.Array {
	return cpuSolveArrays(op, a, b, batch, n, k)
}

func gpuInv(op string, a *array.Array, batch []int, n int) *array.Array {
	return cpuInvArrays(op, a, batch, n)
}

func gpuSlogdet(op string, a *array.Array, batch []int, n int) (sign, logabsdet *array.Array) {
	return cpuSlogdetArrays(a, batch, n)
}

func gpuCholesky(op string, a *array.Array, batch []int, n int) *array.Array {
	return cpuCholeskyArrays(op, a, batch, n)
}

func gpuQR(op string, a *array.Array, batch []int, m, n int, mode QRMode) (q, r *array.Array) {
	return cpuQRArrays(a, batch, m, n, mode)
}

func gpuSVD(op string, a *array.Array, batch []int, m, n int, full, uv bool) []*array.Array {
	return cpuSVDArrays(op, a, batch, m, n, full, uv)
}

func gpuEigh(op string, a *array.Array, batch []int, n int, vectors bool) []*array.Array {
	return cpuEighArrays(op, a, batch, n, vectors)
}
