package hook

import (
	"fmt"
	"testing"
)

func TestSlot(t *testing.T) {
	var s Slot[fmt.Stringer]
	if _, ok := s.Get(); ok || s.Active() {
		t.Fatal("the zero Slot holds a hook")
	}
	a, b := stringer("a"), stringer("b")
	if old := s.Set(a); old != nil {
		t.Errorf("first Set replaced %v", old)
	}
	if v, ok := s.Get(); !ok || v != a || !s.Active() {
		t.Errorf("Get = %v, %v after Set(a)", v, ok)
	}
	if old := s.Set(b); old != a {
		t.Errorf("Set(b) replaced %v, want a", old)
	}
	if old := s.Set(nil); old != b {
		t.Errorf("Set(nil) replaced %v, want b", old)
	}
	if _, ok := s.Get(); ok || s.Active() {
		t.Error("Set(nil) left a hook")
	}
}

type stringer string

func (s stringer) String() string { return string(s) }
