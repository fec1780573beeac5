package main

//go:generate go tool gocu-gen

import (
	"fmt"

	"github.com/gocu-dev/gocu/kernel"
)

// mask is the convolution's mask: a package-level array of constants,
// which gocu gen puts in the GPU's constant memory, where every thread of
// a warp reads the same weight in one access.
var mask = [5]float32{0.0625, 0.25, 0.375, 0.25, 0.0625}

// Conv1D convolves x with mask: out[i] is the weighted sum of x[i-2..i+2],
// elements outside x counting as zero.
//
//gocu:kernel
func Conv1D(t *kernel.Thread, x, out []float32) {
	i := t.Index()
	n := int32(len(x))
	if i >= n {
		return
	}
	var sum float32
	for k, w := range mask {
		if j := i + int32(k) - int32(len(mask)/2); j >= 0 && j < n {
			sum += w * x[j]
		}
	}
	out[i] = sum
}

// Axpy computes y = a*x + y for float32 and float64 alike: gocu gen
// compiles one instance per type kernel.Float allows.
//
//gocu:kernel
func Axpy[T kernel.Float](t *kernel.Thread, a T, x, y []T) {
	if i := t.Index(); i < int32(len(x)) {
		y[i] += a * x[i]
	}
}

// Block is the number of threads of a block of BlockSums.
const Block = 256

// Partial holds a block's partial sums in shared memory.
type Partial [Block]float32

// Reduce adds up the partial sums in a tree, halving the number of
// working threads at every step; every thread of the block calls it, and
// thread 0 returns the total.
func (p *Partial) Reduce(t *kernel.Thread) float32 {
	i := t.ThreadIdx.X
	for step := int32(Block / 2); step > 0; step /= 2 {
		t.SyncThreads()
		if i < step {
			p[i] += p[i+step]
		}
	}
	return p[0]
}

// BlockSums adds up x block by block into sums and, to debug, prints the
// sum of every block from its first thread.
//
//gocu:kernel
func BlockSums(t *kernel.Thread, x, sums []float32) {
	p := kernel.Shared[Partial](t)
	i := t.Index()
	p[t.ThreadIdx.X] = 0
	if i < int32(len(x)) {
		p[t.ThreadIdx.X] = x[i]
	}
	sum := p.Reduce(t)
	if t.ThreadIdx.X == 0 {
		sums[t.BlockIdx.X] = sum
		fmt.Printf("block %d: sum %.2f\n", t.BlockIdx.X, sum)
	}
}
