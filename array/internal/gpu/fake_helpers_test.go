//go:build gocu_fakedriver

package gpu

import (
	"testing"

	"github.com/gocu-dev/gocu/array/internal/backend"
	"github.com/gocu-dev/gocu/cuda"
)

// fakeBackend returns a backend on cuda's fake driver (skipping the test
// without one) and an allocator on it that fails the test on an error.
func fakeBackend(t *testing.T) (*Backend, func(dt backend.DType, n int) *Buffer) {
	t.Helper()
	dev, err := cuda.FakeDevice()
	if err != nil {
		t.Skip(err)
	}
	b, err := NewFake(dev)
	if err != nil {
		t.Fatal(err)
	}
	return b, func(dt backend.DType, n int) *Buffer {
		t.Helper()
		g, err := b.Alloc(dt, n)
		if err != nil {
			t.Fatal(err)
		}
		return g.(*Buffer)
	}
}
