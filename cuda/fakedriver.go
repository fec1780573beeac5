//go:build gocu_fakedriver

package cuda

import "sync"

// With -tags gocu_fakedriver the package exports a fake device, for
// benchmarks of the Go side of launches and allocations on machines
// without a GPU (package array's BenchmarkOverheadFakeGPU): every driver
// entry point is a libm function that returns at once, kernels do
// nothing, and memory is a range of addresses that nothing backs. It is
// no model of a GPU: nothing may read or write that memory.

// FakeDevice returns a device on the fake driver (an H100's limits), or
// why there cannot be one (it needs glibc).
func FakeDevice() (*Device, error) {
	a, err := fakeDriverAPI()
	if err != nil {
		return nil, err
	}
	a.cuStreamQuery = a.cuInit // every stream idle (the tests' fake echoes the handle)
	d := &Device{api: a, ordinal: 7, ctx: 0xc0c0, props: fakeProps}
	d.stream = &Stream{dev: d}
	d.alloc = newAllocator(&fakeMemory{next: 1 << 40}, true, 0)
	d.alloc.ordinal = d.ordinal
	return d, nil
}

// FakeStream returns a stream of a FakeDevice other than its default
// stream (which cannot capture graphs).
func (d *Device) FakeStream() *Stream { return &Stream{dev: d, handle: 0x5} }

// FakeFunction returns a kernel of a FakeDevice.
func (d *Device) FakeFunction(name string) *Function {
	m := &Module{dev: d, funcs: map[string]*Function{}}
	f := &Function{mod: m, dev: d, handle: 0xf00, name: name, maxThreads: 1024, numRegs: 16}
	f.maxDynShared.Store(48 << 10)
	return f
}

// fakeMemory hands out addresses and completes all work at once.
type fakeMemory struct {
	mu   sync.Mutex
	next uintptr
}

func (f *fakeMemory) malloc(size int64) (uintptr, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	p := f.next
	f.next += uintptr((size + 4095) &^ 4095)
	return p, nil
}

func (f *fakeMemory) free(uintptr) error              { return nil }
func (f *fakeMemory) record(uintptr) (uintptr, error) { return 1, nil }
func (f *fakeMemory) done(uintptr) (bool, error)      { return true, nil }
func (f *fakeMemory) release(uintptr)                 {}
func (f *fakeMemory) sync() error                     { return nil }
