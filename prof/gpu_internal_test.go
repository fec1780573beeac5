package prof

import (
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gocu-dev/gocu/cuda"
)

// fakeTimer stands in for CUDA events: each mark gets a device time when
// the test says the device reached it.
type fakeTimer struct {
	mu       sync.Mutex
	marks    []*fakeMark
	anchors  int
	waits    int // calls that would synchronise
	released int
	closed   bool
	failDone error
}

type fakeMark struct {
	stream *cuda.Stream
	at     time.Duration // device time
	taken  bool
}

func (t *fakeTimer) mark(s *cuda.Stream) (mark, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	m := &fakeMark{stream: s}
	t.marks = append(t.marks, m)
	return m, nil
}

func (t *fakeTimer) anchor() (mark, error) {
	t.mu.Lock()
	t.anchors++
	t.mu.Unlock()
	return t.mark(nil)
}

func (t *fakeTimer) done(m mark) (bool, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.failDone != nil {
		return false, t.failDone
	}
	return m.(*fakeMark).taken, nil
}

func (t *fakeTimer) wait(m mark) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.waits++
	fm := m.(*fakeMark)
	if !fm.taken { // the device finishes the work
		fm.taken = true
		fm.at = 1000 * time.Second
	}
	return nil
}

func (t *fakeTimer) between(a, b mark) (time.Duration, error) {
	return b.(*fakeMark).at - a.(*fakeMark).at, nil
}

func (t *fakeTimer) release(m mark) {
	if m == nil {
		return
	}
	t.mu.Lock()
	t.released++
	t.mu.Unlock()
}

func (t *fakeTimer) close() error { t.closed = true; return nil }

// take sets the device time of mark i.
func (t *fakeTimer) take(i int, at time.Duration) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.marks[i].at, t.marks[i].taken = at, true
}

func fakeSession(t *testing.T) (*session, *fakeTimer) {
	t.Helper()
	ft := &fakeTimer{}
	s, err := newSession(Options{}, func(*cuda.Device) (*gpu, error) { return newGPU("cuda:3", "Fake GPU (sm_90)", ft), nil })
	if err != nil {
		t.Fatal(err)
	}
	return s, ft
}

func launch(tr cudaTracer, s *cuda.Stream, name string, failed bool) *cuda.TraceOp {
	op := &cuda.TraceOp{Kind: cuda.KernelOp, Name: name, Stream: s, Grid: cuda.Dim3{X: 4, Y: 1, Z: 1}, Block: cuda.Dim3{X: 128, Y: 1, Z: 1}, SharedMem: 64}
	tr.Begin(op)
	op.Failed = failed
	tr.End(op)
	return op
}

func TestGPUTimingWithoutSynchronisation(t *testing.T) {
	s, ft := fakeSession(t)
	tr := cudaTracer{s}
	s1, s2 := new(cuda.Stream), new(cuda.Stream)

	launch(tr, s1, "a", false) // marks: 0 anchor, 1 start, 2 end
	launch(tr, s1, "b", false) // 3, 4
	copyOp := &cuda.TraceOp{Kind: cuda.CopyHtoDOp, Stream: s2, Bytes: 1 << 20, Sync: true}
	tr.Begin(copyOp) // 5, 6
	tr.End(copyOp)
	if ft.anchors != 1 || len(ft.marks) != 7 {
		t.Fatalf("%d anchors and %d marks, want 1 and 7", ft.anchors, len(ft.marks))
	}
	// The device reached the anchor, a's end and the copy, not b's end.
	ft.take(0, 10*time.Millisecond)
	ft.take(1, 10*time.Millisecond+5*time.Microsecond)
	ft.take(2, 10*time.Millisecond+65*time.Microsecond)
	ft.take(3, 10*time.Millisecond+70*time.Microsecond)
	ft.take(5, 11*time.Millisecond)
	ft.take(6, 11*time.Millisecond+400*time.Microsecond)

	s.collect(false) // what the background collector does
	if ft.waits != 0 {
		t.Fatalf("collecting without wait synchronised %d times", ft.waits)
	}
	ev := s.prof.Events
	if len(ev) != 2 {
		t.Fatalf("collected %d events, want a and the copy (b is not done): %+v", len(ev), ev)
	}
	byName := map[string]Event{}
	for _, e := range ev {
		byName[e.Name] = e
	}
	a, cp := byName["a"], byName["memcpy HtoD"]
	anchorHost := s.gpus[nil].anchors[0].host
	if !a.Timed || a.Duration != 60*time.Microsecond || a.Start != anchorHost+5*time.Microsecond {
		t.Errorf("a: timed %v, duration %v, start %v (anchor at %v)", a.Timed, a.Duration, a.Start, anchorHost)
	}
	if a.Kind != "kernel" || a.Device != "cuda:3" || a.Stream != "default" || a.Grid != [3]int{4, 1, 1} || a.Block != [3]int{128, 1, 1} || a.Shared != 64 {
		t.Errorf("a recorded as %+v", a)
	}
	if a.HostDuration <= 0 || a.HostStart <= 0 {
		t.Errorf("a's call on the CPU: start %v, duration %v", a.HostStart, a.HostDuration)
	}
	if cp.Kind != "memcpy HtoD" || cp.Bytes != 1<<20 || cp.Duration != 400*time.Microsecond || cp.Start != anchorHost+time.Millisecond {
		t.Errorf("copy recorded as %+v", cp)
	}
	if ft.released != 4 {
		t.Errorf("%d marks returned to the pool, want 4", ft.released)
	}

	// Stop waits for the rest.
	p, err := s.stop()
	if err != nil {
		t.Fatal(err)
	}
	if ft.waits == 0 || len(p.Events) != 3 || !ft.closed {
		t.Errorf("stop: %d waits, %d events, timer closed %v", ft.waits, len(p.Events), ft.closed)
	}
	rows := p.Summary()
	if len(rows) != 3 {
		t.Fatalf("summary has %d rows: %+v", len(rows), rows)
	}
}

