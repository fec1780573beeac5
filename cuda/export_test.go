package cuda

import (
	"runtime"
	"testing"

	"github.com/ebitengine/purego"
)

// fakeAPI returns driver entry points that are libc and libm functions, so that the
// launch path can run on a machine without a GPU: fegetround takes any
// arguments and returns 0 (success), labs returns its first argument (so a
// call whose first argument is N fails with CUresult N).
func fakeAPI(t testing.TB) *api {
	if runtime.GOOS != "linux" {
		t.Skip("the fake driver uses glibc")
	}
	h, err := purego.Dlopen("libc.so.6", purego.RTLD_NOW)
	if err != nil {
		t.Skipf("no libc to stand in for the driver: %v", err)
	}
	echo, _ := purego.Dlsym(h, "labs")
	hm, err := purego.Dlopen("libm.so.6", purego.RTLD_NOW)
	if err != nil {
		t.Skipf("no libm to stand in for the driver: %v", err)
	}
	ok, _ := purego.Dlsym(hm, "fegetround") // returns FE_TONEAREST, 0, without a system call
	if ok == 0 || echo == 0 {
		t.Skip("libc lacks labs or libm lacks fegetround")
	}
	a := &api{}
	for _, s := range a.symbols() {
		*s.dst = ok
	}
	a.cuGetErrorName, a.cuGetErrorString = 0, 0 // describe errors from the static table
	a.cuStreamQuery = echo
	return a
}

// fakeProps is an H100's launch limits.
var fakeProps = Props{
	Name: "fake H100", Major: 9, Minor: 0, Multiprocessors: 132,
	MaxThreadsPerBlock: 1024, MaxBlockDim: [3]int{1024, 1024, 64}, MaxGridDim: [3]int{1<<31 - 1, 65535, 65535},
	SharedMemPerBlock: 48 << 10, SharedMemPerBlockOptin: 227 << 10, WarpSize: 32,
}

// FakeFunction returns a kernel on a fake device whose driver calls all
// succeed; with failWith set, cuLaunchKernel returns that CUresult.
func FakeFunction(t testing.TB, name string, failWith Result) *Function {
	a := fakeAPI(t)
	handle := uintptr(0xf00)
	if failWith != 0 {
		h, _ := purego.Dlopen("libc.so.6", purego.RTLD_NOW)
		a.cuLaunchKernel, _ = purego.Dlsym(h, "labs")
		handle = uintptr(failWith) // labs(f.handle) is the result
	}
	d := &Device{api: a, ordinal: 7, ctx: 0xc0c0, props: fakeProps}
	d.stream = &Stream{dev: d}
	d.alloc = newAllocator(newFakeBackendForExport(), true, 0)
	m := &Module{dev: d, funcs: map[string]*Function{}}
	f := &Function{mod: m, dev: d, handle: handle, name: name, maxThreads: 1024, numRegs: 16}
	f.maxDynShared.Store(48 << 10)
	return f
}

func newFakeBackendForExport() backend { return newFake(1 << 40) }

// FakeMemory returns device memory of the fake device (a fake allocation).
func FakeMemory(f *Function, n int) *Memory {
	m, err := f.dev.Alloc(n)
	if err != nil {
		panic(err)
	}
	return m
}
