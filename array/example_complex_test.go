package array_test

import (
	"fmt"

	"github.com/gocu-dev/gocu/array"
)

func ExampleFromComplex() {
	z := array.FromComplex([]complex64{3 + 4i, 1 - 1i}, 2)
	w := z.Mul(z.Conj()) // |z|²
	v, err := w.Complex64s()
	fmt.Println(v, err)
	a, err := z.Abs().Float32s()
	fmt.Println(z.Abs().DType(), a, err)
	// Output:
	// [(25+0i) (2+0i)] <nil>
	// float32 [5 1.4142135] <nil>
}

func ExampleArray_ViewAsReal() {
	z := array.FromComplex([]complex128{1 + 2i, 3 + 4i}, 2)
	v := z.ViewAsReal() // shape [2 2]: (re, im) pairs sharing z's memory
	f, err := v.Float64s()
	fmt.Println(v.Shape(), f, err)
	// Output:
	// [2 2] [1 2 3 4] <nil>
}
