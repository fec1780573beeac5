package cufft_test

import (
	"math"
	"math/cmplx"
	"math/rand/v2"
	"testing"

	"github.com/gocu-dev/gocu"
	"github.com/gocu-dev/gocu/cuda"
	"github.com/gocu-dev/gocu/cufft"
	"github.com/gocu-dev/gocu/internal/units"
)

// needGPU returns GPU 0, or skips without a GPU or cuFFT.
func needGPU(t *testing.T) *cuda.Device {
	t.Helper()
	if err := gocu.GPUUsable(); err != nil {
		t.Skipf("no usable GPU: %s", units.OneLine(err))
	}
	if err := cufft.Load(); err != nil {
		t.Skipf("no cuFFT: %s", units.OneLine(err))
	}
	d, err := gocu.Open("cuda:0")
	if err != nil {
		t.Skipf("no GPU 0: %v", err)
	}
	return d.CUDA()
}

// dft is the naive transform of each row of x (rows of n), in float64.
func dft(x []complex128, n int, sign float64) []complex128 {
	out := make([]complex128, len(x))
	for b := 0; b < len(x); b += n {
		for k := range n {
			var s complex128
			for j := range n {
				s += x[b+j] * cmplx.Exp(complex(0, sign*2*math.Pi*float64(j*k)/float64(n)))
			}
			out[b+k] = s
		}
	}
	return out
}

func TestGPUTransforms(t *testing.T) {
	dev := needGPU(t)
	const n, batch = 48, 3
	r := rand.New(rand.NewPCG(1, 2))
	x := make([]complex128, n*batch)
	for i := range x {
		x[i] = complex(r.NormFloat64(), r.NormFloat64())
	}
	want := dft(x, n, -1)
	err := dev.WithContext(func() error {
		cache := cufft.NewCache(8, func(stream uintptr, bytes int) (uint64, func(), error) {
			m, err := dev.AllocOn(dev.DefaultStream(), bytes)
			if err != nil {
				return 0, nil, err
			}
			return uint64(m.Ptr()), func() { _ = m.Free() }, nil
		})
		defer cache.Close()
		lay := cufft.Layout{N: []int{n}, Batch: batch}

		// complex64 forward then inverse, in place.
		c64 := make([]complex64, len(x))
		for i, v := range x {
			c64[i] = complex64(v)
		}
		m, err := dev.Alloc(8 * len(x))
		if err != nil {
			return err
		}
		defer m.Free()
		if err := cuda.CopyHtoD(m, c64); err != nil {
			return err
		}
		p, err := cache.Get(lay, cufft.C2C, 0)
		if err != nil {
			return err
		}
		if again, _ := cache.Get(lay, cufft.C2C, 0); again != p {
			t.Error("the cache made a second plan")
		}
		if err := p.Exec(uint64(m.Ptr()), uint64(m.Ptr()), cufft.Forward); err != nil {
			return err
		}
		got := make([]complex64, len(x))
		if err := cuda.CopyDtoH(got, m); err != nil {
			return err
		}
		for i := range got {
			if cmplx.Abs(complex128(got[i])-want[i]) > 1e-4*n {
				t.Fatalf("C2C forward [%d] = %v, want %v", i, got[i], want[i])
			}
		}
		if err := p.Exec(uint64(m.Ptr()), uint64(m.Ptr()), cufft.Inverse); err != nil {
			return err
		}
		if err := cuda.CopyDtoH(got, m); err != nil {
			return err
		}
		for i := range got {
			if cmplx.Abs(complex128(got[i])/n-x[i]) > 1e-5*n {
				t.Fatalf("C2C round trip [%d] = %v, want %v", i, complex128(got[i])/n, x[i])
			}
		}

		// complex128, out of place.
		in, err := dev.Alloc(16 * len(x))
		if err != nil {
			return err
		}
		defer in.Free()
		out, err := dev.Alloc(16 * len(x))
		if err != nil {
			return err
		}
		defer out.Free()
		if err := cuda.CopyHtoD(in, x); err != nil {
			return err
		}
		pz, err := cache.Get(lay, cufft.Z2Z, 0)
		if err != nil {
			return err
		}
		if err := pz.Exec(uint64(in.Ptr()), uint64(out.Ptr()), cufft.Forward); err != nil {
			return err
		}
		gz := make([]complex128, len(x))
		if err := cuda.CopyDtoH(gz, out); err != nil {
			return err
		}
		for i := range gz {
			if cmplx.Abs(gz[i]-want[i]) > 1e-10*n {
				t.Fatalf("Z2Z [%d] = %v, want %v", i, gz[i], want[i])
			}
		}

		// float32 R2C: n/2+1 outputs per row, the DFT of the real parts.
		re := make([]float32, len(x))
		rx := make([]complex128, len(x))
		for i, v := range x {
			re[i], rx[i] = float32(real(v)), complex(float64(float32(real(v))), 0)
		}
		wr := dft(rx, n, -1)
		if err := cuda.CopyHtoD(in, re); err != nil {
			return err
		}
		pr, err := cache.Get(lay, cufft.R2C, 0)
		if err != nil {
			return err
		}
		if err := pr.Exec(uint64(in.Ptr()), uint64(out.Ptr()), cufft.Forward); err != nil {
			return err
		}
		h := n/2 + 1
		gr := make([]complex64, h*batch)
		if err := cuda.CopyDtoH(gr, out); err != nil {
			return err
		}
		for b := range batch {
			for k := range h {
				if cmplx.Abs(complex128(gr[b*h+k])-wr[b*n+k]) > 1e-4*n {
					t.Fatalf("R2C [%d][%d] = %v, want %v", b, k, gr[b*h+k], wr[b*n+k])
				}
			}
		}
		// C2R back: n times the real input.
		pc, err := cache.Get(lay, cufft.C2R, 0)
		if err != nil {
			return err
		}
		if err := pc.Exec(uint64(out.Ptr()), uint64(in.Ptr()), cufft.Inverse); err != nil {
			return err
		}
		back := make([]float32, len(x))
		if err := cuda.CopyDtoH(back, in); err != nil {
			return err
		}
		for i := range back {
			if math.Abs(float64(back[i])/n-float64(re[i])) > 1e-5*n {
				t.Fatalf("C2R round trip [%d] = %v, want %v", i, back[i]/n, re[i])
			}
		}
		return dev.Synchronize()
	})
	if err != nil {
		t.Fatal(err)
	}
}
