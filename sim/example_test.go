package sim_test

import (
	"errors"
	"fmt"

	"github.com/gocu-dev/gocu/kernel"
	"github.com/gocu-dev/gocu/sim"
)

// saxpy computes y = a*x + y, one thread per element.
//
//gocu:kernel
func saxpy(t *kernel.Thread, a float32, x, y []float32, n int32) {
	if i := t.Index(); i < n {
		y[i] += a * x[i]
	}
}

func ExampleRun() {
	x := []float32{1, 2, 3, 4, 5}
	y := []float32{10, 20, 30, 40, 50}
	cfg := sim.Config{Grid: kernel.Dim3{X: 1}, Block: kernel.Dim3{X: 32}}
	if err := sim.Run(cfg, saxpy, float32(2), x, y, int32(len(x))); err != nil {
		fmt.Println(err)
	}
	fmt.Println(y)
	// Output: [12 24 36 48 60]
}

func ExampleLaunch() {
	x := make([]float32, 1000)
	y := make([]float32, 1000)
	n := int32(len(x))
	k := sim.Kernel{Name: "saxpy", Func: func(t *kernel.Thread) { saxpy(t, 3, x, y, n) }}
	err := sim.Launch(sim.Config{Grid: kernel.Dim3{X: 4}, Block: kernel.Dim3{X: 256}}, k)
	fmt.Println(err)
	// Output: <nil>
}

// blockSum sums each block's 64 elements in shared memory, with the
// barrier wrongly inside the branch.
func blockSum(t *kernel.Thread, x, out []float32) {
	s := kernel.Shared[[64]float32](t)
	tid := t.ThreadIdx.X
	s[tid] = x[t.Index()]
	t.SyncThreads()
	for stride := int32(32); stride > 0; stride /= 2 {
		if tid < stride {
			s[tid] += s[tid+stride]
			t.SyncThreads() // only the threads below stride get here
		}
	}
	if tid == 0 {
		out[t.BlockIdx.X] = s[0]
	}
}

func ExampleError() {
	x, out := make([]float32, 128), make([]float32, 2)
	err := sim.Run(sim.Config{Grid: kernel.Dim3{X: 2}, Block: kernel.Dim3{X: 64}}, blockSum, x, out)
	var e *sim.Error
	if errors.As(err, &e) {
		fmt.Println(e.Kind, "in", e.Kernel)
		fmt.Println("thread", e.Thread.X, "waits at", e.Op)
		fmt.Println("thread", e.Other.Thread.X, e.Other.Op)
		fmt.Println(errors.Is(err, sim.ErrDivergentBarrier))
	}
	// Output:
	// divergent barrier in blockSum
	// thread 0 waits at SyncThreads
	// thread 32 returned
	// true
}
