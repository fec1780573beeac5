package grad_test

import (
	"testing"

	"github.com/gocu-dev/gocu/array"
	"github.com/gocu-dev/gocu/array/fft"
	"github.com/gocu-dev/gocu/grad"
	"github.com/gocu-dev/gocu/internal/gputest"
)

// TestGPUFFTGradients computes float32 FFT gradients through cuFFT and on
// the CPU from the same inputs and compares them.
func TestGPUFFTGradients(t *testing.T) {
	g, err := gpuOnce()
	gputest.Need(t, err)
	var got [2][][]float64
	for k, d := range []*array.Maker{array.CPU(), g} {
		r := d.NewRNG(7)
		xs := []*grad.Var{
			grad.Param(r.Normal(array.Float32, 0, 1, 8, 6)),
			grad.Param(r.Normal(array.Float32, 0, 1, 6, 6)),
		}
		yr, yi := grad.FFT(xs[0], xs[0].Tanh(), 0, -1, fft.Ortho)
		zr, zi := grad.RFFT(xs[1], 0, 0, fft.Backward)
		loss := yr.Mul(yi).Sum().Add(grad.IRFFT(zr, zi, 6, 0, fft.Forward).Square().Mean())
		if err := loss.Backward(); err != nil {
			t.Fatal(err)
		}
		for _, x := range xs {
			got[k] = append(got[k], vals(t, x.Grad()))
		}
	}
	for i := range got[0] {
		near(t, "FFT gradient", got[1][i], got[0][i], 1e-4)
	}
}
