package hostmem

import (
	"fmt"
	"math"
	"sync"
)

var limit = sync.OnceValue(readMemoryLimit)

// Limit reports the most memory the machine can give the process, in
// bytes: on Linux the physical memory, or the cgroup's memory.max when
// that is lower; 0 where it cannot be read (then only int overflow bounds
// an allocation).
func Limit() int64 { return limit() }

// Check refuses an allocation of n elements of size bytes each that no
// machine, or not this one, can give: more bytes than an int counts, or
// more than Limit. what names the element type in the error.
func Check(n, size int, what string) error {
	if n < 0 || size <= 0 || n > math.MaxInt/size {
		return fmt.Errorf("%d elements of %s overflow an int's byte count", n, what)
	}
	bytes := int64(n) * int64(size)
	if mem := Limit(); mem > 0 && bytes > mem {
		return fmt.Errorf("%d bytes (%d × %s) requested, more than the machine can give (%d bytes)", bytes, n, what, mem)
	}
	return nil
}
