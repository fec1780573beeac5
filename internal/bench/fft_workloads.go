package bench

import (
	"fmt"
	"math"
	"math/cmplx"
	"math/rand/v2"

	"github.com/gocu-dev/gocu/array"
	"github.com/gocu-dev/gocu/array/fft"
)

// The FFT and complex workloads of suite "linalg", as
// ../shared/anchors/baseline_numpy.py times them with CuPy (cuFFT and
// cuBLAS underneath): what a user writes with package fft and complex
// arrays, results closed before the next repetition.

type fftSizes struct {
	n1, side, mm int // 1-D length, 2-D side (and batch rows), matmul order
}

var (
	gpuFFT = fftSizes{n1: 1 << 24, side: 4096, mm: 4096}
	cpuFFT = fftSizes{n1: 1 << 18, side: 512, mm: 256}
)

func init() {
	suites := []string{"linalg"}
	for _, d := range []Device{CUDA, CPU} {
		sz := gpuFFT
		if d == CPU {
			sz = cpuFFT
		}
		peer := func(key string) []Peer {
			if d == CUDA {
				return []Peer{{"CuPy", key, Millis}}
			}
			return nil
		}
		for _, w := range []struct{ name, doc, key string }{
			{"fft_c64", fmt.Sprintf("fft.FFT(x), %d complex64 (cuFFT C2C)", sz.n1), "fft_2p24_c64_cupy_ms"},
			{"rfft_f32", fmt.Sprintf("fft.RFFT(x), %d float32 (cuFFT R2C)", sz.n1), "rfft_2p24_f32_cupy_ms"},
			{"fft2_c64", fmt.Sprintf("fft.FFT2(x), %d² complex64 (one 2-D cuFFT plan)", sz.side), "fft2_4096sq_c64_cupy_ms"},
			{"fft_batched_c64", fmt.Sprintf("fft.FFT(x, fft.Axis(1)), %d rows of %d complex64", sz.side, sz.side), "fft_batched_4096x4096_c64_cupy_ms"},
			{"complex_mul_abs_c64", fmt.Sprintf("x.Mul(x).Abs(), %d complex64", sz.n1), "complex_mul_abs_2p24_c64_cupy_ms"},
			{"matmul_c64", fmt.Sprintf("a.MatMul(b), %d² complex64", sz.mm), "matmul_4096_c64_cupy_ms"},
		} {
			kind := Compute
			if w.name == "complex_mul_abs_c64" {
				kind = Bandwidth
			}
			Register(Workload{Name: w.name, Doc: w.doc, Kind: kind, Devices: d, Suites: suites, Reps: 20,
				Peers: peer(w.key), Setup: setupFFT(sz, w.name)})
		}
	}
}

func randComplex(r *rand.Rand, n int) []complex64 {
	v := make([]complex64, n)
	for i := range v {
		v[i] = complex(float32(r.NormFloat64()), float32(r.NormFloat64()))
	}
	return v
}

// dftAt is element k of the DFT of x (length n, stride s from off), in
// complex128.
func dftAt(x []complex64, off, s, n, k int) complex128 {
	var acc complex128
	for j := range n {
		acc += complex128(x[off+j*s]) * cmplx.Rect(1, -2*math.Pi*float64((j*k)%n)/float64(n))
	}
	return acc
}

// checkComplex compares sampled got[i] with want(i), relative to scale.
func checkComplex(r *rand.Rand, what string, n int, got func(i int) complex128, want func(i int) complex128, scale float64) error {
	idx := []int{0, n - 1}
	for range 8 {
		idx = append(idx, r.IntN(n))
	}
	for _, i := range idx {
		g, w := got(i), want(i)
		if d := cmplx.Abs(g - w); !(d <= 1e-4*scale) {
			return fmt.Errorf("%s: element %d = %v, want %v", what, i, g, w)
		}
	}
	return nil
}

