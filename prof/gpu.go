package prof

import (
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/gocu-dev/gocu/cuda"
	"github.com/gocu-dev/gocu/internal/units"
)

// mark is a timestamp queued on a stream: a CUDA event (or a fake in
// tests).
type mark any

// timer queues and reads GPU timestamps on one device.
type timer interface {
	// mark queues a timestamp on s.
	mark(s *cuda.Stream) (mark, error)
	// anchor queues a timestamp on an idle stream of the profiler's own,
	// so that it is taken as soon as the device sees it.
	anchor() (mark, error)
	// done reports whether the device has taken the timestamp, without
	// waiting.
	done(m mark) (bool, error)
	// wait waits until the device has taken the timestamp.
	wait(m mark) error
	// between is the time from a to b, both taken.
	between(a, b mark) (time.Duration, error)
	// release returns a mark for reuse.
	release(m mark)
	close() error
}

// gpu is the profiler's state for one device.
type gpu struct {
	name, desc string
	t          timer

	mu      sync.Mutex // guards anchors, queues
	anchors []*anchor
	queues  map[*cuda.Stream][]*pending
}

// anchor ties a GPU timestamp to the session's clock.
type anchor struct {
	m    mark
	host time.Duration // session time just after the anchor was queued
}

// pending is an operation whose end mark is queued and not yet read.
type pending struct {
	ev         Event
	g          *gpu
	a          *anchor
	start, end mark
}

func newGPU(name, desc string, t timer) *gpu {
	return &gpu{name: name, desc: desc, t: t, queues: map[*cuda.Stream][]*pending{}}
}

func newCUDAGPU(d *cuda.Device) (*gpu, error) {
	if d == nil {
		return nil, errors.New("prof: operation without a device")
	}
	return newGPU(fmt.Sprintf("cuda:%d", d.Ordinal()), fmt.Sprintf("%s (%s)", d.Name(), d.Arch()), &cudaTimer{d: d}), nil
}

// anchorFor returns an anchor less than anchorEvery old at session time
// host, queuing a new one when needed. Elapsed times between CUDA events
// are float32 milliseconds: fresh anchors keep their resolution under a
// microsecond.
func (g *gpu) anchorFor(s *session, host time.Duration) (*anchor, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if n := len(g.anchors); n > 0 && host-g.anchors[n-1].host < anchorEvery {
		return g.anchors[n-1], nil
	}
	m, err := g.t.anchor()
	if err != nil {
		return nil, err
	}
	a := &anchor{m: m, host: s.now()}
	g.anchors = append(g.anchors, a)
	return a, nil
}

func (g *gpu) enqueue(s *cuda.Stream, p *pending) {
	g.mu.Lock()
	g.queues[s] = append(g.queues[s], p)
	g.mu.Unlock()
}

// collect resolves the pending operations whose end mark was taken (all of
// them with wait), in stream order, and returns their events.
func (g *gpu) collect(wait bool) []Event {
	g.mu.Lock()
	snap := make(map[*cuda.Stream][]*pending, len(g.queues))
	for s, q := range g.queues {
		snap[s] = q
	}
	g.mu.Unlock()
	var out []Event
	resolved := map[*cuda.Stream]int{}
	for s, q := range snap {
		n := 0
		for _, p := range q {
			ok, err := g.resolve(p, wait)
			if !ok && err == nil {
				break // later operations of the stream are not done either
			}
			if err != nil {
				p.ev.Timed, p.ev.Note = false, "no GPU time: "+units.OneLine(err)
			}
			g.t.release(p.start)
			g.t.release(p.end)
			out = append(out, p.ev)
			n++
		}
		resolved[s] = n
	}
	g.mu.Lock()
	for s, n := range resolved {
		if q := g.queues[s][n:]; len(q) > 0 {
			g.queues[s] = q
		} else {
			delete(g.queues, s)
		}
	}
	g.mu.Unlock()
	return out
}

// resolve reads p's times; it reports false with no error when they are
// not taken yet.
func (g *gpu) resolve(p *pending, wait bool) (bool, error) {
	for _, m := range []mark{p.end, p.a.m} {
		if wait {
			if err := g.t.wait(m); err != nil {
				return false, err
			}
		} else if ok, err := g.t.done(m); !ok || err != nil {
			return false, err
		}
	}
	d, err := g.t.between(p.start, p.end)
	if err != nil {
		return false, err
	}
	off, err := g.t.between(p.a.m, p.start)
	if err != nil {
		return false, err
	}
	p.ev.Start, p.ev.Duration, p.ev.Timed = p.a.host+off, d, true
	return true, nil
}

