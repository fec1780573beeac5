package cuda

import (
	"runtime"
	"sync"
	"unsafe"

	"github.com/gocu-dev/gocu/internal/dynlib"
)

// A frame is scratch memory outside the Go heap for one driver call: the
// argument slice handed to purego, words the driver writes results into,
// and, for a launch, the kernel parameters (the void** array and the values
// it points to). Being off the heap, nothing in it moves or is collected
// while the driver reads it, and calls through it allocate nothing:
// dynlib.Call takes the argument slice as it is.
type frame struct {
	mem     []byte
	args    []uintptr // call arguments
	out     []uintptr // out-parameters
	blk     *ctxBlock // ctxCall's control block
	params  []uintptr // kernel parameter pointers
	vals    []byte    // kernel parameter values
	nparam  int
	nval    int
	cleanup runtime.Cleanup
}

// ctxBlock is what the ctxCall trampoline reads and writes: the context
// check's functions and context, the function to call and its arguments,
// and the results.
type ctxBlock struct {
	getCurrent, setCurrent, ctx, fn uintptr
	args                            uintptr // address of ctxCallArgs argument words
	cur                             uintptr // cuCtxGetCurrent's out-parameter
	r                               uintptr // the result of the last function called
	stage                           uintptr // which: 1 cuCtxGetCurrent, 2 cuCtxSetCurrent, 3 fn
}

const (
	frameArgs   = 16
	frameOut    = 8
	frameBlock  = 8 // words of the ctxBlock
	frameHead   = (frameArgs + frameOut + frameBlock) * 8
	frameSize   = 8 << 10 // 250 parameters, 6000 bytes of values
	ctxCallArgs = 12      // arguments ctxCall passes (the largest driver call has 11)
)

var framePool = sync.Pool{New: func() any {
	f, err := newFrame(frameSize)
	if err != nil {
		return nil
	}
	return f
}}

// getFrame returns a frame from the pool, or nil when no memory could be
// mapped.
func getFrame() *frame {
	f, _ := framePool.Get().(*frame)
	return f
}

func putFrame(f *frame) {
	if len(f.mem) == frameSize {
		framePool.Put(f)
	} else {
		f.free()
	}
}

func newFrame(size int) (*frame, error) {
	mem, err := mapMemory(size)
	if err != nil {
		return nil, err
	}
	base := unsafe.Pointer(&mem[0])
	f := &frame{mem: mem}
	f.args = unsafe.Slice((*uintptr)(base), frameArgs)
	f.out = unsafe.Slice((*uintptr)(unsafe.Add(base, frameArgs*8)), frameOut)
	f.blk = (*ctxBlock)(unsafe.Add(base, (frameArgs+frameOut)*8))
	np := (size - frameHead) / 4 / 8
	f.params = unsafe.Slice((*uintptr)(unsafe.Add(base, frameHead)), np)
	voff := (frameHead + np*8 + 15) &^ 15
	f.vals = mem[voff:]
	f.cleanup = runtime.AddCleanup(f, unmapMemory, mem)
	return f, nil
}

// free unmaps a frame that will not be reused.
func (f *frame) free() {
	f.cleanup.Stop()
	unmapMemory(f.mem)
	f.mem, f.args, f.out, f.blk, f.params, f.vals = nil, nil, nil, nil, nil, nil
}

// call calls fn with the first n argument slots.
func (f *frame) call(fn uintptr, n int) Result {
	return Result(dynlib.Call(fn, f.args[:n]...))
}

// ctxCall calls fn with the first ctxCallArgs argument slots after making
// ctx current on the calling OS thread, which the caller has locked. It
// reports whether the failure, if any, came from the context check rather
// than from fn. Where the trampoline exists (linux/amd64) the check and the
// call are one cgo call; elsewhere bind and call are two.
func (f *frame) ctxCall(a *api, ctx, fn uintptr) (r Result, bound bool) {
	if haveCtxTrampoline {
		b := f.blk
		b.getCurrent, b.setCurrent, b.ctx, b.fn = a.cuCtxGetCurrent, a.cuCtxSetCurrent, ctx, fn
		b.args = uintptr(unsafe.Pointer(&f.args[0]))
		b.cur, b.r, b.stage = 0, 0, 0
		ctxTrampoline(b)
		return Result(int32(b.r)), b.stage == 3
	}
	if r := f.bind(a, ctx); r != 0 {
		return r, false
	}
	return f.call(fn, ctxCallArgs), true
}

// bind makes ctx current on the calling OS thread, which the caller has
// locked. It checks first: a thread that already has ctx current (the
// common case once a thread has served a call) costs one cuCtxGetCurrent.
func (f *frame) bind(a *api, ctx uintptr) Result {
	f.out[0] = 0
	f.args[0] = uintptr(unsafe.Pointer(&f.out[0]))
	if r := f.call(a.cuCtxGetCurrent, 1); r != 0 {
		return r
	}
	if f.out[0] == ctx {
		return 0
	}
	f.args[0] = ctx
	return f.call(a.cuCtxSetCurrent, 1)
}
