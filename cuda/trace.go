package cuda

import (
	"strconv"

	"github.com/gocu-dev/gocu/internal/hook"
)

// Tracing: a Tracer installed with SetTracer sees every kernel launch, graph
// replay, copy and memset this package queues, just before and just after
// it is queued, on the calling goroutine. Package prof installs one that
// brackets each operation with CUDA events. With no Tracer installed (the
// normal case) the cost is one atomic load per operation and nothing is
// allocated.

// OpKind says what a traced operation is.
type OpKind uint8

// The kinds of traced operation.
const (
	KernelOp   OpKind = iota + 1 // Function.Launch or Function.Call
	GraphOp                      // GraphExec.Launch
	CopyHtoDOp                   // host to device copy
	CopyDtoHOp                   // device to host copy
	CopyDtoDOp                   // device to device copy
	MemsetOp                     // MemsetD8/D16/D32
)

func (k OpKind) String() string {
	switch k {
	case KernelOp:
		return "kernel"
	case GraphOp:
		return "graph"
	case CopyHtoDOp:
		return "memcpy HtoD"
	case CopyDtoHOp:
		return "memcpy DtoH"
	case CopyDtoDOp:
		return "memcpy DtoD"
	case MemsetOp:
		return "memset"
	}
	return "OpKind(" + strconv.Itoa(int(k)) + ")"
}

// TraceOp is one operation as a Tracer sees it. The same *TraceOp is passed
// to Begin and End.
type TraceOp struct {
	Kind   OpKind
	Name   string // the kernel's name (KernelOp); "" otherwise
	Device *Device
	// Stream is the stream the operation is ordered on: the device's
	// default stream for the synchronous copies and memsets.
	Stream      *Stream
	Grid, Block Dim3 // KernelOp, with Y and Z of 0 made 1
	SharedMem   int  // KernelOp: dynamic shared memory per block
	Bytes       int  // copies and memsets
	// Sync is true for the synchronous copies and memsets (CopyHtoD,
	// MemsetD8, ...), which return only when the driver is done with the
	// host memory.
	Sync bool
	// Capturing is true when the stream is capturing a graph: the operation
	// is recorded into the graph and nothing runs now. A Tracer must not
	// queue work on a capturing stream.
	Capturing bool
	// Failed is set before End when the driver refused the operation.
	Failed bool
	// Data is the Tracer's own, from Begin to End.
	Data any

	t Tracer
}

// Tracer observes the operations queued through this package. Begin is
// called just before the operation is queued and End just after, on the
// calling goroutine, from any number of goroutines at once. Both may queue
// work on op.Stream (such as event records) unless op.Capturing is set; they
// must not wait for the device.
type Tracer interface {
	Begin(op *TraceOp)
	End(op *TraceOp)
}

var tracer hook.Slot[Tracer]

// SetTracer installs t as the process's tracer (nil removes it) and returns
// the one it replaces. Operations already between Begin and End finish with
// the tracer they began with.
func SetTracer(t Tracer) Tracer { return tracer.Set(t) }

// traceKernel begins tracing a launch; it returns nil, at the cost of one
// atomic load, when no tracer is installed.
func traceKernel(f *Function, grid, block Dim3, shared int, s *Stream) *TraceOp {
	if !tracer.Active() {
		return nil
	}
	return beginKernel(f, grid, block, shared, s)
}

func beginKernel(f *Function, grid, block Dim3, shared int, s *Stream) *TraceOp {
	return begin(&TraceOp{Kind: KernelOp, Name: f.name, Device: f.dev, Stream: s, Grid: grid, Block: block,
		SharedMem: shared, Capturing: s.capturing.Load()})
}

// traceOp begins tracing a graph launch, copy or memset of n bytes on s
// (nil for the device's default stream, synchronously).
func traceOp(kind OpKind, d *Device, s *Stream, n int) *TraceOp {
	if !tracer.Active() {
		return nil
	}
	return beginOp(kind, d, s, n)
}

func beginOp(kind OpKind, d *Device, s *Stream, n int) *TraceOp {
	op := &TraceOp{Kind: kind, Device: d, Stream: s, Bytes: n}
	if s == nil {
		op.Stream, op.Sync = d.stream, kind != GraphOp
	}
	op.Capturing = op.Stream.capturing.Load()
	return begin(op)
}

func begin(op *TraceOp) *TraceOp {
	t, ok := tracer.Get()
	if !ok {
		return nil
	}
	op.t = t
	op.t.Begin(op)
	return op
}

// end ends tracing an operation whose driver call returned r; it does
// nothing for a nil op.
func (op *TraceOp) end(r Result) {
	if op != nil {
		op.Failed = r != 0
		op.t.End(op)
	}
}
