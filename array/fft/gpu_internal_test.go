package fft

import (
	"math/rand/v2"
	"testing"

	"github.com/gocu-dev/gocu"
	"github.com/gocu-dev/gocu/array"
)

// TestGPURepeatReusesPlansAndMemory repeats each transform and checks that
// the repeats make no plan and leave no device memory behind: every
// intermediate and the closed result go back to the allocator at once,
// not when the collector runs (a leaked 128 MiB output per call made the
// next call allocate from the driver).
func TestGPURepeatReusesPlansAndMemory(t *testing.T) {
	if err := gocu.GPUUsable(); err != nil {
		t.Skipf("no usable GPU (%v): the cuFFT path is not tested", err)
	}
	g, err := array.GPU(0)
	if err != nil {
		t.Skipf("no GPU array device: %v", err)
	}
	alloc := g.Device().CUDA().Allocator()
	e, err := engineFor(g.Device())
	if err != nil {
		t.Skipf("cuFFT: %v", err)
	}
	r := rand.New(rand.NewPCG(7, 9))
	v := make([]complex64, 64*96)
	for i := range v {
		v[i] = complex(float32(r.NormFloat64()), float32(r.NormFloat64()))
	}
	x := array.FromComplexOn(g.Device(), v, 64, 96)
	defer x.Close()
	re := x.Real().Eval()
	defer re.Close()
	cases := []struct {
		name string
		f    func() *array.Array
	}{
		{"fft rows", func() *array.Array { return FFT(x) }},
		{"fft axis 0", func() *array.Array { return FFT(x, Axis(0)) }},
		{"fft padded", func() *array.Array { return FFT(x, N(128)) }},
		{"fft cropped ortho", func() *array.Array { return FFT(x, N(50), Ortho) }},
		{"ifft", func() *array.Array { return IFFT(x) }},
		{"rfft", func() *array.Array { return RFFT(re) }},
		{"irfft", func() *array.Array { return IRFFT(x) }},
		{"fft float32", func() *array.Array { return FFT(re) }},
		{"fft2", func() *array.Array { return FFT2(x) }},
		{"fftn axes", func() *array.Array { return FFTN(x, Axes(1, 0)) }},
		{"irfftn", func() *array.Array { return IRFFTN(x) }},
	}
	for _, c := range cases {
		// Two warm-up calls: the second one memoises the array programs.
		for range 2 {
			y := c.f()
			if err := y.Err(); err != nil {
				t.Fatalf("%s: %v", c.name, err)
			}
			y.Close()
		}
		if err := g.Sync(); err != nil {
			t.Fatal(err)
		}
		plans, before := e.cache.Len(), alloc.Stats().InUse
		for range 4 {
			y := c.f()
			if err := y.Err(); err != nil {
				t.Fatalf("%s: %v", c.name, err)
			}
			y.Close()
		}
		if err := g.Sync(); err != nil {
			t.Fatal(err)
		}
		if n := e.cache.Len(); n != plans {
			t.Errorf("%s: %d plans after repeats, %d before", c.name, n, plans)
		}
		if after := alloc.Stats().InUse; after != before {
			t.Errorf("%s: %d bytes in use after repeats, %d before", c.name, after, before)
		}
	}
	// Another batch is another plan; the same one is found again.
	n := e.cache.Len()
	y := FFT(x.Slice(array.S(0, 32)).Contiguous())
	y2 := FFT(x.Slice(array.S(0, 32)).Contiguous())
	if err := firstErr(y.Err(), y2.Err()); err != nil {
		t.Fatal(err)
	}
	closeAll(y, y2)
	if m := e.cache.Len(); m != min(n+1, planCacheSize) {
		t.Errorf("a new batch: %d plans, want %d", m, min(n+1, planCacheSize))
	}
}

func firstErr(errs ...error) error {
	for _, e := range errs {
		if e != nil {
			return e
		}
	}
	return nil
}
