// Command 05-matmul-go multiplies two matrices with three nested loops in
// plain Go: the naive matmul of CUDA-mode lecture 5, and the reference
// the kernels of the next steps are checked against.
package main

import (
	"fmt"
	"math/rand/v2"
	"time"
)

// matmul computes c = a b for row-major float32 matrices, a m x k and
// b k x n.
func matmul(a, b, c []float32, m, n, k int) {
	for row := range m {
		for col := range n {
			var sum float32
			for i := range k {
				sum += a[row*k+i] * b[i*n+col]
			}
			c[row*n+col] = sum
		}
	}
}

func main() {
	r := rand.New(rand.NewPCG(1, 2))
	for _, size := range []int{64, 256, 512} {
		a, b, c := random(r, size*size), random(r, size*size), make([]float32, size*size)
		start := time.Now()
		matmul(a, b, c, size, size, size)
		elapsed := time.Since(start)
		flops := 2 * float64(size) * float64(size) * float64(size)
		fmt.Printf("%4d^3: %12v  %6.2f GFLOP/s  c[%d][%d] = %.4f\n", size, elapsed, flops/elapsed.Seconds()/1e9, size-1, size-1, c[size*size-1])
	}
}

// random returns n values drawn uniformly from [-1, 1).
func random(r *rand.Rand, n int) []float32 {
	x := make([]float32, n)
	for i := range x {
		x[i] = 2*r.Float32() - 1
	}
	return x
}
