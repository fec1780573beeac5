// Softmax-cuda is the softmax example with the kernel written in CUDA C
// instead of Go: gocu.Compile compiles it with NVRTC for the GPU at hand,
// and Kernel.Launch takes the arrays of the chain directly (an array
// implements gocu.Arg: the kernel receives a pointer to its first
// element). The launch goes on the device's stream, after the array
// operations that produce the logits and before those that read the
// probabilities; nothing waits in between.
//
// CUDA C needs a GPU; without one the program says so and exits.
package main

import (
	"errors"
	"flag"
	"fmt"
	"log"
	"math"

	"github.com/gocu-dev/gocu"
	"github.com/gocu-dev/gocu/array"
)

// softmaxSrc is the lecture's row-wise softmax: one block of 256 threads
// per row, tree reductions in shared memory for the maximum and the sum.
const softmaxSrc = `
#define THREADS 256
extern "C" __global__ void __launch_bounds__(THREADS) softmax_rows(const float* x, float* y, int rows, int cols) {
	__shared__ float part[THREADS];
	int row = blockIdx.x, tid = threadIdx.x;
	if (row >= rows || cols <= 0) return;
	const float* xr = x + (long long)row * cols;
	float* yr = y + (long long)row * cols;
	float m = xr[0];
	for (int j = tid; j < cols; j += THREADS) m = fmaxf(m, xr[j]);
	part[tid] = m;
	__syncthreads();
	for (int s = THREADS / 2; s > 0; s /= 2) {
		if (tid < s) part[tid] = fmaxf(part[tid], part[tid + s]);
		__syncthreads();
	}
	m = part[0];
	if (isinf(m) && m < 0) m = 0;
	__syncthreads();
	float sum = 0;
	for (int j = tid; j < cols; j += THREADS) sum += expf(xr[j] - m);
	part[tid] = sum;
	__syncthreads();
	for (int s = THREADS / 2; s > 0; s /= 2) {
		if (tid < s) part[tid] += part[tid + s];
		__syncthreads();
	}
	float inv = 1.0f / part[0];
	for (int j = tid; j < cols; j += THREADS) yr[j] = expf(xr[j] - m) * inv;
}
`

func main() {
	rows := flag.Int("rows", 8192, "rows of the logits")
	cols := flag.Int("cols", 1000, "columns (classes)")
	flag.Parse()
	dev, err := gocu.Default()
	if err != nil {
		log.Fatal(err)
	}
	rep, err := run(dev, *rows, *cols, 1)
	if errors.Is(err, gocu.ErrSimulatorCUDA) {
		fmt.Printf("%v: CUDA C needs a GPU (%v); examples/softmax runs the same kernel written in Go on the CPU\n", dev, err)
		return
	}
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("softmax of %dx%d logits on %v, CUDA C kernel: max |kernel - array.Softmax| = %.2g, mean entropy %.4f\n",
		*rows, *cols, dev, rep.maxDiff, rep.entropy)
}

type report struct {
	probs, logits []float32
	maxDiff       float64
	entropy       float64
}

// run computes softmax(1.5 x·w) with the CUDA C kernel inside an array
// chain on dev and checks it against array.Softmax.
func run(dev *gocu.Device, rows, cols int, seed uint64) (*report, error) {
	mod, err := dev.Compile(softmaxSrc, gocu.Name("softmax.cu"))
	if err != nil {
		return nil, err
	}
	k, err := mod.Kernel("softmax_rows")
	if err != nil {
		return nil, err
	}
	arrays := array.On(dev)
	const depth = 64
	x := arrays.NewRNG(seed).Normal(array.Float32, 0, 1, rows, depth)
	w := arrays.NewRNG(seed+1).Normal(array.Float32, 0, 0.3, depth, cols)
	logits := x.MatMul(w).Mul(1.5)                                     // queued array operations
	probs := arrays.Full(array.Float32, math.NaN(), rows, cols).Eval() // NaN: unwritten elements show
	cfg := gocu.Config{Grid: gocu.Dim3{X: int32(rows)}, Block: gocu.Dim3{X: 256}}
	if err := k.Launch(cfg, logits, probs, int32(rows), int32(cols)); err != nil {
		return nil, err
	}
	entropy := probs.Mul(probs.Log()).Sum(1).Neg().Mean() // the chain goes on
	r := &report{}
	if r.entropy, err = entropy.Item(); err != nil { // the first wait for the GPU
		return nil, err
	}
	if r.maxDiff, err = probs.Sub(logits.Softmax(1)).Abs().Max().Item(); err != nil {
		return nil, err
	}
	if r.probs, err = probs.Float32s(); err != nil {
		return nil, err
	}
	r.logits, err = logits.Float32s()
	return r, err
}
