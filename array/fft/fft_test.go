package fft_test

import (
	"errors"
	"math"
	"math/cmplx"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/gocu-dev/gocu"
	"github.com/gocu-dev/gocu/array"
	"github.com/gocu-dev/gocu/array/fft"
)

func crandn(seed uint64, n int) []complex128 {
	r := rand.New(rand.NewPCG(seed, 3))
	v := make([]complex128, n)
	for i := range v {
		v[i] = complex(r.NormFloat64(), r.NormFloat64())
	}
	return v
}

// dft is the O(n²) transform in float64, the reference of the tests.
func dft(x []complex128, inverse bool) []complex128 {
	n := len(x)
	s := -1.0
	if inverse {
		s = 1
	}
	out := make([]complex128, n)
	for k := range out {
		var acc complex128
		for j, v := range x {
			acc += v * cmplx.Rect(1, s*2*math.Pi*float64((j*k)%n)/float64(n))
		}
		out[k] = acc
	}
	return out
}

func maxErr(got, want []complex128) float64 {
	e, scale := 0.0, 1.0
	for i := range want {
		e = math.Max(e, cmplx.Abs(got[i]-want[i]))
		scale = math.Max(scale, cmplx.Abs(want[i]))
	}
	return e / scale
}

// TestRandomLengths compares FFT with the direct DFT and checks round trips
// and Parseval on odd, even and prime lengths, in both precisions.
func TestRandomLengths(t *testing.T) {
	for _, n := range []int{1, 2, 3, 6, 11, 13, 16, 45, 101, 128, 243, 257} {
		x := crandn(uint64(n), 3*n)
		for _, dt := range []array.DType{array.Complex128, array.Complex64} {
			tol := 1e-12
			if dt == array.Complex64 {
				tol = 2e-6
			}
			a := array.FromComplex(x, 3, n).AsType(dt)
			y := fft.FFT(a)
			if y.DType() != dt {
				t.Fatalf("n=%d: FFT of %v gives %v", n, dt, y.DType())
			}
			got := values(t, y)
			for r := 0; r < 3; r++ {
				xr := values(t, a)[r*n : (r+1)*n]
				if e := maxErr(got[r*n:(r+1)*n], dft(xr, false)); e > tol {
					t.Errorf("n=%d %v row %d: error %g against the DFT", n, dt, r, e)
				}
				// Parseval: sum |x|² = sum |X|² / n.
				var ex, eX float64
				for i := range xr {
					ex += real(xr[i] * cmplx.Conj(xr[i]))
					v := got[r*n+i]
					eX += real(v * cmplx.Conj(v))
				}
				if math.Abs(ex-eX/float64(n)) > 10*tol*ex {
					t.Errorf("n=%d %v row %d: Parseval %g vs %g", n, dt, r, ex, eX/float64(n))
				}
			}
			back := values(t, fft.IFFT(y))
			if e := maxErr(back, values(t, a)); e > tol {
				t.Errorf("n=%d %v: IFFT(FFT(x)) error %g", n, dt, e)
			}
			o := fft.IFFT(fft.FFT(a, fft.Ortho), fft.Ortho)
			if e := maxErr(values(t, o), values(t, a)); e > tol {
				t.Errorf("n=%d %v: ortho round trip error %g", n, dt, e)
			}
		}
		// Real transforms of real input.
		re := make([]float64, n)
		for i := range re {
			re[i] = real(x[i])
		}
		r := array.FromSlice(re, n)
		h := fft.RFFT(r)
		if h.DType() != array.Complex128 || h.Shape()[0] != n/2+1 {
			t.Fatalf("RFFT: %v %v", h.DType(), h.Shape())
		}
		back, err := fft.IRFFT(h, fft.N(n)).Float64s()
		if err != nil {
			t.Fatal(err)
		}
		for i := range re {
			if math.Abs(back[i]-re[i]) > 1e-12 {
				t.Errorf("n=%d: IRFFT(RFFT(x))[%d] = %v, want %v", n, i, back[i], re[i])
				break
			}
		}
		r32 := r.AsType(array.Float32)
		if d := fft.RFFT(r32).DType(); d != array.Complex64 {
			t.Errorf("RFFT of float32 gives %v, want complex64", d)
		}
		if d := fft.IRFFT(fft.RFFT(r32), fft.N(n)).DType(); d != array.Float32 {
			t.Errorf("IRFFT of complex64 gives %v, want float32", d)
		}
	}
}

func TestIntegerInput(t *testing.T) {
	y := fft.FFT(array.FromSlice([]int32{1, 2, 3, 4}, 4))
	got := values(t, y)
	if y.DType() != array.Complex128 || got[0] != 10 || got[2] != -2 {
		t.Errorf("FFT of int32: %v %v", y.DType(), got)
	}
}

