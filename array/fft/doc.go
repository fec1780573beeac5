// Package fft computes discrete Fourier transforms of arrays, as
// numpy.fft: FFT, IFFT, RFFT, IRFFT, their 2-D and N-D forms, FFTFreq,
// RFFTFreq, FFTShift and IFFTShift.
//
// Options stand for NumPy's keyword arguments: N (n), S (s), Axis, Axes
// and a Norm (Backward, the default; Ortho; Forward). A bad option is an
// error wrapping ErrValue, as NumPy's ValueError.
//
// float32, complex64 and the low-precision floats give complex64 results
// (RFFT, FFT) or float32 (IRFFT), as CuPy and PyTorch do; NumPy gives
// complex128. Every other input gives complex128 or float64.
//
// On a GPU the transforms are cuFFT plans (package cufft) from a cache of
// 16 per device, with work areas on gocu's allocator, queued on the
// device's array stream: nothing waits for the GPU. A transform over the
// last one to three axes is one plan; other axes are moved last (a copy)
// and transformed one at a time. On the CPU the transforms run in
// complex128 with gonum's dsp/fourier (any length), rows spread over all
// cores.
package fft
