package attn_test

import (
	"fmt"

	"github.com/gocu-dev/gocu"
	"github.com/gocu-dev/gocu/array"
	"github.com/gocu-dev/gocu/internal/attn"
)

// Causal attention over one batch of two heads of 64 positions, forward
// and backward, on the simulator (a GPU runs the same calls).
func ExampleForward() {
	dev, err := gocu.Open("sim")
	if err != nil {
		fmt.Println(err)
		return
	}
	r := array.On(dev).NewRNG(1)
	q := r.Normal(array.BFloat16, 0, 1, 1, 2, 64, 64)
	k := r.Normal(array.BFloat16, 0, 1, 1, 2, 64, 64)
	v := r.Normal(array.BFloat16, 0, 1, 1, 2, 64, 64)
	o, lse, err := attn.Forward(q, k, v, 0.125, true)
	if err != nil {
		fmt.Println(err)
		return
	}
	do := r.Normal(array.BFloat16, 0, 1, 1, 2, 64, 64)
	dq, dk, dv, err := attn.Backward(q, k, v, o, lse, do, 0.125, true)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(o.Shape(), lse.DType(), lse.Shape())
	fmt.Println(dq.Shape(), dk.DType(), dv.DType())

	// The first query sees only the first key: its output is that key's
	// value.
	o0, _ := array.ToSlice[float32](o)
	v0, _ := array.ToSlice[float32](v)
	fmt.Println(o0[0] == v0[0], o0[63] == v0[63])
	// Output:
	// [1 2 64 64] float32 [1 2 64]
	// [1 2 64 64] bfloat16 bfloat16
	// true true
}
