package cublas

// A minimal CUDA driver binding for the GPU tests: cuBLAS needs device
// memory and a current context, and package cuda must not be imported here.

import (
	"errors"
	"runtime"
	"strconv"
	"sync"
	"testing"
	"unsafe"

	"github.com/gocu-dev/gocu/internal/dynlib"
	"github.com/gocu-dev/gocu/internal/gputest"
	"github.com/gocu-dev/gocu/internal/units"
)

type gpu struct {
	ctx                                       uintptr
	ctxSetCurrent, ctxSynchronize             uintptr
	memAlloc, memFree, memcpyHtoD, memcpyDtoH uintptr
	streamCreate, streamDestroy               uintptr
}

var (
	gpuOnce sync.Once
	theGPU  *gpu
	gpuErr  string
)

func openGPU() (*gpu, string) {
	dl, err := dynlib.Open(dynlib.Spec{What: "libcuda (CUDA driver)", Env: "GOCU_CUDA_LIB",
		Sonames: []string{"libcuda.so.1"}, Dirs: []string{"/usr/local/nvidia/lib64", "/usr/lib/x86_64-linux-gnu", "/usr/lib64"}})
	if err != nil {
		return nil, units.OneLine(err)
	}
	g := &gpu{}
	var cuInit, deviceGet, retain uintptr
	for name, p := range map[string]*uintptr{
		"cuInit": &cuInit, "cuDeviceGet": &deviceGet, "cuDevicePrimaryCtxRetain": &retain,
		"cuCtxSetCurrent": &g.ctxSetCurrent, "cuCtxSynchronize": &g.ctxSynchronize,
		"cuMemAlloc_v2": &g.memAlloc, "cuMemFree_v2": &g.memFree,
		"cuMemcpyHtoD_v2": &g.memcpyHtoD, "cuMemcpyDtoH_v2": &g.memcpyDtoH,
		"cuStreamCreate": &g.streamCreate, "cuStreamDestroy_v2": &g.streamDestroy,
	} {
		if *p, err = dl.Sym(name); err != nil {
			return nil, err.Error()
		}
	}
	if r := Status(dynlib.Call(cuInit, 0)); r != 0 {
		return nil, "cuInit failed with CUresult " + strconv.Itoa(int(r)) + " (100 is no device)"
	}
	var dev int32
	if r := Status(dynlib.Call(deviceGet, uintptr(unsafe.Pointer(&dev)), 0)); r != 0 {
		return nil, "cuDeviceGet: CUresult " + strconv.Itoa(int(r))
	}
	if r := Status(dynlib.Call(retain, uintptr(unsafe.Pointer(&g.ctx)), uintptr(dev))); r != 0 {
		return nil, "cuDevicePrimaryCtxRetain: CUresult " + strconv.Itoa(int(r))
	}
	return g, ""
}

// needGPU skips without cuBLAS or a GPU; otherwise it locks the test's
// goroutine to its thread and makes device 0's primary context current.
func needGPU(t testing.TB) *gpu {
	t.Helper()
	gputest.Need(t, Load())
	gpuOnce.Do(func() { theGPU, gpuErr = openGPU() })
	if theGPU == nil {
		gputest.Need(t, errors.New(gpuErr))
	}
	runtime.LockOSThread()
	t.Cleanup(runtime.UnlockOSThread)
	theGPU.check(t, "cuCtxSetCurrent", Status(dynlib.Call(theGPU.ctxSetCurrent, theGPU.ctx)))
	return theGPU
}

func (g *gpu) check(t testing.TB, fn string, r Status) {
	t.Helper()
	if r != 0 {
		t.Fatalf("%s failed: CUresult %d", fn, int32(r))
	}
}

func (g *gpu) sync(t testing.TB) {
	g.check(t, "cuCtxSynchronize", Status(dynlib.Call(g.ctxSynchronize)))
}

// onThread runs f on a locked thread with the context current: cleanups may
// run on another goroutine than the test body (benchmarks do).
func (g *gpu) onThread(f func()) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	dynlib.Call(g.ctxSetCurrent, g.ctx)
	f()
}

// upload copies host to a new device buffer, freed when the test ends.
func upload[T any](t testing.TB, g *gpu, host []T) uint64 {
	t.Helper()
	n := uintptr(len(host)) * unsafe.Sizeof(host[0])
	var p uint64
	g.check(t, "cuMemAlloc_v2", Status(dynlib.Call(g.memAlloc, uintptr(unsafe.Pointer(&p)), n)))
	t.Cleanup(func() { g.onThread(func() { dynlib.Call(g.memFree, uintptr(p)) }) })
	g.check(t, "cuMemcpyHtoD_v2", Status(dynlib.Call(g.memcpyHtoD, uintptr(p), uintptr(unsafe.Pointer(&host[0])), n)))
	// A copy from pageable memory may still be in flight when it returns,
	// and work on a non-blocking stream would not wait for it.
	g.sync(t)
	return p
}

// download waits for the GPU and copies n elements back.
func download[T any](t testing.TB, g *gpu, p uint64, n int) []T {
	t.Helper()
	g.sync(t)
	out := make([]T, n)
	g.check(t, "cuMemcpyDtoH_v2", Status(dynlib.Call(g.memcpyDtoH, uintptr(unsafe.Pointer(&out[0])), uintptr(p), uintptr(n)*unsafe.Sizeof(out[0]))))
	return out
}

func (g *gpu) stream(t testing.TB) uintptr {
	var s uintptr
	g.check(t, "cuStreamCreate", Status(dynlib.Call(g.streamCreate, uintptr(unsafe.Pointer(&s)), 1 /* CU_STREAM_NON_BLOCKING */)))
	t.Cleanup(func() { g.onThread(func() { dynlib.Call(g.streamDestroy, s) }) })
	return s
}

func newHandle(t testing.TB) *Handle {
	t.Helper()
	h, err := Create()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		theGPU.onThread(func() {
			if err := h.Destroy(); err != nil {
				t.Error(err)
			}
		})
	})
	return h
}
