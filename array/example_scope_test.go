package array_test

import (
	"errors"
	"fmt"

	"github.com/gocu-dev/gocu/array"
)

// A scope frees what a loop body made, except what it keeps.
func ExampleMaker_NewScope() {
	dev := array.CPU()
	total := dev.Zeros(array.Float64).Copy()
	for step := range 3 {
		s := dev.NewScope()
		x := dev.Arange(array.Float64, 4).Add(float64(step)) // closed with s
		sq := x.Mul(x).Sum()                                 // closed with s
		if err := total.Assign(total.Add(sq)); err != nil {  // total was made outside
			fmt.Println(err)
		}
		s.Close()
		fmt.Println(step, errors.Is(x.Err(), array.ErrClosed))
	}
	fmt.Println(total)
	// Output:
	// 0 true
	// 1 true
	// 2 true
	// 98.
}
