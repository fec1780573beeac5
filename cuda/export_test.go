package cuda

import (
	"testing"

	"github.com/gocu-dev/gocu/internal/dynlib"
)

// fakeAPI is fakeDriverAPI for tests, which skip without glibc.
func fakeAPI(t testing.TB) *api {
	a, err := fakeDriverAPI()
	if err != nil {
		t.Skip(err)
	}
	return a
}

// FakeFunction returns a kernel on a fake device whose driver calls all
// succeed; with failWith set, cuLaunchKernel returns that CUresult.
func FakeFunction(t testing.TB, name string, failWith Result) *Function {
	a := fakeAPI(t)
	handle := uintptr(0xf00)
	if failWith != 0 {
		libc, err := dynlib.OpenFile("libc.so.6")
		if err != nil {
			t.Fatal(err)
		}
		a.cuLaunchKernel, _ = libc.Sym("labs")
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
