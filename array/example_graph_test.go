package array_test

import (
	"fmt"

	"github.com/gocu-dev/gocu/array"
)

func ExampleMaker_Capture() {
	dev := array.CPU() // on a GPU the step is recorded once and replayed as a CUDA graph
	w := dev.Ones(array.Float32, 3).Copy()
	x := dev.Full(array.Float32, 0.5, 3).Copy()
	step := func() error { return w.Assign(w.Sub(x.Mul(w).Mul(0.1))) } // static shapes, in place
	g, err := dev.Capture(step)                                        // runs the step once
	if err != nil {
		fmt.Println(err)
		return
	}
	defer g.Close()
	for range 9 {
		if err := x.Assign(0.5); err != nil { // new inputs go into the same arrays
			fmt.Println(err)
			return
		}
		if err := g.Replay(); err != nil {
			fmt.Println(err)
			return
		}
	}
	fmt.Printf("%.4v\n", w) // 0.95^10: one step in Capture, nine replays
	// Output: [0.5987 0.5987 0.5987]
}
