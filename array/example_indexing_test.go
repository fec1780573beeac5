package array_test

import (
	"fmt"

	"github.com/gocu-dev/gocu/array"
)

func ExampleArray_Take() {
	emb := array.Arange(array.Float32, 12).Reshape(4, 3)
	tok := array.FromSlice([]int64{3, 0, -1}, 3)
	fmt.Println(emb.Take(tok, 0))
	// Output:
	// [[ 9. 10. 11.]
	//  [ 0.  1.  2.]
	//  [ 9. 10. 11.]]
}

func ExampleArray_Take_outOfRange() {
	x := array.Arange(array.Float32, 4)
	_, err := x.Take(array.FromSlice([]int64{1, 7}, 2), 0).Float32s()
	fmt.Println(err)
	// Output:
	// array: Take: index 7 is out of bounds for axis 0 with size 4
}

func ExampleFancy() {
	x := array.Arange(array.Int32, 12).Reshape(3, 4)
	rows := array.FromSlice([]int64{0, 2}, 2)
	fmt.Println(x.Slice(array.Fancy(rows), array.S(1, 3)))
	// Output:
	// [[ 1  2]
	//  [ 9 10]]
}

func ExampleArray_Mask() {
	x := array.FromSlice([]float32{1.5, -2, 3, -4}, 4)
	fmt.Println(x.Mask(x.Gt(0)))
	if err := x.SetMask(x.Lt(0), 0); err != nil {
		fmt.Println(err)
	}
	fmt.Println(x)
	// Output:
	// [1.5 3. ]
	// [1.5 0.  3.  0. ]
}

func ExampleArray_NonzeroStatic() {
	x := array.FromSlice([]bool{false, true, true, false, true}, 5)
	fmt.Println(x.NonzeroStatic(4, -1)[0]) // no wait for the device
	// Output:
	// [ 1  2  4 -1]
}

func ExampleArray_IndexAdd() {
	grad := array.Ones(array.Float32, 3, 2)
	tok := array.FromSlice([]int64{1, 1, 3}, 3)
	fmt.Println(array.Zeros(array.Float32, 4, 2).IndexAdd(0, tok, grad))
	// Output:
	// [[0. 0.]
	//  [2. 2.]
	//  [0. 0.]
	//  [1. 1.]]
}

func ExampleArray_Into() {
	x := array.Ones(array.Float32, 3).Eval()
	g := array.FromSlice([]float32{1, 2, 3}, 3)
	if err := x.Mul(0.5).Add(g).Into(x); err != nil { // no allocation
		fmt.Println(err)
	}
	fmt.Println(x)
	// Output:
	// [1.5 2.5 3.5]
}

func ExampleArray_Pad() {
	x := array.FromSlice([]int32{1, 2, 3}, 3)
	fmt.Println(x.Pad([][2]int{{2, 1}}, array.PadReflect, nil))
	// Output:
	// [3 2 1 2 3 2]
}

func ExampleRNG_Integers() {
	r := array.NewRNG(1)
	d := r.Integers(array.Int64, 0, 6, 8) // the same values on every device
	fmt.Println(d.Shape(), d.DType())
	// Output:
	// [8] int64
}
