package gen

import (
	"testing"

	"github.com/gocu-dev/gocu/kernel"
)

// gpuLaunch runs a kernel of a translated CUDA source on the GPU. Phase 2
// of the translator (the launchers, which need packages cuda, nvrtc and the
// root package) sets it from a test file of this package, so that the
// tests below run on the GPU machine; until then they skip.
//
// It must compile src with NVRTC for the present GPU (with the options in
// opts, such as "--fmad=false" or "-DGOCU_DEBUG"), launch entry on grid x
// block with dynShared bytes of dynamic shared memory and args packed as
// package meta documents (a slice is a device copy of its elements plus its
// length, scalars and structs their Go bytes), copy every slice back and
// return them in argument order (nil for non-slices). When opts contain
// -DGOCU_DEBUG it zeroes gocu_err before the launch and returns its 16
// words afterwards.
var gpuLaunch func(src, entry string, opts []string, grid, block kernel.Dim3, dynShared int, args []any) (out []any, errBuf []uint64, err error)

func needGPU(t *testing.T) {
	t.Helper()
	if gpuLaunch == nil {
		t.Skip("no GPU runner: gpuLaunch is set by the launcher phase (package gen's GPU test file) and needs a CUDA driver")
	}
}
