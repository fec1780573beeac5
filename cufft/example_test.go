package cufft_test

import (
	"errors"
	"fmt"
	"log"

	"github.com/gocu-dev/gocu/cufft"
)

// A batch of 4096 complex64 transforms of 4096 points, in place, with the
// work area from the caller's allocator. This must run on a locked OS
// thread with the device's CUDA context current.
func ExampleNewPlan() {
	var data, work uint64 // device pointers
	var stream uintptr    // the CUstream to queue on

	p, err := cufft.NewPlan(cufft.Layout{N: []int{4096}, Batch: 4096}, cufft.C2C)
	if err != nil {
		log.Fatal(err)
	}
	defer p.Destroy()
	_ = p.WorkSize() // allocate this many bytes at work
	if err := p.SetWorkArea(work); err != nil {
		log.Fatal(err)
	}
	if err := p.SetStream(stream); err != nil {
		log.Fatal(err)
	}
	if err := p.Exec(data, data, cufft.Forward); err != nil {
		log.Fatal(err)
	}
}

// Layouts are checked before cuFFT sees them.
func ExampleLayout() {
	_, err := cufft.NewPlan(cufft.Layout{N: []int{64, 64, 64, 64}, Batch: 1}, cufft.R2C)
	fmt.Println(errors.Is(err, cufft.ErrInvalidArgument))
	fmt.Println(err)
	// Output:
	// true
	// cufft: invalid argument: cufftMakePlanMany: rank 4: cuFFT plans have rank 1, 2 or 3
}
