package gpu

import (
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/gocu-dev/gocu/array/internal/backend"
	"github.com/gocu-dev/gocu/cuda"
)

// CUDA graphs of array operations. While the backend's stream captures,
// the work it queues is recorded instead of run; the graph then replays it
// with the same buffers. The backend keeps those buffers for the graph:
// every buffer allocated or used during the capture stays allocated until
// every graph that holds it is closed, even when its array is closed or
// collected meanwhile (its free is deferred), so that a replay never
// writes memory that was handed to someone else. Scratch arenas replaced
// while graphs live, and modules the cache evicts, are kept the same way.
//
// Calls that would wait for the device (reads, Sync, Trim) or copy from
// host memory fail during a capture with backend.ErrCapture, before
// reaching the driver: the capture is not invalidated, and the device
// stays usable.

// graphMem is the backend's bookkeeping of graph memory.
type graphMem struct {
	mu        sync.Mutex
	capturing atomic.Pointer[captureSet]
	live      atomic.Int32         // graphs not closed, plus a capture under way
	held      map[*Buffer]*heldBuf // guarded by mu
	retired   []*cuda.Memory       // scratch arenas replaced while graphs live
}

type heldBuf struct {
	graphs   int  // graphs holding the buffer
	released bool // its owner freed it: free it with the last graph
}

// captureSet is what one capture touched.
type captureSet struct {
	mu       sync.Mutex
	bufs     map[*Buffer]bool // value: released during the capture
	released map[*Buffer]bool
}

func (c *captureSet) add(g *Buffer) {
	c.mu.Lock()
	if _, ok := c.bufs[g]; !ok {
		c.bufs[g] = false
	}
	c.mu.Unlock()
}

// capturing reports whether a capture is under way.
func (b *Backend) capturing() bool { return b.gm.capturing.Load() != nil }

// touch records that a capture under way uses g.
func (b *Backend) touch(g *Buffer) { b.gm.touch(g) }

func (gm *graphMem) touch(g *Buffer) {
	if c := gm.capturing.Load(); c != nil {
		c.add(g)
	}
}

// captureErr is the error of a call that capture forbids.
func (b *Backend) captureErr(what string) error {
	return fmt.Errorf("gpu: %s: %s while a CUDA graph is being captured: %w", b.name, what, backend.ErrCapture)
}

// deferFree keeps g allocated when a live graph or the capture under way
// holds it, and reports whether it did.
func (b *Backend) deferFree(g *Buffer) bool { return b.gm.deferFree(g) }

func (gm *graphMem) deferFree(g *Buffer) bool {
	if gm.live.Load() == 0 {
		return false
	}
	gm.mu.Lock()
	defer gm.mu.Unlock()
	if h := gm.held[g]; h != nil {
		h.released = true
		return true
	}
	if c := gm.capturing.Load(); c != nil {
		c.mu.Lock()
		defer c.mu.Unlock()
		if _, ok := c.bufs[g]; ok {
			c.released[g] = true
			return true
		}
	}
	return false
}

// retireScratch frees a replaced scratch arena, or keeps it while graphs
// (which may have captured its address) live.
func (b *Backend) retireScratch(m *cuda.Memory) {
	if b.gm.live.Load() > 0 {
		b.gm.mu.Lock()
		b.gm.retired = append(b.gm.retired, m)
		b.gm.mu.Unlock()
		return
	}
	_ = m.Free() // stream-ordered: kernels queued before still see it
}

// graphsLive reports whether graphs (or a capture) may refer to loaded
// modules, which must then stay loaded.
func (b *Backend) graphsLive() bool { return b.gm.live.Load() > 0 }

// Graph is captured array work, instantiated for replay.
type Graph struct {
	b      *Backend
	exec   *cuda.GraphExec
	bufs   []*Buffer
	nodes  int
	closed atomic.Bool
}

// BeginCapture starts recording the backend's stream. Only one capture at
// a time; no other goroutine may queue array work on the device meanwhile
// (it would be recorded too).
func (b *Backend) BeginCapture() error {
	if err := b.failed(); err != nil {
		return err
	}
	if !b.gm.begin() {
		return fmt.Errorf("gpu: %s: a capture is already under way: %w", b.name, backend.ErrCapture)
	}
	if err := b.stream.BeginCapture(cuda.CaptureRelaxed); err != nil {
		b.gm.release(b.gm.end())
		return b.note(err)
	}
	return nil
}

