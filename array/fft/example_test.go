package fft_test

import (
	"fmt"

	"github.com/gocu-dev/gocu/array"
	"github.com/gocu-dev/gocu/array/fft"
)

func ExampleFFT() {
	x := array.FromSlice([]float64{1, 2, 3, 4}, 4)
	y, err := fft.FFT(x).Complex128s()
	fmt.Println(y, err)
	back, err := fft.IFFT(fft.FFT(x)).Real().Float64s()
	fmt.Println(back, err)
	// Output:
	// [(10+0i) (-2+2i) (-2+0i) (-2-2i)] <nil>
	// [1 2 3 4] <nil>
}

func ExampleRFFT() {
	x := array.FromSlice([]float32{0, 1, 0, -1}, 4)
	h, err := fft.RFFT(x, fft.Ortho).Complex64s()
	fmt.Println(h, err)
	// Output:
	// [(0+0i) (0-1i) (0+0i)] <nil>
}

func ExampleFFTFreq() {
	f, err := fft.FFTShift(fft.FFTFreq(5, 0.1)).Float64s()
	fmt.Println(f, err)
	// Output:
	// [-4 -2 0 2 4] <nil>
}