func setupFFT(sz fftSizes, op string) func(e *Env) (*Case, error) {
	return func(e *Env) (*Case, error) {
		dev, stream, err := arrayDevice(e)
		if err != nil {
			return nil, err
		}
		c := &linalgCase{dt: array.Complex64, dev: dev}
		r := e.Rand
		n1 := size(e, sz.n1, 1<<14)
		side := size(e, sz.side, 128)
		mm := size(e, sz.mm, 128)
		putC := func(v []complex64, shape ...int) *array.Array {
			x := array.FromComplexOn(dev.Device(), v, shape...)
			c.in = append(c.in, x)
			return x
		}
		read := func(x *array.Array) ([]complex64, error) { return x.Complex64s() }
		var flops, bytes float64
		switch op {
		case "fft_c64", "rfft_f32":
			xh := randComplex(r, n1)
			x := putC(xh, n1)
			n := n1
			if op == "rfft_f32" {
				re := x.Real().Eval()
				c.in = append(c.in, re)
				c.run = func() []*array.Array { return []*array.Array{fft.RFFT(re)} }
				flops = 2.5 * float64(n) * math.Log2(float64(n))
			} else {
				c.run = func() []*array.Array { return []*array.Array{fft.FFT(x)} }
				flops = 5 * float64(n) * math.Log2(float64(n))
			}
			c.check = func(out []*array.Array) error {
				y, err := read(out[0])
				if err != nil {
					return err
				}
				src := xh
				if op == "rfft_f32" {
					src = make([]complex64, n)
					for i, v := range xh {
						src[i] = complex(real(v), 0)
					}
				}
				// A sampled DFT entry costs n: check four.
				idx := []int{0, 1, len(y) - 1, r.IntN(len(y))}
				for _, k := range idx {
					w := dftAt(src, 0, 1, n, k)
					if d := cmplx.Abs(complex128(y[k]) - w); d > 1e-4*math.Sqrt(float64(n))*10 {
						return fmt.Errorf("%s: element %d = %v, want %v", op, k, y[k], w)
					}
				}
				return nil
			}
		case "fft2_c64", "fft_batched_c64":
			xh := randComplex(r, side*side)
			x := putC(xh, side, side)
			n := float64(side)
			if op == "fft2_c64" {
				c.run = func() []*array.Array { return []*array.Array{fft.FFT2(x)} }
				flops = 5 * n * n * math.Log2(n*n)
			} else {
				c.run = func() []*array.Array { return []*array.Array{fft.FFT(x, fft.Axis(1))} }
				flops = 5 * n * n * math.Log2(n)
			}
			c.check = func(out []*array.Array) error {
				y, err := read(out[0])
				if err != nil {
					return err
				}
				for range 4 {
					i, j := r.IntN(side), r.IntN(side)
					var w complex128
					if op == "fft2_c64" {
						// Row transforms at column j, then along the column.
						col := make([]complex64, side)
						for a := range side {
							col[a] = complex64(dftAt(xh, a*side, 1, side, j))
						}
						w = dftAt(col, 0, 1, side, i)
					} else {
						w = dftAt(xh, i*side, 1, side, j)
					}
					if d := cmplx.Abs(complex128(y[i*side+j]) - w); d > 1e-4*n*10 {
						return fmt.Errorf("%s: element [%d,%d] = %v, want %v", op, i, j, y[i*side+j], w)
					}
				}
				return nil
			}
		case "complex_mul_abs_c64":
			xh := randComplex(r, n1)
			x := putC(xh, n1)
			c.run = func() []*array.Array { return []*array.Array{x.Mul(x).Abs().Eval()} }
			c.check = func(out []*array.Array) error {
				y, err := out[0].Float32s()
				if err != nil {
					return err
				}
				return checkComplex(r, op, n1, func(i int) complex128 { return complex(float64(y[i]), 0) },
					func(i int) complex128 { v := complex128(xh[i]); return complex(cmplx.Abs(v*v), 0) }, 10)
			}
			bytes = float64(n1) * (8 + 4)
		case "matmul_c64":
			ah, bh := randComplex(r, mm*mm), randComplex(r, mm*mm)
			a, b := putC(ah, mm, mm), putC(bh, mm, mm)
			c.run = func() []*array.Array { return []*array.Array{a.MatMul(b)} }
			c.check = func(out []*array.Array) error {
				y, err := read(out[0])
				if err != nil {
					return err
				}
				return checkComplex(r, op, mm*mm, func(i int) complex128 { return complex128(y[i]) }, func(i int) complex128 {
					row, col := i/mm, i%mm
					var s complex128
					for k := range mm {
						s += complex128(ah[row*mm+k]) * complex128(bh[k*mm+col])
					}
					return s
				}, math.Sqrt(float64(mm))*10)
			}
			flops = 8 * float64(mm) * float64(mm) * float64(mm)
		default:
			return nil, fmt.Errorf("bench: unknown fft workload %q", op)
		}
		return &Case{
			Run:    c.repeat,
			Check:  func() error { return c.check(c.last) },
			Close:  c.close,
			Stream: stream,
			Flops:  flops,
			Bytes:  bytes,
		}, nil
	}
}
