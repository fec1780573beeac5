package main

import "github.com/gocu-dev/gocu/kernel"

//go:generate go tool gocu-gen

// Threads is the block size SoftmaxRows is written for.
const Threads = 256

// SoftmaxRows computes y = softmax(x) along each row of a rows×cols
// row-major matrix, the lecture way: one block of Threads threads per row;
// each thread walks its share of the row, the block combines the threads'
// values in shared memory by a tree reduction (first the maximum, then the
// sum of exp(x - max)), and each thread writes its elements. Subtracting the
// row's maximum keeps exp from overflowing; a row whose maximum is -Inf (all
// -Inf) uses 0 instead, as package array does.
//
//gocu:kernel
//gocu:launch_bounds 256
func SoftmaxRows(t *kernel.Thread, x, y []float32, rows, cols int32) {
	row := t.BlockIdx.X
	if row >= rows || cols <= 0 {
		return // the whole block leaves together: no barrier is skipped
	}
	tid := t.ThreadIdx.X
	base := int(row) * int(cols)
	part := kernel.Shared[[Threads]float32](t)

	// The row's maximum.
	m := x[base]
	for j := tid; j < cols; j += Threads {
		m = max(m, x[base+int(j)])
	}
	part[tid] = m
	t.SyncThreads()
	for s := int32(Threads / 2); s > 0; s /= 2 {
		if tid < s {
			part[tid] = max(part[tid], part[tid+s])
		}
		t.SyncThreads()
	}
	m = part[0]
	if kernel.IsInf(m) && m < 0 {
		m = 0
	}
	t.SyncThreads() // everyone has read part[0] before it is reused

	// The sum of exp(x - max).
	var sum float32
	for j := tid; j < cols; j += Threads {
		sum += kernel.Exp(x[base+int(j)] - m)
	}
	part[tid] = sum
	t.SyncThreads()
	for s := int32(Threads / 2); s > 0; s /= 2 {
		if tid < s {
			part[tid] += part[tid+s]
		}
		t.SyncThreads()
	}
	inv := 1 / part[0]

	for j := tid; j < cols; j += Threads {
		y[base+int(j)] = kernel.Exp(x[base+int(j)]-m) * inv
	}
}
