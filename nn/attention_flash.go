package nn

import (
	"github.com/gocu-dev/gocu"
	"github.com/gocu-dev/gocu/array"
	"github.com/gocu-dev/gocu/internal/attn"
)

// The Go-written flash-attention kernels of internal/attn run bf16
// attention with head dimension 64 or 128 on a GPU. The simulator runs
// them too, but far slower than the composed operations on the CPU.
func init() {
	useFlash(flashKernels{
		forward:  attn.Forward,
		backward: attn.Backward,
		dt:       array.BFloat16,
		dims:     []int{64, 128},
		device:   (*gocu.Device).IsGPU,
		inPlace:  attn.CheckView,
	})
}
