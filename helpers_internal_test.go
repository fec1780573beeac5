package gocu

import (
	"testing"

	"github.com/gocu-dev/gocu/kernel"
)

// addOffByOne is a Go kernel that gocu gen did not translate: Autotune must
// refuse it as a Tuning.Kernel.
func addOffByOne(t *kernel.Thread, a, b, c []float32, n int32) {
	i := t.Index()
	if i <= n {
		c[i] = a[i] + b[i]
	}
}

func simDev(t *testing.T) *Device {
	d, err := Open("sim")
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// filled returns a simulator buffer holding v, v+1, ...
func filled(t *testing.T, d *Device, n int, v float32) *Buffer[float32] {
	t.Helper()
	b, err := Alloc[float32](d, n)
	if err != nil {
		t.Fatal(err)
	}
	for i := range b.Host() {
		b.Host()[i] = v + float32(i)
	}
	return b
}
