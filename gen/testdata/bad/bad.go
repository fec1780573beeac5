// Package bad has a kernel gocu gen rejects (see ExampleError).
package bad

import "github.com/gocu-dev/gocu/kernel"

func done() {}

//gocu:kernel
func Count(t *kernel.Thread, x []int32) {
	seen :=
		map[int32]bool{}
	if len(seen) == 0 {
		defer done()
	}
}
