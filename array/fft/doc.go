// Package fft computes discrete Fourier transforms of arrays, as
// numpy.fft: FFT, IFFT, RFFT, IRFFT, their 2-D and N-D forms, FFTFreq,
// RFFTFreq, FFTShift and IFFTShift.
//
// Options follow NumPy's keyword arguments: N (n), S (s), Axis, Axes and
// a Norm ("backward", the default; "ortho"; "forward").
//
// float32, complex64 and the low-precision floats give complex64 results
// (RFFT) or float32 (IRFFT), as CuPy and PyTorch do; NumPy gives
// complex128. Every other input gives complex128 or float64.
//
// The transforms run on the host with gonum's dsp/fourier (any length,
// rows on all cores) on every device: a GPU array is copied to the host
// and back. cuFFT (package cufft) is not wired in yet.
package fft
