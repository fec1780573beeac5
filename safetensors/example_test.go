package safetensors_test

import (
	"bytes"
	"fmt"

	"github.com/gocu-dev/gocu/array"
	"github.com/gocu-dev/gocu/safetensors"
)

func Example() {
	var buf bytes.Buffer
	err := safetensors.Write(&buf, []safetensors.Tensor{
		{Name: "weight", Array: array.FromSlice([]float32{1, 2, 3, 4}, 2, 2)},
		{Name: "step", Array: array.Full(array.Int64, 7)},
	}, map[string]string{"format": "pt"})
	if err != nil {
		fmt.Println(err)
		return
	}
	f, err := safetensors.Read(&buf, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, t := range f.Tensors {
		fmt.Println(t.Name, t.Array.DType(), t.Array.Shape(), t.Array)
	}
	fmt.Println(f.Metadata)
	// Output:
	// weight float32 [2 2] [[1. 2.]
	//  [3. 4.]]
	// step int64 [] 7
	// map[format:pt]
}
