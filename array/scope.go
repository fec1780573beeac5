package array

import "sync"

// A Scope frees, when it closes, every array created on its device while
// it was open, except those it was asked to keep. It gives a training step
// or a loop body a known end for its memory, the way Go cannot by counting
// references:
//
//	for step := range steps {
//		s := dev.NewScope()
//		loss := model.Loss(x, y) // every intermediate belongs to s
//		... backward, optimiser step (parameters update in place) ...
//		s.Keep(loss)             // survives the scope
//		s.Close()                // the rest returns to the pool, in stream order
//	}
//
// Scopes nest: an array belongs to the innermost open scope of its
// device, and Keep hands it to the scope around. A scope belongs to the
// device, not to a goroutine: arrays that other goroutines create on the
// device meanwhile join it too. Closing an array frees its memory in
// stream order, so Close never waits for the device. Arrays dropped
// outside any scope are still freed by the collector, the backstop.
type Scope struct {
	d      *Maker
	parent *Scope

	mu     sync.Mutex
	arrs   []*Array
	closed bool
}

// NewScope opens a scope on the device. Close it (defer s.Close()).
func (m *Maker) NewScope() *Scope {
	s := &Scope{d: m}
	if m == nil {
		s.closed = true
		return s
	}
	m.scopeMu.Lock()
	s.parent = m.scope.Load()
	m.scope.Store(s)
	m.scopeMu.Unlock()
	return s
}

// WithScope runs f in a new scope, closed when f returns. The arrays f
// returns are kept, and belong to the scope around.
func (m *Maker) WithScope(f func() ([]*Array, error)) ([]*Array, error) {
	s := m.NewScope()
	defer s.Close()
	arrs, err := f()
	s.Keep(arrs...)
	return arrs, err
}

// add makes a belong to the scope, or to no scope if s is closed.
func (s *Scope) add(a *Array) {
	s.mu.Lock()
	if s.closed {
		a.scope.CompareAndSwap(s, nil)
	} else {
		a.scope.Store(s)
		s.arrs = append(s.arrs, a)
	}
	s.mu.Unlock()
}

// Keep takes the arrays out of the scope: Close leaves them open, and
// they belong to the scope around, if any. Arrays of other scopes or
// devices are left as they are.
func (s *Scope) Keep(arrs ...*Array) {
	if s == nil || len(arrs) == 0 {
		return
	}
	for _, a := range arrs {
		// The entry in s.arrs stays; Close skips arrays of other scopes.
		if a != nil && a.scope.CompareAndSwap(s, nil) && s.parent != nil {
			s.parent.add(a)
		}
	}
}

// Persist takes a out of the scope it belongs to, if any: only Close, or
// the collector once a is unreachable, frees it. Libraries call it for
// state that outlives a step (optimiser moments, accumulated gradients).
func (a *Array) Persist() *Array {
	if a != nil {
		a.scope.Store(nil)
	}
	return a
}

// Len is the number of arrays the scope would close now.
func (s *Scope) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, a := range s.arrs {
		if a.scope.Load() == s {
			n++
		}
	}
	return n
}

// Close closes every array of the scope that was not kept and ends the
// scope. Scopes closed out of order are taken out of the chain all the
// same. Close is idempotent.
func (s *Scope) Close() error {
	if s == nil {
		return nil
	}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	arrs := s.arrs
	s.arrs = nil
	s.mu.Unlock()

	d := s.d
	d.scopeMu.Lock()
	if d.scope.Load() == s {
		d.scope.Store(s.parent)
	} else {
		for c := d.scope.Load(); c != nil; c = c.parent {
			if c.parent == s {
				c.parent = s.parent
				break
			}
		}
	}
	d.scopeMu.Unlock()
	for _, a := range arrs {
		if a.scope.CompareAndSwap(s, nil) {
			a.Close()
		}
	}
	return nil
}

// enter makes a new array belong to the device's open scope, if any.
func (m *Maker) enter(a *Array) *Array {
	if s := m.scope.Load(); s != nil {
		s.add(a)
	}
	return a
}
