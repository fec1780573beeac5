package nn_test

import (
	"fmt"

	"github.com/gocu-dev/gocu/array"
	"github.com/gocu-dev/gocu/grad"
	"github.com/gocu-dev/gocu/nn"
)

// Train a small network to compute XOR.
func Example() {
	dev := array.CPU()
	rng := dev.NewRNG(1)
	model := nn.NewSequential(nn.NewLinear(rng, 2, 8), nn.Tanh{}, nn.NewLinear(rng, 8, 2))
	x := grad.Const(array.FromSlice([]float32{0, 0, 0, 1, 1, 0, 1, 1}, 4, 2))
	y := array.FromSlice([]int64{0, 1, 1, 0})
	opt := nn.NewAdam(nn.Params(model), 0.05)
	for range 300 {
		loss := nn.CrossEntropy(model.Forward(x), y)
		if err := loss.Backward(); err != nil {
			fmt.Println(err)
			return
		}
		if err := opt.Step(); err != nil {
			fmt.Println(err)
			return
		}
		opt.ZeroGrad()
	}
	var pred *grad.Var
	grad.NoGrad(func() { pred = model.Forward(x) })
	fmt.Println(pred.Value().ArgMax(1))
	// Output: [0 1 1 0]
}

func ExampleNewSequential() {
	rng := array.CPU().NewRNG(1)
	m := nn.NewSequential(nn.NewLinear(rng, 784, 512), nn.ReLU{}, nn.NewLinear(rng, 512, 10))
	for _, p := range m.Named() {
		fmt.Println(p.Name, p.Var.Shape())
	}
	// Output:
	// 0.weight [512 784]
	// 0.bias [512]
	// 2.weight [10 512]
	// 2.bias [10]
}
