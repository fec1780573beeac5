// Package many has problems of every stage of gocu gen at once: a type
// error, bad signatures and directives, constructs outside the subset, a
// layout problem and a name conflict. TestAllProblemsAtOnce wants them all
// in one run.
package many

import "github.com/gocu-dev/gocu/kernel"

// V cannot be a kernel parameter's element: CUDA aligns Float4 to 16.
type V struct {
	A float32
	B kernel.Float4
}

// LaunchFoo takes the name of Foo's launcher.
var LaunchFoo = 1

//gocu:kernel
func NoThread(x []float32) {}

//gocu:kernel
//gocu:fast
func Foo(t *kernel.Thread, x []float32) {
	m := map[int32]float32{}
	_ = m
	//gocu:unroll
	x[0] = 1
}

//gocu:kernel
func Bar(t *kernel.Thread, v []V, x []float32) {
	x[0] = undefined
	defer rec(3)
}

//gocu:kernel
func Baz[T any](t *kernel.Thread, x []T) {
	go rec(1)
}

//gocu:kernel
func Qux(t *kernel.Thread, x []float32) {
	x[0] = float32(rec(3))
	x[1] = table[0]
}

var table = [2]float32{1, 2}

func init() { table[1] = 3 }

func rec(n int32) int32 {
	if n == 0 {
		return 0
	}
	return rec(n - 1)
}
