package gen_test

import (
	"fmt"

	"github.com/gocu-dev/gocu/gen"
)

// Translate a package and look at what a launcher needs to know about
// each kernel: its CUDA entry point and how its parameters travel.
func ExampleGenerate() {
	res, err := gen.Generate(gen.Config{}, "./testdata/kernels/matmul")
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, k := range res.Packages[0].Meta {
		fmt.Printf("%s barriers=%v shared=%dB dynamic=%v\n", k.Entry, k.Barriers, k.SharedBytes, k.DynamicShared)
		for _, p := range k.Params {
			fmt.Printf("  %s %s: %s, %d C argument(s), %s\n", p.Name, p.GoType, p.Kind, p.Args(), p.CType)
		}
	}
	// Output:
	// Naive barriers=false shared=0B dynamic=false
	//   a []float32: slice, 2 C argument(s), float*
	//   b []float32: slice, 2 C argument(s), float*
	//   c []float32: slice, 2 C argument(s), float*
	//   n int32: scalar, 1 C argument(s), int
	// Tiled barriers=true shared=2048B dynamic=false
	//   a []float32: slice, 2 C argument(s), float*
	//   b []float32: slice, 2 C argument(s), float*
	//   c []float32: slice, 2 C argument(s), float*
	//   n int32: scalar, 1 C argument(s), int
	// TiledDynamic barriers=true shared=0B dynamic=true
	//   a []float32: slice, 2 C argument(s), float*
	//   b []float32: slice, 2 C argument(s), float*
	//   c []float32: slice, 2 C argument(s), float*
	//   n int32: scalar, 1 C argument(s), int
	//   tile int32: scalar, 1 C argument(s), int
}

// The errors of a kernel outside the Go subset.
func ExampleError() {
	_, err := gen.Generate(gen.Config{Dir: "testdata/bad"}, ".")
	fmt.Println(err)
	// Output:
	// bad.go:11:3: a map is not supported in a kernel: use a slice or a fixed-size array indexed by an integer key
	// bad.go:13:3: defer is not supported in a kernel: call the function at the end explicitly
}
