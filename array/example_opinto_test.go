package array_test

import (
	"fmt"

	"github.com/gocu-dev/gocu/array"
)

// A step of plain gradient descent, w -= lr*g, written into w: neither
// operation makes an array.
func ExampleBinaryInto() {
	w := array.FromSlice([]float32{1, 2, 3, 4})
	g := array.FromSlice([]float32{0.5, -1, 2, 0})
	step := array.ZerosLike(w)
	lr := float32(0.25)
	for range 2 {
		if err := array.BinaryInto(step, array.OpMul, g, lr); err != nil {
			fmt.Println(err)
			return
		}
		if err := array.BinaryInto(w, array.OpSub, w, step); err != nil {
			fmt.Println(err)
			return
		}
	}
	fmt.Println(w)
	// Output:
	// [0.75 2.5  2.   4.  ]
}

func ExampleUnaryInto() {
	x := array.FromSlice([]float64{0, 1, 4, 9})
	if err := array.UnaryInto(x, array.OpSqrt, x); err != nil {
		fmt.Println(err)
	}
	fmt.Println(x)
	// Output:
	// [0. 1. 2. 3.]
}
