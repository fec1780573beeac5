package nn_test

import (
	"fmt"

	"github.com/gocu-dev/gocu/array"
	"github.com/gocu-dev/gocu/grad"
	"github.com/gocu-dev/gocu/nn"
)

// A small CNN: its state-dict names and shapes are torch's.
func ExampleNewConv2dWith() {
	rng := array.CPU().NewRNG(1)
	m := nn.NewSequential(
		nn.NewConv2dWith(rng, 3, 16, [2]int{3, 5}, &nn.Conv2dOptions{Stride: [2]int{2, 1}, Padding: [2]int{1, 2}}),
		nn.NewBatchNorm2d(array.CPU(), 16), nn.ReLU{},
		nn.NewConv2dWith(rng, 16, 16, [2]int{3, 3}, &nn.Conv2dOptions{Padding: [2]int{1, 1}, Groups: 16, NoBias: true}),
		&nn.AvgPool2d{K: 2},
		nn.NewAdaptiveAvgPool2d(1, 1))
	for _, p := range m.Named() {
		fmt.Println(p.Name, p.Var.Shape())
	}
	x := grad.Const(rng.Normal(array.Float32, 0, 1, 8, 3, 32, 32))
	fmt.Println(m.Forward(x).Shape())
	// Output:
	// 0.weight [16 3 3 5]
	// 0.bias [16]
	// 1.weight [16]
	// 1.bias [16]
	// 1.running_mean [16]
	// 1.running_var [16]
	// 3.weight [16 1 3 3]
	// [8 16 1 1]
}

// Cross-entropy as a language model trains: padding positions ignored,
// labels smoothed, one loss per token.
func ExampleCrossEntropyWith() {
	logits := grad.Const(array.FromSlice([]float64{2, 0, -1, 0.5, 0.5, 0.5, 1, 3, 0.5}, 3, 3))
	labels := array.FromSlice([]int64{0, -100, 1})
	o := &nn.CrossEntropyOptions{Ignore: true, IgnoreIndex: -100, LabelSmoothing: 0.1, Reduction: nn.ReduceNone}
	v, err := nn.CrossEntropyWith(logits, labels, o).Value().Float64s()
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%.4f\n", v)
	// Output: [0.3365 0.0000 0.3467]
}

// Binary classification from logits, positives weighted 3 to 1.
func ExampleBCEWithLogits() {
	logits := grad.Param(array.FromSlice([]float32{2, -1, 0.5, -3}))
	targets := array.FromSlice([]float32{1, 0, 0, 1})
	loss := nn.BCEWithLogits(logits, targets, &nn.BCEOptions{PosWeight: array.FromSlice([]float32{3})})
	if err := loss.Backward(); err != nil {
		fmt.Println(err)
		return
	}
	l, err1 := loss.Item()
	g, err2 := logits.Grad().AsType(array.Float64).Float64s()
	if err1 != nil || err2 != nil {
		fmt.Println(err1, err2)
		return
	}
	fmt.Printf("%.4f %.4f\n", l, g)
	// Output: 2.7035 [-0.0894 0.0672 0.1556 -0.7144]
}
