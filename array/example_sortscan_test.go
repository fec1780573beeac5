package array_test

import (
	"fmt"
	"math"

	"github.com/gocu-dev/gocu/array"
)

func ExampleArray_Sort() {
	x := array.FromSlice([]float64{3, math.NaN(), -1, 2, -1}, 5)
	fmt.Println(x.Sort(0))
	fmt.Println(x.Argsort(0))
	// Output:
	// [-1. -1.  2.  3. nan]
	// [2 4 3 0 1]
}

func ExampleArray_TopK() {
	x := array.FromSlice([]float32{5, 1, 9, 3, 7, 9}, 2, 3)
	v, i := x.TopK(2, true)
	fmt.Println(v)
	fmt.Println(i)
	// Output:
	// [[9. 5.]
	//  [9. 7.]]
	// [[2 0]
	//  [2 1]]
}

func ExampleArray_Unique() {
	x := array.FromSlice([]float64{2, math.NaN(), 1, 2, math.NaN()}, 5)
	fmt.Println(x.Unique())
	// Output:
	// [ 1.  2. nan]
}

func ExampleArray_UniqueAll() {
	x := array.FromSlice([]int32{3, 1, 3, 2, 1, 3}, 6)
	values, index, inverse, counts := x.UniqueAll()
	fmt.Println(values, index, inverse, counts)
	// Output:
	// [1 2 3] [1 3 0] [2 0 2 1 0 2] [2 1 3]
}

func ExampleArray_Cumsum() {
	x := array.FromSlice([]int32{1, 2, 3, 4, 5, 6}, 2, 3)
	fmt.Println(x.Cumsum(1))
	fmt.Println(x.Cumsum(0))
	// Output:
	// [[ 1  3  6]
	//  [ 4  9 15]]
	// [[1 2 3]
	//  [5 7 9]]
}

func ExampleArray_Quantile() {
	x := array.FromSlice([]float64{1, 2, 3, 4, 10, 20, 30, 40}, 2, 4)
	fmt.Println(x.Median(1))
	fmt.Println(x.Quantile(0.25, 1))
	fmt.Println(x.Var(1, 1))
	// Output:
	// [ 2.5 25. ]
	// [ 1.75 17.5 ]
	// [  1.66666667 166.66666667]
}

func ExampleSearchSorted() {
	a := array.FromSlice([]float32{1, 2, 2, 4}, 4)
	v := array.FromSlice([]float32{2, 3, 5}, 3)
	fmt.Println(array.SearchSorted(a, v, false))
	fmt.Println(array.SearchSorted(a, v, true))
	// Output:
	// [1 3 4]
	// [3 3 4]
}

func ExampleArray_UniqueN() {
	x := array.FromSlice([]int64{7, 7, 2}, 3)
	values, _, _, counts, n := x.UniqueN(4, -1) // no synchronisation
	fmt.Println(values, counts, n)
	// Output:
	// [ 2  7 -1 -1] [1 2 0 0] 2
}
