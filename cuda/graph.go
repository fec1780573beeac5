package cuda

import (
	"fmt"
	"runtime"
	"sync/atomic"
	"unsafe"
)

// CaptureMode says which CUDA calls other code may make while a stream
// captures (CUstreamCaptureMode). Goroutines move between OS threads, so
// CaptureRelaxed, the zero value, is the mode to use from Go; the others
// require the capture to begin and end on one OS thread (see
// runtime.LockOSThread).
type CaptureMode int

const (
	CaptureRelaxed     CaptureMode = iota // no restrictions (CU_STREAM_CAPTURE_MODE_RELAXED)
	CaptureThreadLocal                    // the capturing thread may not make unsafe calls
	CaptureGlobal                         // no thread may make unsafe calls
)

func (m CaptureMode) cu() uintptr {
	switch m {
	case CaptureGlobal:
		return 0
	case CaptureThreadLocal:
		return 1
	default:
		return 2
	}
}

// BeginCapture starts recording the work queued on s into a graph instead
// of running it. The default stream cannot capture; use a stream made with
// NewStream(StreamNonBlocking) (a blocking stream's capture is invalidated
// by any use of the default stream meanwhile). Memory a graph uses must stay
// allocated for as long as the graph is replayed.
func (s *Stream) BeginCapture(mode CaptureMode) error {
	if err := s.live(); err != nil {
		return err
	}
	if s.handle == 0 {
		return fmt.Errorf("cuda: the default stream cannot capture a graph; capture on a stream from NewStream: %w", ErrCaptureUnsupported)
	}
	if !s.capturing.CompareAndSwap(false, true) {
		return fmt.Errorf("cuda: BeginCapture: the stream is already capturing: %w", ErrInvalidValue)
	}
	s.dev.alloc.setCapturing(s.handle, true)
	if r := s.dev.call(s.dev.api.cuStreamBeginCapture, s.handle, mode.cu()); r != 0 {
		s.dev.alloc.setCapturing(s.handle, false)
		s.capturing.Store(false)
		return s.dev.err("cuStreamBeginCapture_v2", r)
	}
	return nil
}

// EndCapture stops capturing and returns the graph of the captured work.
func (s *Stream) EndCapture() (*Graph, error) {
	if !s.capturing.Load() {
		return nil, fmt.Errorf("cuda: EndCapture: the stream is not capturing: %w", ErrInvalidValue)
	}
	g := &Graph{dev: s.dev}
	r := s.dev.call(s.dev.api.cuStreamEndCapture, s.handle, uintptr(unsafe.Pointer(&g.handle)))
	s.dev.alloc.setCapturing(s.handle, false)
	s.capturing.Store(false)
	if r != 0 {
		return nil, s.dev.err("cuStreamEndCapture", r)
	}
	return g, nil
}

// Capture records the work fn queues on s into a graph. The capture ends
// even when fn fails.
func (s *Stream) Capture(mode CaptureMode, fn func(s *Stream) error) (*Graph, error) {
	if err := s.BeginCapture(mode); err != nil {
		return nil, err
	}
	ferr := fn(s)
	g, err := s.EndCapture()
	if ferr != nil {
		if g != nil {
			_ = g.Close()
		}
		return nil, ferr
	}
	return g, err
}

// Graph is captured GPU work, to instantiate and replay.
type Graph struct {
	dev    *Device
	handle uintptr
	closed atomic.Bool
}

// Nodes returns the number of nodes (kernels, copies, ...) in the graph.
func (g *Graph) Nodes() (int, error) {
	if g.closed.Load() {
		return 0, fmt.Errorf("cuda: graph: %w", ErrClosed)
	}
	var n uint64
	r := g.dev.call(g.dev.api.cuGraphGetNodes, g.handle, 0, uintptr(unsafe.Pointer(&n)))
	return int(n), g.dev.err("cuGraphGetNodes", r)
}

// Instantiate turns the graph into an executable graph.
func (g *Graph) Instantiate() (*GraphExec, error) {
	if g.closed.Load() {
		return nil, fmt.Errorf("cuda: graph: %w", ErrClosed)
	}
	x := &GraphExec{dev: g.dev}
	r := g.dev.call(g.dev.api.cuGraphInstantiate, uintptr(unsafe.Pointer(&x.handle)), g.handle, 0)
	if r != 0 {
		return nil, g.dev.err("cuGraphInstantiateWithFlags", r)
	}
	return x, nil
}

// Close destroys the graph (executable graphs made from it stay valid).
func (g *Graph) Close() error {
	if !g.closed.CompareAndSwap(false, true) {
		return fmt.Errorf("cuda: graph closed twice: %w", ErrClosed)
	}
	return g.dev.err("cuGraphDestroy", g.dev.call(g.dev.api.cuGraphDestroy, g.handle))
}

