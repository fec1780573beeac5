package cuda_test

import (
	"errors"
	"fmt"
	"log"
	"math"

	"github.com/gocu-dev/gocu/cuda"
)

// A complete program: load a kernel, copy the inputs, launch, copy the
// result back. It needs a GPU, so it has no checked output.
func Example() {
	if !cuda.Available() {
		fmt.Println("no GPU:", cuda.Init())
		return
	}
	d, err := cuda.DeviceAt(0)
	if err != nil {
		log.Fatal(err)
	}
	mod, err := d.LoadPTX(kernelsPTX) // PTX from NVRTC, clang or nvcc
	if err != nil {
		log.Fatal(err)
	}
	defer mod.Unload()
	vadd, err := mod.Function("vadd") // extern "C" void vadd(const float*, const float*, float*, int)
	if err != nil {
		log.Fatal(err)
	}
	const n = 1 << 20
	a, b := make([]float32, n), make([]float32, n)
	for i := range a {
		a[i], b[i] = float32(i), 2
	}
	da, _ := cuda.AllocSlice[float32](d, n)
	db, _ := cuda.AllocSlice[float32](d, n)
	dc, _ := cuda.AllocSlice[float32](d, n)
	defer da.Free()
	defer db.Free()
	defer dc.Free()
	if err := cuda.CopyHtoD(da, a); err != nil {
		log.Fatal(err)
	}
	if err := cuda.CopyHtoD(db, b); err != nil {
		log.Fatal(err)
	}
	// int32 for the C int: Go int is refused.
	err = vadd.Launch(cuda.Config{Grid: cuda.GridFor(n, 256), Block: cuda.Dim3{X: 256}}, da, db, dc, int32(n))
	if err != nil {
		log.Fatal(err)
	}
	c := make([]float32, n)
	if err := cuda.CopyDtoH(c, dc); err != nil { // waits for the kernel
		log.Fatal(err)
	}
	fmt.Println(c[0], c[n-1])
}

// Function.Call copies host slices around a synchronous launch, like
// PyCUDA's In, Out and InOut.
func ExampleFunction_Call() {
	d, err := cuda.DeviceAt(0)
	if err != nil {
		fmt.Println(err)
		return
	}
	mod, err := d.LoadPTX(kernelsPTX)
	if err != nil {
		log.Fatal(err)
	}
	saxpy, _ := mod.Function("saxpy") // y = a*x + y
	x := []float32{1, 2, 3}
	y := []float32{10, 20, 30}
	err = saxpy.Call(cuda.Config{Grid: cuda.Dim3{X: 1}, Block: cuda.Dim3{X: 32}}, float32(2), cuda.In(x), cuda.InOut(y), int32(len(x)))
	fmt.Println(y, err)
}

// Streams and events: queue work on a stream and time it on the GPU.
func ExampleElapsed() {
	d, err := cuda.DeviceAt(0)
	if err != nil {
		fmt.Println(err)
		return
	}
	s, _ := d.NewStream(cuda.StreamNonBlocking)
	defer s.Close()
	start, _ := d.NewEvent(cuda.EventDefault)
	end, _ := d.NewEvent(cuda.EventDefault)
	m, _ := d.AllocOn(s, 256<<20)
	defer m.Free()
	start.Record(s)
	m.MemsetD32Async(math.Float32bits(1), s)
	end.Record(s)
	end.Synchronize()
	dt, _ := cuda.Elapsed(start, end)
	fmt.Printf("%.0f GB/s\n", 256<<20/dt.Seconds()/1e9)
}

// Capture a stream into a graph once, replay it many times.
func ExampleStream_Capture() {
	d, err := cuda.DeviceAt(0)
	if err != nil {
		fmt.Println(err)
		return
	}
	mod, _ := d.LoadPTX(kernelsPTX)
	inc1, _ := mod.Function("inc1")
	s, _ := d.NewStream(cuda.StreamNonBlocking)
	defer s.Close()
	p, _ := d.AllocOn(s, 4)
	defer p.Free()
	p.MemsetD32Async(0, s)
	g, err := s.Capture(cuda.CaptureRelaxed, func(s *cuda.Stream) error {
		for range 100 {
			if err := inc1.Launch(cuda.Config{Grid: cuda.Dim3{X: 1}, Block: cuda.Dim3{X: 1}, Stream: s}, p); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		log.Fatal(err)
	}
	defer g.Close()
	exec, _ := g.Instantiate()
	defer exec.Close()
	for range 10 {
		exec.Launch(s)
	}
	s.Synchronize()
	v := make([]float32, 1)
	cuda.CopyDtoH(v, p)
	fmt.Println(v[0]) // 1000
}

func ExampleGridFor() {
	fmt.Println(cuda.GridFor(1<<20, 256), cuda.GridFor(1000, 256))
	// Output: (4096,0,0) (4,0,0)
}

// Structs travel by value when their Go layout is the C layout.
func ExampleValue() {
	type params struct { // struct { float scale; double shift; int n; }
		Scale float32
		Shift float64
		N     int32
	}
	raw, err := cuda.Value(params{Scale: 2, Shift: 1, N: 100})
	fmt.Println(len(raw.Bytes), raw.Align, err)
	_, err = cuda.Value(struct{ N int }{})
	fmt.Println(errors.Is(err, cuda.ErrInvalidArg))
	// Output:
	// 24 8 <nil>
	// true
}

// Driver errors match sentinels with errors.Is; sticky errors also match
// ErrContextLost.
func ExampleError() {
	err := fmt.Errorf("step 3: %w", &cuda.Error{Func: "cuStreamSynchronize", Code: 700, Name: cuda.Result(700).Name(), Msg: "an illegal memory access was encountered"})
	fmt.Println(errors.Is(err, cuda.ErrIllegalAddress), errors.Is(err, cuda.ErrContextLost), errors.Is(err, cuda.ErrOutOfMemory))
	fmt.Println(cuda.Result(2).Name(), cuda.Result(2).Sticky())
	// Output:
	// true true false
	// CUDA_ERROR_OUT_OF_MEMORY false
}
