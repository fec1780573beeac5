package demo

import "reflect"

// funcPC returns the code pointer of a function value, which identifies a
// top-level function.
func funcPC(fn any) uintptr {
	v := reflect.ValueOf(fn)
	if v.Kind() != reflect.Func || v.IsNil() {
		return 0
	}
	return v.Pointer()
}
