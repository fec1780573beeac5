// Package hist computes a 256-bin histogram privatised in shared memory.
package hist

import "github.com/gocu-dev/gocu/kernel"

// Bins is the number of histogram bins.
const Bins = 256

// Histogram counts the bytes of data into hist (Bins counters).
//
//gocu:kernel
func Histogram(t *kernel.Thread, data []uint8, hist []uint32) {
	local := kernel.Shared[[Bins]uint32](t)
	for i := t.ThreadIdx.X; i < Bins; i += t.BlockDim.X {
		local[i] = 0
	}
	t.SyncThreads()
	for i := int(t.Index()); i < len(data); i += int(t.Stride()) {
		kernel.AtomicAdd(&local[data[i]], 1)
	}
	t.SyncThreads()
	for i := t.ThreadIdx.X; i < Bins; i += t.BlockDim.X {
		if c := local[i]; c != 0 {
			kernel.AtomicAdd(&hist[i], c)
		}
	}
}

// Stats are per-bin statistics, matching a C struct field for field.
type Stats struct {
	Count uint32
	Seen  bool
	Sum   int64
	Max   int32
}

// Accumulate records each value v of data in stats[v%len(stats)]; the
// count goes up by scale.Count when scale.Seen is set.
//
//gocu:kernel
func Accumulate(t *kernel.Thread, data []int32, stats []Stats, scale Stats) {
	i := t.Index()
	if int(i) >= len(data) {
		return
	}
	v := data[i]
	b := int(uint32(v) % uint32(len(stats)))
	if scale.Seen {
		kernel.AtomicAdd(&stats[b].Count, scale.Count)
	}
	kernel.AtomicAdd(&stats[b].Sum, int64(v))
	kernel.AtomicMax(&stats[b].Max, v)
}