func TestGPUStreamOrder(t *testing.T) {
	s, ft := fakeSession(t)
	tr := cudaTracer{s}
	st := new(cuda.Stream)
	launch(tr, st, "first", false)  // 0 anchor, 1, 2
	launch(tr, st, "second", false) // 3, 4
	ft.take(0, 0)
	ft.take(1, time.Microsecond)
	ft.take(3, 3*time.Microsecond) // the second's marks are taken
	ft.take(4, 4*time.Microsecond)
	s.collect(false)
	if len(s.prof.Events) != 0 {
		t.Fatalf("an operation was collected before the one ahead of it on its stream: %+v", s.prof.Events)
	}
	ft.take(2, 2*time.Microsecond)
	s.collect(false)
	if len(s.prof.Events) != 2 || s.prof.Events[0].Name != "first" || s.prof.Events[1].Name != "second" {
		t.Fatalf("collected %+v", s.prof.Events)
	}
	if len(s.gpus[nil].queues) != 0 {
		t.Errorf("empty stream queues are kept: %d", len(s.gpus[nil].queues))
	}
}

func TestGPUUntimedOperations(t *testing.T) {
	s, ft := fakeSession(t)
	tr := cudaTracer{s}
	st := new(cuda.Stream)
	launch(tr, st, "refused", true)
	captured := &cuda.TraceOp{Kind: cuda.KernelOp, Name: "captured", Stream: st, Capturing: true}
	tr.Begin(captured)
	tr.End(captured)
	launch(tr, st, "late", false)
	s.collect(false) // late's marks are not taken: it stays pending
	p, err := s.stop()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]Event{}
	for _, e := range p.Events {
		got[e.Name] = e
	}
	if e := got["refused"]; e.Timed || !e.Failed || e.Note != "the driver refused it" {
		t.Errorf("refused launch: %+v", e)
	}
	if e := got["captured"]; e.Timed || !strings.Contains(e.Note, "graph") {
		t.Errorf("captured launch: %+v", e)
	}
	if e, ok := got["late"]; !ok || !e.Timed || len(p.Events) != 3 || ft.waits == 0 {
		t.Errorf("events: %+v", p.Events)
	}
	rows := p.Summary()
	untimed := 0
	for _, r := range rows {
		untimed += r.Untimed
	}
	if untimed != 2 {
		t.Errorf("%d untimed calls in the summary, want 2", untimed)
	}
	if !strings.Contains(p.Table(), "2 without a duration") {
		t.Errorf("the table does not say that two calls have no duration:\n%s", p.Table())
	}
}

func TestGPUQueryError(t *testing.T) {
	s, ft := fakeSession(t)
	tr := cudaTracer{s}
	launch(tr, new(cuda.Stream), "k", false)
	ft.failDone = errors.New("cuda: cuEventQuery: CUDA_ERROR_ILLEGAL_ADDRESS: an illegal memory access\nsecond line")
	s.collect(false)
	if len(s.prof.Events) != 1 {
		t.Fatalf("events: %+v", s.prof.Events)
	}
	e := s.prof.Events[0]
	if e.Timed || e.Note != "no GPU time: cuda: cuEventQuery: CUDA_ERROR_ILLEGAL_ADDRESS: an illegal memory access" {
		t.Errorf("an event whose timing failed: %+v", e)
	}
}

func TestAnchorsRenewed(t *testing.T) {
	s, ft := fakeSession(t)
	g, err := s.gpu(nil)
	if err != nil {
		t.Fatal(err)
	}
	a1, _ := g.anchorFor(s, s.now())
	a2, _ := g.anchorFor(s, s.now()+anchorEvery/2)
	if a1 != a2 || ft.anchors != 1 {
		t.Errorf("an anchor younger than %v was renewed", anchorEvery)
	}
	// anchorFor compares with the host time the anchor was taken at: move
	// it into the past.
	a1.host -= 2 * anchorEvery
	if a3, _ := g.anchorFor(s, s.now()); a3 == a1 || ft.anchors != 2 {
		t.Errorf("an anchor older than %v was kept", anchorEvery)
	}
}

func TestMaxEvents(t *testing.T) {
	s, ft := fakeSession(t)
	s.opts.MaxEvents = 3
	tr := cudaTracer{s}
	for range 5 {
		launch(tr, new(cuda.Stream), "k", false)
	}
	_ = ft
	p, err := s.stop()
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Events) != 3 || p.Dropped != 2 || p.Summary()[0].Calls != 5 {
		t.Errorf("%d events kept, %d dropped, %d calls counted; want 3, 2, 5", len(p.Events), p.Dropped, p.Summary()[0].Calls)
	}
	if !strings.Contains(p.Table(), "2 events beyond the limit") {
		t.Errorf("the table does not mention the dropped events:\n%s", p.Table())
	}
}
