package array

import (
	"fmt"
	"sync"

	"github.com/gocu-dev/gocu/array/internal/backend"
	"github.com/gocu-dev/gocu/array/internal/gpu"
)

// ErrCapture is wrapped by the error of an operation that a CUDA graph
// capture forbids: reading an array to the host (ToSlice, Item, String,
// ...), Sync, copying host data to the device (FromSlice, To), a second
// capture. It comes with ErrDevice.
var ErrCapture = backend.ErrCapture

// Graph is a captured sequence of array operations, replayed with one
// call, as torch.cuda.CUDAGraph ("reduce-overhead"): on a GPU, replaying
// costs one launch for the whole sequence instead of a host round of work
// and a launch per operation.
type Graph struct {
	dev    *Maker
	g      *gpu.Graph   // GPU
	fn     func() error // CPU and simulator: the function, run again
	mu     sync.Mutex
	closed bool
}

// Capture records the array operations fn queues on the device as a graph
// to replay; fn typically runs a whole training step (forward, backward,
// optimiser update) on arrays that stay in place between steps.
//
// On a GPU, Capture first runs fn once for real, which compiles the
// kernels and creates the handles it needs and sizes the memory pool,
// waits for it, then runs fn again while the device's stream records
// instead of running: after Capture returns, fn's work has happened once.
// Each Replay then does it again, with the same buffers. On the CPU and
// the simulator there is nothing to record: Capture runs fn once and
// Replay runs it again, so a program behaves the same on every device.
//
// The rules, as PyTorch's:
//   - Static shapes and buffers. A replay repeats exactly what was
//     recorded: the same kernels on the same memory, with the scalars of
//     the capture (learning rates, random seeds and counters: a random
//     draw in fn repeats its values on every replay). New inputs go in by
//     writing into the arrays fn read (Assign), and results come out in
//     the arrays fn wrote.
//   - No host reads or waits inside. Reading an array to the host, Sync
//     and copies from host memory fail during the capture with ErrCapture
//     before they reach the driver, so the capture and the device stay
//     usable; Capture then returns fn's error. Read after Capture, or
//     after Replay.
//   - Memory comes from the caching allocator and stays the graph's: every
//     buffer allocated or used during the capture is kept allocated until
//     the graph is closed, even when its array is closed or collected
//     meanwhile, so a replay never writes memory handed to someone else.
//   - Nothing else uses the device's arrays while Capture runs (another
//     goroutine's operations would be recorded too), and fn leaves no
//     pending expression it needs evaluated inside the graph: a lazy
//     result read later is computed then, outside it (Eval what fn must
//     compute).
func (m *Maker) Capture(fn func() error) (*Graph, error) {
	if err := m.check("Capture"); err != nil {
		return nil, err
	}
	if fn == nil {
		return nil, errorf("Capture", ErrValue, "nil function")
	}
	if m.gpu == nil {
		if err := fn(); err != nil {
			return nil, err
		}
		return &Graph{dev: m, fn: fn}, nil
	}
	if err := fn(); err != nil {
		return nil, fmt.Errorf("array: Capture: the warm-up run failed: %w", err)
	}
	if err := m.Sync(); err != nil {
		return nil, err
	}
	if err := m.gpu.BeginCapture(); err != nil {
		return nil, deviceErr("Capture", err)
	}
	ferr := fn()
	g, err := m.gpu.EndCapture(ferr != nil)
	if ferr != nil {
		return nil, fmt.Errorf("array: Capture: %w", ferr)
	}
	if err != nil {
		return nil, deviceErr("Capture", err)
	}
	return &Graph{dev: m, g: g}, nil
}

// Replay runs the captured operations again (on a GPU: one graph launch,
// queued without waiting).
func (g *Graph) Replay() error {
	if g == nil {
		return errorf("Replay", ErrValue, "nil graph")
	}
	g.mu.Lock()
	closed := g.closed
	g.mu.Unlock()
	if closed {
		return errorf("Replay", ErrClosed, "graph is closed")
	}
	if g.fn != nil {
		return g.fn()
	}
	return deviceErr("Replay", g.g.Launch())
}

// Nodes returns the number of operations (kernels, copies) the graph
// replays; on the CPU, 0.
func (g *Graph) Nodes() int {
	if g == nil || g.g == nil {
		return 0
	}
	return g.g.Nodes()
}

// Close releases the graph and the memory only it still holds. Replays
// already queued finish first (the memory is freed in stream order).
func (g *Graph) Close() error {
	if g == nil {
		return nil
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed {
		return nil
	}
	g.closed = true
	if g.g != nil {
		return deviceErr("Close", g.g.Close())
	}
	return nil
}
