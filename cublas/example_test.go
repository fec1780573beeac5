package cublas_test

import (
	"fmt"
	"log"

	"github.com/gocu-dev/gocu/cublas"
)

// C = A·B for row-major float32 matrices already on the GPU. This must run
// on a locked OS thread with the device's CUDA context current.
func ExampleHandle_Sgemm() {
	var a, b, c uint64 // device pointers: A is m×k, B k×n, C m×n, row-major
	m, n, k := 512, 256, 384

	h, err := cublas.Create()
	if err != nil {
		log.Fatal(err)
	}
	defer h.Destroy()
	// Column-major cuBLAS sees row-major matrices transposed: compute
	// Cᵀ = Bᵀ·Aᵀ by swapping the operands and m with n.
	if err := h.Sgemm(cublas.NoTrans, cublas.NoTrans, n, m, k, 1, b, n, a, k, 0, c, n); err != nil {
		log.Fatal(err)
	}
}

// TF32 tensor cores for an FP32 matmul, like torch's "high" precision.
func ExampleHandle_GemmEx() {
	var a, b, c uint64 // column-major m×k, k×n, m×n float32 on the GPU
	m, n, k := 4096, 4096, 4096
	h, err := cublas.Create()
	if err != nil {
		log.Fatal(err)
	}
	defer h.Destroy()
	err = h.GemmEx(cublas.GemmArgs{
		TransA: cublas.NoTrans, TransB: cublas.NoTrans,
		M: m, N: n, K: k,
		Alpha: 1, Beta: 0,
		A: a, TypeA: cublas.R32F, LDA: m,
		B: b, TypeB: cublas.R32F, LDB: k,
		C: c, TypeC: cublas.R32F, LDC: m,
		Compute: cublas.Compute32FFastTF32,
		Algo:    cublas.GemmDefault,
	})
	if err != nil {
		log.Fatal(err)
	}
}

// Mistakes are caught before cuBLAS runs.
func ExampleErrInvalidArgument() {
	var h cublas.Handle // not even created: arguments are checked first
	err := h.Sgemm(cublas.NoTrans, cublas.NoTrans, 64, 64, 64, 1, 0x1000, 32, 0x2000, 64, 0, 0x3000, 64)
	fmt.Println(err)
	// Output: cublas: invalid argument: cublasSgemm_v2: lda = 32, must be at least max(1, 64), the rows of the matrix as stored
}

func ExampleStatus() {
	fmt.Println(cublas.StatusNotSupported.String(), "-", cublas.StatusNotSupported.Description())
	// Output: CUBLAS_STATUS_NOT_SUPPORTED - the requested functionality (type or mode combination) is not supported
}
