package cpu

import (
	"fmt"
	"math"

	"github.com/gocu-dev/gocu/array/internal/backend"
	"github.com/gocu-dev/gocu/internal/hostmem"
)

// memoryLimit is what the machine can give the process, in bytes (0 where
// it cannot be read): see hostmem.Limit.
var memoryLimit = hostmem.Limit

// MemoryLimit reports the most memory the machine can give the process:
// on Linux the physical memory, or the cgroup's memory.max when that is
// lower; 0 elsewhere (then only int overflow bounds an allocation).
func MemoryLimit() int64 { return memoryLimit() }

// CheckAlloc refuses an allocation that no machine, or not this one, can
// give: more bytes than an int counts, or more than MemoryLimit. Go's
// runtime treats a failed mmap as a fatal error, not a panic, so a request
// that cannot succeed must be refused before make is called.
func CheckAlloc(dt backend.DType, n int) error {
	sz := dt.Size()
	if n > math.MaxInt/sz {
		return fmt.Errorf("%w: cpu: %d elements of %v overflow an int's byte count", backend.ErrOutOfMemory, n, dt)
	}
	bytes := int64(n) * int64(sz)
	if mem := memoryLimit(); mem > 0 && bytes > mem {
		return fmt.Errorf("%w: cpu: %d bytes (%d × %v) requested, more than the machine can give (%d bytes)",
			backend.ErrOutOfMemory, bytes, n, dt, mem)
	}
	return nil
}
