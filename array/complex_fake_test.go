//go:build gocu_fakedriver

package array

import "testing"

// TestComplexOpsFreeAtCloseFakeGPU repeats complex operations, each result
// closed, and checks that the device memory in use returns to where it
// was: no intermediate waits for the collector. A broadcast view in
// Full's complex path once kept 512 bytes per call (the padded FFT's
// zeros on the H200).
func TestComplexOpsFreeAtCloseFakeGPU(t *testing.T) {
	d := fakeGPU(t)
	alloc := d.gpu.Device().Allocator()
	x := d.Full(Complex64, complex(1, 2), 64, 96).Copy()
	y := d.Full(Complex64, complex(3, -1), 64, 96).Copy()
	defer closeAll(x, y)
	for _, c := range []struct {
		name string
		f    func() *Array
	}{
		{"zeros", func() *Array { return d.Zeros(Complex64, 64, 32) }},
		{"zeros evaluated", func() *Array { return d.Zeros(Complex128, 8, 32).Eval() }},
		{"full of a complex", func() *Array { return d.Full(Complex64, complex(1, 1), 64, 32).Eval() }},
		{"pad by concat", func() *Array {
			z := d.Zeros(Complex64, 64, 32)
			defer z.Close()
			return Concat(-1, x, z).Eval()
		}},
		{"mul", func() *Array { return x.Mul(y).Eval() }},
		{"abs", func() *Array { return x.Abs().Eval() }},
		{"mul abs", func() *Array { return x.Mul(y).Abs().Eval() }},
		{"real of a product", func() *Array { return x.Mul(y).Real().Eval() }},
		{"as complex128", func() *Array { return x.AsType(Complex128).Eval() }},
		{"from a real", func() *Array { return x.Real().AsType(Complex64).Eval() }},
	} {
		// Two warm-up calls: the second one memoises the program.
		c.f().Close()
		c.f().Close()
		d.Sync()
		before := alloc.Stats().InUse
		for range 8 {
			c.f().Close()
		}
		d.Sync()
		if after := alloc.Stats().InUse; after != before {
			t.Errorf("%s: %d bytes in use after 8 repeats, %d before", c.name, after, before)
		}
	}
}
