// Package hook holds a process-wide hook, such as the tracers of packages
// cuda and sim. The hot path pays one atomic load when none is installed.
package hook

import "sync/atomic"

// Slot holds one hook of type T, usually an interface, or none.
// The zero Slot holds none.
type Slot[T any] struct{ p atomic.Pointer[box[T]] }

type box[T any] struct{ v T }

// Set installs v, or removes the hook when v is nil, and returns the hook
// it replaces.
func (s *Slot[T]) Set(v T) (old T) {
	var b *box[T]
	if any(v) != nil {
		b = &box[T]{v}
	}
	if o := s.p.Swap(b); o != nil {
		return o.v
	}
	return old
}

// Get returns the installed hook, and false when there is none.
func (s *Slot[T]) Get() (T, bool) {
	if b := s.p.Load(); b != nil {
		return b.v, true
	}
	var none T
	return none, false
}

// Active reports whether a hook is installed.
func (s *Slot[T]) Active() bool { return s.p.Load() != nil }