func (g *gpu) close() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, a := range g.anchors {
		g.t.release(a.m)
	}
	g.anchors = nil
	for s, q := range g.queues { // operations that ended after the last collection
		for _, p := range q {
			g.t.release(p.start)
			g.t.release(p.end)
		}
		delete(g.queues, s)
	}
	return g.t.close()
}

// cudaTracer is the session's cuda.Tracer.
type cudaTracer struct{ s *session }

func (t cudaTracer) Begin(op *cuda.TraceOp) {
	s := t.s
	p := &pending{ev: Event{Name: op.Kind.String(), Kind: op.Kind.String(), Stream: streamName(op.Stream),
		Bytes: int64(op.Bytes)}}
	if op.Kind == cuda.KernelOp {
		p.ev.Name = op.Name
		p.ev.Grid, p.ev.Block = dim(op.Grid), dim(op.Block)
		p.ev.Shared = op.SharedMem
	}
	op.Data = p
	g, err := s.gpu(op.Device)
	if err != nil {
		p.ev.Note = "no GPU time: " + units.OneLine(err)
		p.ev.HostStart = s.now()
		return
	}
	p.g = g
	p.ev.Device = g.name
	if op.Capturing {
		p.ev.Note = "captured into a CUDA graph: it runs, and is timed, when the graph is replayed"
		p.ev.HostStart = s.now()
		return
	}
	a, err := g.anchorFor(s, s.now())
	if err == nil {
		p.start, err = g.t.mark(op.Stream)
	}
	if err != nil {
		p.ev.Note = "no GPU time: " + units.OneLine(err)
	}
	p.a = a
	p.ev.HostStart = s.now()
}

func (t cudaTracer) End(op *cuda.TraceOp) {
	p, ok := op.Data.(*pending)
	if !ok {
		return
	}
	s := t.s
	p.ev.HostDuration = s.now() - p.ev.HostStart
	p.ev.Failed = op.Failed
	if op.Failed {
		p.ev.Note = "the driver refused it"
	}
	if p.start != nil && !op.Failed {
		end, err := p.g.t.mark(op.Stream)
		if err == nil {
			p.end = end
			p.g.enqueue(op.Stream, p)
			return
		}
		p.ev.Note = "no GPU time: " + units.OneLine(err)
	}
	if p.start != nil {
		p.g.t.release(p.start)
	}
	s.finished(p.ev)
}

func dim(d cuda.Dim3) [3]int { return [3]int{int(d.X), int(d.Y), int(d.Z)} }

func streamName(s *cuda.Stream) string {
	if s == nil || s.IsDefault() {
		return "default"
	}
	return fmt.Sprintf("%#x", s.Handle())
}

// cudaTimer times with CUDA events, pooled.
type cudaTimer struct {
	d      *cuda.Device
	mu     sync.Mutex // guards pool, idle, closed
	pool   []*cuda.Event
	idle   *cuda.Stream // for anchors
	closed bool
}

var errClosed = errors.New("prof: profiling stopped")

func (t *cudaTimer) get() (*cuda.Event, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return nil, errClosed
	}
	if n := len(t.pool); n > 0 {
		e := t.pool[n-1]
		t.pool = t.pool[:n-1]
		return e, nil
	}
	return t.d.NewEvent(cuda.EventDefault)
}

func (t *cudaTimer) mark(s *cuda.Stream) (mark, error) {
	e, err := t.get()
	if err != nil {
		return nil, err
	}
	if err := e.Record(s); err != nil {
		t.release(e)
		return nil, err
	}
	return e, nil
}

func (t *cudaTimer) anchor() (mark, error) {
	t.mu.Lock()
	if t.idle == nil && !t.closed {
		s, err := t.d.NewStream(cuda.StreamNonBlocking)
		if err != nil {
			t.mu.Unlock()
			return nil, err
		}
		t.idle = s
	}
	s := t.idle
	t.mu.Unlock()
	return t.mark(s)
}

func (t *cudaTimer) done(m mark) (bool, error) { return m.(*cuda.Event).Query() }
func (t *cudaTimer) wait(m mark) error         { return m.(*cuda.Event).Synchronize() }

func (t *cudaTimer) between(a, b mark) (time.Duration, error) {
	return cuda.Elapsed(a.(*cuda.Event), b.(*cuda.Event))
}

func (t *cudaTimer) release(m mark) {
	e, ok := m.(*cuda.Event)
	if !ok || e == nil {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		e.Close()
		return
	}
	t.pool = append(t.pool, e)
}

func (t *cudaTimer) close() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.closed = true
	var errs []error
	for _, e := range t.pool {
		errs = append(errs, e.Close())
	}
	t.pool = nil
	if t.idle != nil {
		errs = append(errs, t.idle.Close())
		t.idle = nil
	}
	return errors.Join(errs...)
}