// begin starts a capture's bookkeeping; false if one is under way.
func (gm *graphMem) begin() bool {
	c := &captureSet{bufs: map[*Buffer]bool{}, released: map[*Buffer]bool{}}
	if !gm.capturing.CompareAndSwap(nil, c) {
		return false
	}
	gm.live.Add(1)
	return true
}

// end closes the capture's bookkeeping: every buffer it touched is held
// (once more) for the graph, and the list of them returned.
func (gm *graphMem) end() []*Buffer {
	gm.mu.Lock()
	defer gm.mu.Unlock()
	c := gm.capturing.Load()
	gm.capturing.Store(nil)
	if gm.held == nil {
		gm.held = map[*Buffer]*heldBuf{}
	}
	var bufs []*Buffer
	c.mu.Lock()
	defer c.mu.Unlock()
	for buf := range c.bufs {
		h := gm.held[buf]
		if h == nil {
			h = &heldBuf{}
			gm.held[buf] = h
		}
		h.graphs++
		h.released = h.released || c.released[buf]
		bufs = append(bufs, buf)
	}
	return bufs
}

// release drops a graph's hold on bufs and returns the buffers whose
// owners are done with them and, with the last graph, the retired arenas:
// the caller frees them.
func (gm *graphMem) release(bufs []*Buffer) (free []*Buffer, retired []*cuda.Memory, last bool) {
	gm.mu.Lock()
	defer gm.mu.Unlock()
	for _, buf := range bufs {
		h := gm.held[buf]
		if h == nil {
			continue
		}
		if h.graphs--; h.graphs <= 0 {
			delete(gm.held, buf)
			if h.released {
				free = append(free, buf)
			}
		}
	}
	last = gm.live.Add(-1) == 0
	if last {
		retired, gm.retired = gm.retired, nil
	}
	return free, retired, last
}

// EndCapture stops recording and returns the graph, instantiated. With
// discard (the captured function failed) it ends the capture and returns
// no graph. Either way the buffers of the capture are accounted: held by
// the graph, or freed if their owners freed them.
func (b *Backend) EndCapture(discard bool) (*Graph, error) {
	if !b.capturing() {
		return nil, fmt.Errorf("gpu: %s: EndCapture without a capture: %w", b.name, backend.ErrCapture)
	}
	cg, err := b.stream.EndCapture()
	g := &Graph{b: b, bufs: b.gm.end()}
	if err == nil && !discard {
		if g.nodes, err = cg.Nodes(); err == nil {
			g.exec, err = cg.Instantiate()
		}
	}
	if cg != nil {
		_ = cg.Close()
	}
	if err != nil || discard {
		g.release()
		return nil, b.note(err)
	}
	return g, nil
}

// Nodes returns the number of operations (kernels, copies, ...) captured.
func (g *Graph) Nodes() int { return g.nodes }

// Launch replays the graph on the backend's stream.
func (g *Graph) Launch() error {
	if g.closed.Load() {
		return fmt.Errorf("gpu: replay of a closed graph: %w", cuda.ErrClosed)
	}
	b := g.b
	if err := b.failed(); err != nil {
		return err
	}
	if b.capturing() {
		return b.captureErr("replaying a graph")
	}
	return b.note(g.exec.Launch(b.stream))
}

// Close destroys the graph and frees the buffers only it still held.
func (g *Graph) Close() error {
	if !g.closed.CompareAndSwap(false, true) {
		return nil
	}
	var err error
	if g.exec != nil {
		err = g.exec.Close()
	}
	g.release()
	return err
}

// release drops the graph's hold on its buffers (freeing those whose
// owners are done) and, with the last graph, the retired arenas and the
// modules evicted meanwhile.
func (g *Graph) release() {
	free, retired, last := g.b.gm.release(g.bufs)
	g.bufs = nil
	for _, buf := range free {
		if buf.mem != nil && !buf.external {
			_ = buf.mem.Free()
		}
	}
	for _, m := range retired {
		_ = m.Free()
	}
	if last {
		g.b.mods.reap()
	}
}
