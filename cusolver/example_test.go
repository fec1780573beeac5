package cusolver_test

import (
	"errors"
	"fmt"
	"log"

	"github.com/gocu-dev/gocu/cusolver"
)

// Solve A·X = B for a column-major n×n float32 A and n×k B already on the
// GPU, with the workspace, pivots and info from the caller's allocator.
// This must run on a locked OS thread with the device's CUDA context
// current.
func ExampleHandle_Getrf() {
	var a, b, work, ipiv, info uint64 // device pointers
	n, k := 1024, 64
	alloc := func(bytes int) uint64 { return 0 } // your allocator

	h, err := cusolver.Create()
	if err != nil {
		log.Fatal(err)
	}
	defer h.Destroy()
	lw, err := h.GetrfBufferSize(cusolver.Float32, n, n, a, n)
	if err != nil {
		log.Fatal(err)
	}
	work, ipiv, info = alloc(4*lw), alloc(4*n), alloc(4)
	if err := h.Getrf(cusolver.Float32, n, n, a, n, work, ipiv, info); err != nil {
		log.Fatal(err)
	}
	if err := h.Getrs(cusolver.Float32, cusolver.NoTrans, n, k, a, n, ipiv, b, n, info); err != nil {
		log.Fatal(err)
	}
	// Read info (it waits for the GPU): > 0 means A is singular.
}

// Mistakes are found before cuSOLVER is called.
func ExampleErrInvalidArgument() {
	var h cusolver.Handle // not created: the arguments are checked first
	err := h.Getrf(cusolver.Float64, 4, 4, 0x1000, 2, 0x2000, 0x3000, 0x4000)
	fmt.Println(errors.Is(err, cusolver.ErrInvalidArgument))
	fmt.Println(err)
	// Output:
	// true
	// cusolver: invalid argument: cusolverDnDgetrf: lda = 2, must be at least max(1, 4), the rows of the matrix
}
