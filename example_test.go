package gocu_test

import (
	"fmt"

	"github.com/gocu-dev/gocu"
)

// Open names a device: "cpu", "sim" (the simulator), "cuda" or "cuda:N".
// The same name gives the same *Device.
func ExampleOpen() {
	dev, err := gocu.Open("sim")
	if err != nil {
		fmt.Println(err)
		return
	}
	again := gocu.MustOpen("sim")
	fmt.Println(dev, dev.Kind() == gocu.Sim, dev == again)
	// Output: sim true true
}

// A Buffer is a typed slice of device memory. FromSlice copies a Go
// slice in and ToSlice copies it back out.
func ExampleFromSlice() {
	dev := gocu.MustOpen("sim")
	buf, err := gocu.FromSlice(dev, []float32{1, 2, 3})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer buf.Free()
	out, err := buf.ToSlice()
	fmt.Println(buf.Len(), out, err)
	// Output: 3 [1 2 3] <nil>
}

// Compile runs CUDA C that a program already has, on the default GPU.
// Launch takes C's exact widths: float32, int32 and Buffers for pointers.
// It needs a GPU, so it has no output here.
func ExampleCompile() {
	mod, err := gocu.Compile(`extern "C" __global__ void scale(float* x, float a, int n) {
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n) x[i] *= a;
}`)
	if err != nil {
		fmt.Println(err) // a compile error shows the line
		return
	}
	k, err := mod.Kernel("scale")
	if err != nil {
		fmt.Println(err)
		return
	}
	x := []float32{1, 2, 3, 4}
	// InOut copies x to the GPU and back, so Launch waits for the kernel.
	err = k.Launch(gocu.Grid1D(len(x), 256), gocu.InOut(x), float32(2), int32(len(x)))
	fmt.Println(x, err)
}