func TestErrors(t *testing.T) {
	x := array.FromComplex(crandn(1, 8), 2, 4)
	r := array.FromSlice([]float64{1, 2, 3}, 3)
	for name, y := range map[string]*array.Array{
		"norm":        fft.FFT(x, fft.Norm("none")),
		"n":           fft.FFT(x, fft.N(-2)),
		"axis":        fft.FFT(x, fft.Axis(2)),
		"0-d":         fft.FFT(array.FromComplex([]complex128{1, 2}).Sum()),
		"rfft cplx":   fft.RFFT(x),
		"s and axes":  fft.FFTN(x, fft.S(2, 2), fft.Axes(0)),
		"irfft n=0":   fft.IRFFT(array.FromComplex([]complex128{1}, 1)),
		"fftfreq":     fft.FFTFreq(0, 1),
		"rfftfreq":    fft.RFFTFreq(-1, 1),
		"shift axis":  fft.FFTShift(r, 3),
		"ifftn axes":  fft.IFFTN(x, fft.Axes(5)),
		"irfftn norm": fft.IRFFTN(x, fft.Norm("x")),
	} {
		if err := y.Err(); !errors.Is(err, fft.ErrValue) {
			t.Errorf("%s: %v, want fft.ErrValue", name, err)
		}
	}
	f8 := array.FromSlice([]float32{1, 2}, 2).AsType(array.Float8E4M3)
	if err := fft.FFT(f8).Err(); !errors.Is(err, fft.ErrValue) {
		t.Errorf("float8: %v", err)
	}
	failed := array.Failed(errors.New("boom"))
	if err := fft.FFT(failed).Err(); err == nil || err.Error() != "boom" {
		t.Errorf("a failed input gives %v", err)
	}
}

var gpuOnce = sync.OnceValues(func() (*array.Maker, error) {
	if err := gocu.GPUUsable(); err != nil {
		return nil, err
	}
	return array.GPU(0)
})

func testGPU(t testing.TB) *array.Maker {
	t.Helper()
	d, err := gpuOnce()
	if err != nil {
		t.Skipf("no usable GPU (%v): the cuFFT path is not tested", err)
	}
	return d
}

// TestGPUMatchesCPU runs every transform on fresh random inputs through
// cuFFT and compares with the CPU.
func TestGPUMatchesCPU(t *testing.T) {
	g := testGPU(t)
	cpu := array.CPU()
	shapes := [][]int{{16}, {17}, {3, 97}, {4, 6, 10}, {2, 3, 5, 7}}
	for si, shape := range shapes {
		size := 1
		for _, d := range shape {
			size *= d
		}
		for _, dt := range []array.DType{array.Complex64, array.Complex128} {
			tol := 1e-11
			if dt == array.Complex64 {
				tol = 2e-5
			}
			z := array.FromComplexOn(cpu.Device(), crandn(uint64(si+10), size), shape...).AsType(dt)
			zg := z.To(g.Device())
			r := len(shape)
			type tc struct {
				name     string
				cpu, gpu *array.Array
			}
			cases := []tc{
				{"fft", fft.FFT(z), fft.FFT(zg)},
				{"fft axis 0 n", fft.FFT(z, fft.Axis(0), fft.N(5)), fft.FFT(zg, fft.Axis(0), fft.N(5))},
				{"ifft ortho", fft.IFFT(z, fft.Ortho), fft.IFFT(zg, fft.Ortho)},
				{"rfft", fft.RFFT(rr(z)), fft.RFFT(rr(zg))},
				{"irfft", fft.IRFFT(z, fft.N(9)), fft.IRFFT(zg, fft.N(9))},
				{"fftn", fft.FFTN(z), fft.FFTN(zg)},
				{"ifftn forward", fft.IFFTN(z, fft.Forward), fft.IFFTN(zg, fft.Forward)},
				{"rfftn", fft.RFFTN(rr(z)), fft.RFFTN(rr(zg))},
				{"irfftn", fft.IRFFTN(z), fft.IRFFTN(zg)},
				{"fftshift", fft.FFTShift(z), fft.FFTShift(zg)},
			}
			if r >= 2 {
				cases = append(cases,
					tc{"fft2", fft.FFT2(z), fft.FFT2(zg)},
					tc{"ifft2 s", fft.IFFT2(z, fft.S(4, 3)), fft.IFFT2(zg, fft.S(4, 3))},
					tc{"fftn axes", fft.FFTN(z, fft.Axes(0, r-1)), fft.FFTN(zg, fft.Axes(0, r-1))})
			}
			for _, c := range cases {
				if err := c.gpu.Err(); err != nil {
					t.Errorf("%v %v %s: %v", shape, dt, c.name, err)
					continue
				}
				if c.gpu.DType() != c.cpu.DType() {
					t.Errorf("%v %v %s: GPU dtype %v, CPU %v", shape, dt, c.name, c.gpu.DType(), c.cpu.DType())
				}
				want := values(t, c.cpu)
				got := values(t, c.gpu.To(cpu.Device()))
				if len(got) != len(want) {
					t.Errorf("%v %v %s: %d values, want %d", shape, dt, c.name, len(got), len(want))
					continue
				}
				if e := maxErr(got, want); e > tol {
					t.Errorf("%v %v %s: error %g against the CPU", shape, dt, c.name, e)
				}
			}
		}
	}
}

// rr is the real part of x, in x's float precision.
func rr(x *array.Array) *array.Array { return x.Real() }
