package array_test

import (
	"reflect"
	"testing"

	"github.com/gocu-dev/gocu/array"
	"github.com/gocu-dev/gocu/grad"
)

// TestOpGradDecisions checks that package grad follows every gradient
// decision of the op table: a grad.Var method for each operation with a
// rule or a zero gradient, and none for the others. Every operation's
// array method exists.
func TestOpGradDecisions(t *testing.T) {
	arr := reflect.TypeOf((*array.Array)(nil))
	v := reflect.TypeOf((*grad.Var)(nil))
	rule, zero, none := array.OpMethods()
	has := func(typ reflect.Type, m string) bool {
		if m == "Where" { // a function in both packages
			return true
		}
		_, ok := typ.MethodByName(m)
		return ok
	}
	for _, m := range append(append(append([]string{}, rule...), zero...), none...) {
		if !has(arr, m) {
			t.Errorf("array.Array has no method %s", m)
		}
	}
	for _, m := range append(append([]string{}, rule...), zero...) {
		if !has(v, m) {
			t.Errorf("grad.Var has no method %s, which the op table promises", m)
		}
	}
	for _, m := range none {
		if has(v, m) {
			t.Errorf("grad.Var has a method %s for an operation the op table calls not differentiable", m)
		}
	}
	_ = grad.Where // the select operation's gradient
}
