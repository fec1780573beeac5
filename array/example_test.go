package array_test

import (
	"errors"
	"fmt"

	"github.com/gocu-dev/gocu"
	"github.com/gocu-dev/gocu/array"
)

func Example() {
	x := array.Arange(array.Float32, 6).Reshape(2, 3)
	w := array.Ones(array.Float32, 3, 2)
	y := x.MatMul(w).Add(array.FromSlice([]float32{0.5, -10})).ReLU()
	fmt.Println(y)
	// Output:
	// [[ 3.5  0. ]
	//  [12.5  2. ]]
}

func ExampleArray_Slice() {
	x := array.Arange(array.Int64, 12).Reshape(3, 4)
	fmt.Println(x.Slice(array.S(array.None, array.None, -1), array.S(1, 4, 2)))
	fmt.Println(x.Slice(array.All, array.Idx(-1)))
	// Output:
	// [[ 9 11]
	//  [ 5  7]
	//  [ 1  3]]
	// [ 3  7 11]
}

func ExampleArray_Mul_weakScalars() {
	f := array.Ones(array.Float32, 2).Mul(2.5) // a Go float keeps float32
	i := array.Ones(array.Int32, 2).Mul(2.5)   // ...but promotes an int32 array
	u := array.Ones(array.Uint8, 2).Add(300)   // does not fit uint8
	fmt.Println(f.DType(), i.DType(), u.Err())
	// Output:
	// float32 float64 array: Add: Go integer 300 is out of range for uint8
}

func ExampleArray_Err() {
	x := array.Ones(array.Float32, 3, 4)
	y := x.Add(array.Ones(array.Float32, 5)).ReLU().Sum(0) // the error sticks
	err := y.Err()
	fmt.Println(err)
	fmt.Println(errors.Is(err, array.ErrShape))
	// Output:
	// array: Add: shapes (3,4) and (5,) cannot be broadcast
	// true
}

func ExampleArray_Reduce() {
	x := array.FromSlice([]float64{1, 2, 3, 4, 5, 6}, 2, 3)
	fmt.Println(x.Sum(0))
	fmt.Println(x.Reduce(array.OpMax, true, 1))
	fmt.Println(x.ArgMax())
	fmt.Printf("%.4v\n", x.Softmax(1))
	// Output:
	// [5. 7. 9.]
	// [[3.]
	//  [6.]]
	// 5
	// [[0.09   0.2447 0.6652]
	//  [0.09   0.2447 0.6652]]
}

func ExampleNewRNG() {
	r := array.NewRNG(42)
	u := r.Uniform(array.Float64, 0, 1, 3)
	again := array.NewRNG(42).Uniform(array.Float64, 0, 1, 3)
	same, _ := array.ItemOf[bool](u.Eq(again).All())
	fmt.Println(u.Shape(), same)
	// Output:
	// [3] true
}

func ExampleToSlice() {
	x := array.Linspace(array.Float64, 0, 1, 5)
	v, err := array.ToSlice[float32](x)
	fmt.Println(v, err)
	// Output:
	// [0 0.25 0.5 0.75 1] <nil>
}

func ExampleWhere() {
	x := array.FromSlice([]int32{-2, 5, -7, 1})
	fmt.Println(array.Where(x.Lt(0), 0, x))
	// Output:
	// [0 5 0 1]
}

// On a GPU every operation is queued and returns at once; reading waits.
func ExampleOn() {
	dev, err := gocu.Open("cuda:0")
	if err != nil {
		fmt.Println("no GPU:", err)
		return
	}
	g := array.On(dev)
	g.SetMatMulPrecision(array.TF32) // tensor cores for float32 products
	x := g.NewRNG(1).Normal(array.Float32, 0, 1, 4096, 1024)
	y := x.MatMul(x.T()).Mul(1.0 / 1024).ReLU() // cuBLAS, then one fused kernel
	s, err := y.Mean().Item()                   // the first wait for the GPU
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("mean %.3f on %v\n", s, g)
	back := y.To(gocu.MustOpen("cpu")) // copies through host memory
	fmt.Println(back.Shape())
}

func ExampleArray_Arctan2() {
	y := array.FromSlice([]float64{1, 1, -1})
	x := array.FromSlice([]float64{1, -1, 0})
	fmt.Println(y.Arctan2(x).Rad2Deg())
	// Output:
	// [ 45. 135. -90.]
}

func ExampleArray_BitwiseAnd() {
	x := array.FromSlice([]int32{12, -1, 7})
	fmt.Println(x.BitwiseAnd(10), x.LeftShift(2), x.RightShift(40))
	b := array.FromSlice([]bool{true, false})
	fmt.Println(b.BitwiseNot()) // logical on bool, as NumPy's ~
	// Output:
	// [ 8 10  2] [48 -4 28] [ 0 -1  0]
	// [False  True]
}