// GraphExec is an instantiated graph: Launch replays all its work with one
// call.
type GraphExec struct {
	dev    *Device
	handle uintptr
	closed atomic.Bool
}

// Launch queues a replay of the graph on stream s (nil for the default
// stream). In launch-blocking mode it waits for the replay.
func (x *GraphExec) Launch(s *Stream) error {
	if x.closed.Load() {
		return fmt.Errorf("cuda: graph exec: %w", ErrClosed)
	}
	d := x.dev
	s, err := d.streamOrDefault(s)
	if err != nil {
		return err
	}
	fr := getFrame()
	if fr == nil {
		return fmt.Errorf("cuda: graph launch: cannot map memory for the call")
	}
	op := traceOp(GraphOp, d, s, 0)
	fr.args[0], fr.args[1] = x.handle, s.handle
	runtime.LockOSThread()
	r, bound := fr.ctxCall(d.api, d.ctx, d.api.cuGraphLaunch)
	fn := "cuCtxSetCurrent"
	if bound {
		fn = "cuGraphLaunch"
		if r == 0 && launchBlocking.Load() && !s.capturing.Load() {
			fn = "cuStreamSynchronize after the graph launch (GOCU_LAUNCH_BLOCKING)"
			fr.args[0] = s.handle
			r = fr.call(d.api.cuStreamSynchronize, 1)
		}
	}
	runtime.UnlockOSThread()
	op.end(r)
	putFrame(fr)
	return d.err(fn, r)
}

// Upload prepares the graph's resources on the device ahead of the first
// Launch, on stream s.
func (x *GraphExec) Upload(s *Stream) error {
	d := x.dev
	if d.api.cuGraphUpload == 0 {
		return fmt.Errorf("cuda: the driver lacks cuGraphUpload: %w", ErrNotSupported)
	}
	s, err := d.streamOrDefault(s)
	if err != nil {
		return err
	}
	return d.err("cuGraphUpload", d.call(d.api.cuGraphUpload, x.handle, s.handle))
}

// graphUpdateResults names CUgraphExecUpdateResult values (cuda.h).
var graphUpdateResults = []string{
	"CU_GRAPH_EXEC_UPDATE_SUCCESS",
	"CU_GRAPH_EXEC_UPDATE_ERROR",
	"CU_GRAPH_EXEC_UPDATE_ERROR_TOPOLOGY_CHANGED",
	"CU_GRAPH_EXEC_UPDATE_ERROR_NODE_TYPE_CHANGED",
	"CU_GRAPH_EXEC_UPDATE_ERROR_FUNCTION_CHANGED",
	"CU_GRAPH_EXEC_UPDATE_ERROR_PARAMETERS_CHANGED",
	"CU_GRAPH_EXEC_UPDATE_ERROR_NOT_SUPPORTED",
	"CU_GRAPH_EXEC_UPDATE_ERROR_UNSUPPORTED_FUNCTION_CHANGE",
	"CU_GRAPH_EXEC_UPDATE_ERROR_ATTRIBUTES_CHANGED",
}

// Update replaces the parameters of the executable graph with those of g,
// which must have the same topology (for instance the same kernels
// captured with other arguments). It is cheaper than a new Instantiate.
func (x *GraphExec) Update(g *Graph) error {
	d := x.dev
	if d.api.cuGraphExecUpdate == 0 {
		return fmt.Errorf("cuda: the driver lacks cuGraphExecUpdate_v2: %w", ErrNotSupported)
	}
	if x.closed.Load() || g.closed.Load() {
		return fmt.Errorf("cuda: graph update: %w", ErrClosed)
	}
	// CUgraphExecUpdateResultInfo: { CUgraphExecUpdateResult result; CUgraphNode errorNode; CUgraphNode errorFromNode; }
	var info struct {
		result        int32
		_             int32
		errorNode     uintptr
		errorFromNode uintptr
	}
	r := d.call(d.api.cuGraphExecUpdate, x.handle, g.handle, uintptr(unsafe.Pointer(&info)))
	if r != 0 {
		err := d.err("cuGraphExecUpdate_v2", r)
		if e, ok := err.(*Error); ok && info.result > 0 && int(info.result) < len(graphUpdateResults) {
			e.Msg += " (" + graphUpdateResults[info.result] + ")"
		}
		return err
	}
	return nil
}

// Close destroys the executable graph.
func (x *GraphExec) Close() error {
	if !x.closed.CompareAndSwap(false, true) {
		return fmt.Errorf("cuda: graph exec closed twice: %w", ErrClosed)
	}
	return x.dev.err("cuGraphExecDestroy", x.dev.call(x.dev.api.cuGraphExecDestroy, x.handle))
}
