package linalg_test

import (
	"fmt"

	"github.com/gocu-dev/gocu/array"
	"github.com/gocu-dev/gocu/array/linalg"
)

func ExampleSolve() {
	cpu := array.CPU()
	a := array.FromSliceOn(cpu.Device(), []float64{3, 1, 1, 2}, 2, 2)
	b := array.FromSliceOn(cpu.Device(), []float64{9, 8}, 2)
	fmt.Println(linalg.Solve(a, b))
	// Output: [2. 3.]
}

func ExampleEinsum() {
	cpu := array.CPU()
	a := array.FromSliceOn(cpu.Device(), []float64{1, 2, 3, 4}, 2, 2)
	fmt.Println(linalg.Einsum("ii->", a)) // the trace
	fmt.Println(linalg.Einsum("ij,jk->ik", a, a))
	// Output:
	// 5.
	// [[ 7. 10.]
	//  [15. 22.]]
}

func ExampleCholesky() {
	cpu := array.CPU()
	a := array.FromSliceOn(cpu.Device(), []float64{4, 2, 2, 3}, 2, 2)
	l := linalg.Cholesky(a)
	fmt.Println(l)
	_, err := linalg.Cholesky(array.FromSliceOn(cpu.Device(), []float64{1, 2, 2, 1}, 2, 2)).Float64s()
	fmt.Println(err)
	// Output:
	// [[2.         0.        ]
	//  [1.         1.41421356]]
	// linalg: Cholesky: matrix is not positive definite
}
