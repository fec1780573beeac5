package grad

import (
	"math/rand/v2"
	"testing"

	"github.com/gocu-dev/gocu/array"
	"github.com/gocu-dev/gocu/array/fft"
)

func randArr(seed uint64, shape ...int) *array.Array {
	r := rand.New(rand.NewPCG(seed, 11))
	n := 1
	for _, d := range shape {
		n *= d
	}
	v := make([]float64, n)
	for i := range v {
		v[i] = r.NormFloat64()
	}
	return array.FromSlice(v, shape...)
}

// TestFFTGradients checks every transform's gradient against finite
// differences, for each norm, with cropping and padding, along both axes.
func TestFFTGradients(t *testing.T) {
	norms := []fft.Norm{fft.Backward, fft.Ortho, fft.Forward}
	for _, norm := range norms {
		for _, c := range []struct{ n, axis int }{{0, -1}, {3, -1}, {7, 1}, {0, 0}, {6, 0}} {
			xr, xi := randArr(1, 4, 5), randArr(2, 4, 5)
			name := string(norm)
			err := Check(func(xs ...*Var) *Var {
				yr, yi := FFT(xs[0], xs[1], c.n, c.axis, norm)
				return yr.Add(yi.Mul(0.7))
			}, []*array.Array{xr, xi}, 1e-6)
			if err != nil {
				t.Errorf("FFT %s n=%d axis=%d: %v", name, c.n, c.axis, err)
			}
			err = Check(func(xs ...*Var) *Var {
				yr, yi := IFFT(xs[0], xs[1], c.n, c.axis, norm)
				return yr.Mul(1.3).Add(yi)
			}, []*array.Array{xr, xi}, 1e-6)
			if err != nil {
				t.Errorf("IFFT %s n=%d axis=%d: %v", name, c.n, c.axis, err)
			}
			err = Check(func(xs ...*Var) *Var {
				yr, yi := RFFT(xs[0], c.n, c.axis, norm)
				return yr.Add(yi.Mul(-0.4))
			}, []*array.Array{xr}, 1e-6)
			if err != nil {
				t.Errorf("RFFT %s n=%d axis=%d: %v", name, c.n, c.axis, err)
			}
			err = Check(func(xs ...*Var) *Var {
				return IRFFT(xs[0], xs[1], c.n, c.axis, norm)
			}, []*array.Array{xr, xi}, 1e-6)
			if err != nil {
				t.Errorf("IRFFT %s n=%d axis=%d: %v", name, c.n, c.axis, err)
			}
		}
	}
	// A real signal (no imaginary part).
	err := Check(func(xs ...*Var) *Var {
		yr, yi := FFT(xs[0], nil, 0, -1, fft.Backward)
		return yr.Mul(yi)
	}, []*array.Array{randArr(3, 3, 8)}, 1e-6)
	if err != nil {
		t.Errorf("FFT of a real signal: %v", err)
	}
}
