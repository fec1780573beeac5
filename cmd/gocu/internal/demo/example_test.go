package demo_test

import (
	"fmt"
	"log"

	"github.com/gocu-dev/gocu"
	"github.com/gocu-dev/gocu/cmd/gocu/internal/demo"
	"github.com/gocu-dev/gocu/internal/sample"
)

// The planted bugs of bugs/broken.go, as the simulator
// reports them.
func ExampleBugs() {
	bugs, err := demo.Bugs(1)
	if err != nil {
		log.Fatal(err)
	}
	for _, b := range bugs {
		fmt.Printf("%s in %s:\n%v\n", b.Name, b.Kernel, b.Err)
	}
	// Output:
	// data race in shared memory in bugs.TiledMatMulNoSync:
	// sim: kernel TiledMatMulNoSync: block (3,2,0) thread (10,15,0): shared-memory race on shared [16][16]float32 #1 element 186 [11][10]: read at broken.go:44:23 (bs[i][tx]) conflicts with the write by block (3,2,0) thread (10,11,0) at broken.go:38:4 (bs[ty][tx]) with no SyncThreads between them [seed 1: GOCU_SIM_SEED=1 replays this schedule]
	// index out of range in bugs.AddOffByOne:
	// sim: kernel AddOffByOne: block (3,0,0) thread (232,0,0): index 1000 out of range [0:1000] of global memory (argument 1) at broken.go:16:10 (a[i]) [seed 1: GOCU_SIM_SEED=1 replays this schedule]
	// divergent barrier in bugs.BlockSumDivergent:
	// sim: kernel BlockSumDivergent: block (3,0,0) thread (0,0,0): divergent barrier: waits at SyncThreads at broken.go:72, but thread (128,0,0) returned from the kernel (it last synchronised at broken.go:68) [seed 1: GOCU_SIM_SEED=1 replays this schedule]
}

// Grayscale of the sample image on the simulator, with the 2-D kernel.
func ExampleGray() {
	dev, err := gocu.Open("sim")
	if err != nil {
		log.Fatal(err)
	}
	res, err := demo.Gray(dev, sample.Image(), true)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Kernel, res.Config, res.Image.Bounds())
	fmt.Println("pixel (102,113), the red balloon:", res.Image.GrayAt(102, 113).Y)
	// Output:
	// Gray2D grid (32,32,1) block (16,16,1) shared 0 (0,0)-(512,512)
	// pixel (102,113), the red balloon: 96
}
