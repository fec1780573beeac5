package lecture

import "github.com/gocu-dev/gocu/kernel"

// ScanThreads is the block size of ScanBlocks; each block scans a segment
// of 2*ScanThreads elements.
const ScanThreads = 256

// ScanBlocks writes the exclusive prefix sums of each 2*ScanThreads-element
// segment of x[0:n] to y, and the segment's total to sums[BlockIdx.X]. It is
// Blelloch's work-efficient scan in shared memory: an up-sweep builds a tree
// of partial sums in place, the root is cleared, and a down-sweep pushes the
// prefixes back down. A whole array is scanned by scanning the segment
// totals the same way and adding them back with ScanAdd.
//
//gocu:kernel
func ScanBlocks(t *kernel.Thread, x, y, sums []int32, n int32) {
	s := kernel.Shared[[2 * ScanThreads]int32](t)
	tid := t.ThreadIdx.X
	i0 := t.BlockIdx.X*2*ScanThreads + tid
	i1 := i0 + ScanThreads
	var v0, v1 int32
	if i0 < n {
		v0 = x[i0]
	}
	if i1 < n {
		v1 = x[i1]
	}
	s[tid] = v0
	s[tid+ScanThreads] = v1

	offset := int32(1)
	for d := int32(ScanThreads); d > 0; d /= 2 { // up-sweep
		t.SyncThreads()
		if tid < d {
			a, b := offset*(2*tid+1)-1, offset*(2*tid+2)-1
			s[b] += s[a]
		}
		offset *= 2
	}
	if tid == 0 {
		sums[t.BlockIdx.X] = s[2*ScanThreads-1]
		s[2*ScanThreads-1] = 0
	}
	for d := int32(1); d < 2*ScanThreads; d *= 2 { // down-sweep
		offset /= 2
		t.SyncThreads()
		if tid < d {
			a, b := offset*(2*tid+1)-1, offset*(2*tid+2)-1
			v := s[a]
			s[a] = s[b]
			s[b] += v
		}
	}
	t.SyncThreads()
	if i0 < n {
		y[i0] = s[tid]
	}
	if i1 < n {
		y[i1] = s[tid+ScanThreads]
	}
}

// ScanAdd adds to each element of y[0:n] the scanned total of the segments
// before its own, offsets[i/(2*ScanThreads)]: the second pass of a
// multi-block scan.
//
//gocu:kernel
func ScanAdd(t *kernel.Thread, y, offsets []int32, n int32) {
	i := t.Index()
	if i < n {
		y[i] += offsets[i/(2*ScanThreads)]
	}
}
