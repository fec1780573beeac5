package grad_test

import (
	"fmt"

	"github.com/gocu-dev/gocu/array"
	"github.com/gocu-dev/gocu/grad"
)

// A training step in a scope: BackwardFree returns each activation's
// memory as soon as the backward pass is done with it.
func ExampleVar_BackwardFree() {
	dev := array.CPU()
	w := grad.Param(dev.Full(array.Float32, 0.5, 256, 256).Copy())
	x := grad.Const(dev.Full(array.Float32, 0.01, 256, 256).Copy())
	s := dev.NewScope()
	h := x
	for range 4 {
		h = h.MatMul(w).Tanh() // 256 KiB an activation
	}
	loss := h.Sum()
	if err := loss.Value().Eval().Err(); err != nil {
		fmt.Println(err)
		return
	}
	before := dev.Memory().InUse
	if err := loss.BackwardFree(); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("freed during the backward pass:", before > dev.Memory().InUse)
	fmt.Println("an activation afterwards:", h.Value().Err())
	v, err := loss.Value().Item()
	fmt.Printf("the loss: %.4g %v\n", v, err)
	s.Close()
	// Output:
	// freed during the backward pass: true
	// an activation afterwards: array: Err: use of closed array
	// the loss: 6.554e+04 <nil>
}
