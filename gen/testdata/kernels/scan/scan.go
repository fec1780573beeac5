// Package scan holds a Blelloch exclusive prefix sum of one block.
package scan

import "github.com/gocu-dev/gocu/kernel"

// N is the number of elements one block scans (two per thread).
const N = 512

// Blelloch scans x into y: y[i] = x[0] + ... + x[i-1]. Launch one block of
// N/2 threads per N elements.
//
//gocu:kernel
func Blelloch(t *kernel.Thread, x, y []int32) {
	tmp := kernel.Shared[[N]int32](t)
	tid := int(t.ThreadIdx.X)
	base := int(t.BlockIdx.X) * N
	tmp[2*tid] = get(x, base+2*tid)
	tmp[2*tid+1] = get(x, base+2*tid+1)
	offset := 1
	// Up-sweep.
	for d := N >> 1; d > 0; d >>= 1 {
		t.SyncThreads()
		if tid < d {
			ai := offset*(2*tid+1) - 1
			bi := offset*(2*tid+2) - 1
			tmp[bi] += tmp[ai]
		}
		offset *= 2
	}
	if tid == 0 {
		tmp[N-1] = 0
	}
	// Down-sweep.
	for d := 1; d < N; d *= 2 {
		offset >>= 1
		t.SyncThreads()
		if tid < d {
			ai := offset*(2*tid+1) - 1
			bi := offset*(2*tid+2) - 1
			tmp[ai], tmp[bi] = tmp[bi], tmp[bi]+tmp[ai]
		}
	}
	t.SyncThreads()
	if i := base + 2*tid; i < len(y) {
		y[i] = tmp[2*tid]
	}
	if i := base + 2*tid + 1; i < len(y) {
		y[i] = tmp[2*tid+1]
	}
}

func get(x []int32, i int) int32 {
	if i < len(x) {
		return x[i]
	}
	return 0
}
