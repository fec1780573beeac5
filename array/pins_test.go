package array

import (
	"sync"
	"sync/atomic"
	"testing"

	"github.com/gocu-dev/gocu/array/internal/backend"
	"github.com/gocu-dev/gocu/array/internal/cpu"
)

// stallBackend holds one allocation until released, remembers freed
// buffers, and reports reductions that read one.
type stallBackend struct {
	backend.Backend
	stall   atomic.Pointer[chan struct{}] // the next Alloc waits for it
	stalled chan struct{}                 // closed when that Alloc waits
	mu      sync.Mutex
	freed   map[backend.Buffer]bool
	bad     atomic.Int64 // reductions that read freed memory
}

func (s *stallBackend) Alloc(dt backend.DType, n int) (backend.Buffer, error) {
	if c := s.stall.Swap(nil); c != nil {
		close(s.stalled)
		<-*c
	}
	b, err := s.Backend.Alloc(dt, n)
	s.mu.Lock()
	delete(s.freed, b)
	s.mu.Unlock()
	return b, err
}

func (s *stallBackend) Free(b backend.Buffer) {
	s.mu.Lock()
	s.freed[b] = true
	s.mu.Unlock()
	s.Backend.Free(b)
}

func (s *stallBackend) Reduce(r *backend.Reduction) error {
	s.mu.Lock()
	for _, in := range r.In.Inputs {
		if s.freed[in.Buf] {
			s.bad.Add(1)
		}
	}
	s.mu.Unlock()
	return s.Backend.Reduce(r)
}

// A reduction takes a pending expression (inlining it) while another
// goroutine evaluates the same array, which releases the expression's
// storages, here their last references: the reduction pins them, so
// their memory is not freed before it has read it.
func TestPendingExpressionPinned(t *testing.T) {
	sb := &stallBackend{Backend: cpu.New(0), freed: map[backend.Buffer]bool{}}
	d := newDevice(sb, nil)
	b := d.Arange(Float64, 64).Eval()
	x := b.Mul(2) // pending: holds the last reference to b's memory
	b.Close()
	gate := make(chan struct{})
	sb.stalled = make(chan struct{})
	sb.stall.Store(&gate)
	var s *Array
	done := make(chan struct{})
	go func() {
		defer close(done)
		s = x.Sum() // takes x's expression, then waits in Alloc
	}()
	<-sb.stalled
	if err := x.Eval().Err(); err != nil { // evaluates x, releasing b's memory
		t.Fatal(err)
	}
	close(gate)
	<-done
	if n := sb.bad.Load(); n != 0 {
		t.Fatal("the reduction read memory freed while it was planned")
	}
	if v, err := s.Item(); err != nil || v != 2*63*64/2 {
		t.Fatalf("sum %v, %v", v, err)
	}
}
