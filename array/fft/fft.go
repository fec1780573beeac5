package fft

import (
	"errors"
	"fmt"
	"math"
	"runtime"
	"sync"

	"github.com/gocu-dev/gocu/array"
	"gonum.org/v1/gonum/dsp/fourier"
)

// ErrValue reports invalid arguments: a bad length, axis or norm.
var ErrValue = errors.New("fft: invalid argument")

// Error is a failure of an fft function.
type Error struct {
	Op  string
	Msg string
}

func (e *Error) Error() string { return "fft." + e.Op + ": " + e.Msg }

// Is makes errors.Is(err, ErrValue) true.
func (e *Error) Is(target error) bool { return target == ErrValue }

func errorf(op, format string, args ...any) *array.Array {
	return array.Failed(&Error{Op: op, Msg: fmt.Sprintf(format, args...)})
}

// Norm is a normalisation mode, as NumPy's norm argument.
type Norm string

// The normalisation modes.
const (
	Backward Norm = "backward" // forward unscaled, inverse by 1/n (the default)
	Ortho    Norm = "ortho"    // both by 1/sqrt(n)
	Forward  Norm = "forward"  // forward by 1/n, inverse unscaled
)

// An Option sets one argument of a transform.
type Option interface{ apply(*config) }

type config struct {
	n       int
	s       []int
	axis    int
	axes    []int
	hasAxis bool
	hasAxes bool
	norm    Norm
}

func (m Norm) apply(c *config) { c.norm = m }

type optFunc func(*config)

func (f optFunc) apply(c *config) { f(c) }

// N sets the length of a 1-D transform's input (output for IRFFT): the
// input is cropped or padded with zeros to it.
func N(n int) Option { return optFunc(func(c *config) { c.n = n }) }

// S sets the lengths of an N-D transform, one per axis.
func S(s ...int) Option {
	return optFunc(func(c *config) { c.s = append([]int(nil), s...) })
}

// Axis sets a 1-D transform's axis (default -1).
func Axis(ax int) Option { return optFunc(func(c *config) { c.axis, c.hasAxis = ax, true }) }

// Axes sets an N-D transform's axes (default all, or the last two for the
// 2-D forms).
func Axes(axes ...int) Option {
	return optFunc(func(c *config) { c.axes, c.hasAxes = append([]int(nil), axes...), true })
}

func configure(opts []Option) config {
	c := config{axis: -1, norm: Backward}
	for _, o := range opts {
		if o != nil {
			o.apply(&c)
		}
	}
	return c
}

// kind is a 1-D transform.
type kind uint8

const (
	c2c kind = iota // complex to complex
	r2c             // real to half spectrum
	c2r             // half spectrum to real
)

// scale is the factor of a transform of length n.
func scale(op string, norm Norm, n int, inverse bool) (float64, error) {
	switch norm {
	case Backward, "":
		if inverse {
			return 1 / float64(n), nil
		}
		return 1, nil
	case Ortho:
		return 1 / math.Sqrt(float64(n)), nil
	case Forward:
		if inverse {
			return 1, nil
		}
		return 1 / float64(n), nil
	}
	return 0, &Error{Op: op, Msg: fmt.Sprintf("norm %q is not one of \"backward\", \"ortho\", \"forward\"", norm)}
}

// single reports whether results of x are complex64 (float32 otherwise).
func single(dt array.DType) bool {
	switch dt {
	case array.Float32, array.Complex64, array.Float16, array.BFloat16:
		return true
	}
	return false
}

// transform1 runs a 1-D transform of length n along axis ax of x.
func transform1(op string, x *array.Array, k kind, n, ax int, inverse bool, norm Norm) *array.Array {
	if err := x.Err(); err != nil {
		return array.Failed(err)
	}
	shape := x.Shape()
	r := len(shape)
	if r == 0 {
		return errorf(op, "needs an array of at least one dimension")
	}
	if ax < -r || ax >= r {
		return errorf(op, "axis %d is out of bounds for an array of %d dimensions", ax, r)
	}
	if ax < 0 {
		ax += r
	}
	m := shape[ax]
	if n == 0 {
		n = m
		if k == c2r {
			n = 2 * (m - 1)
		}
	}
	if n < 1 {
		return errorf(op, "invalid number of data points (%d) specified", n)
	}
	f, err := scale(op, norm, n, inverse)
	if err != nil {
		return array.Failed(err)
	}
	dt := x.DType()
	if dt == array.Float8E4M3 || dt == array.Float8E5M2 {
		return errorf(op, "%v inputs are not supported: convert with AsType", dt)
	}
	if k == r2c && dt.IsComplex() {
		return errorf(op, "needs real input, got %v", dt)
	}
	one := single(dt)
	moved := x.MoveAxis(ax, -1)
	defer moved.Close()
	if isGPU(x) {
		return lastTo(gpuTransform(op, moved, k, []int{n}, inverse, f, one), ax)
	}
	rows := 1
	for i, d := range shape {
		if i != ax {
			rows *= d
		}
	}
	inLen := m
	outLen := n
	switch k {
	case r2c:
		outLen = n/2 + 1
	case c2r:
		inLen = m
	}
	var out any
	if k == r2c {
		in, err := hostValues(moved.AsType(array.Float64), (*array.Array).Float64s)
		if err != nil {
			return array.Failed(err)
		}
		res := make([]complex128, rows*outLen)
		parallel(rows, func(lo, hi int) {
			t := fourier.NewFFT(n)
			seq := make([]float64, n)
			for i := lo; i < hi; i++ {
				clear(seq)
				copy(seq, in[i*inLen:i*inLen+min(inLen, n)])
				dst := res[i*outLen : (i+1)*outLen]
				t.Coefficients(dst, seq)
				scaleC(dst, f)
			}
		})
		out = res
	} else {
		var c *array.Array
		if dt.IsComplex() {
			c = moved.AsType(array.Complex128)
		} else {
			re, im := moved.AsType(array.Float64), array.Zeros(array.Float64)
			c = array.Complex(re, im)
			re.Close()
			im.Close()
		}
		in, err := hostValues(c, (*array.Array).Complex128s)
		if err != nil {
			return array.Failed(err)
		}
		if k == c2r {
			res := make([]float64, rows*n)
			h := n/2 + 1
			parallel(rows, func(lo, hi int) {
				t := fourier.NewFFT(n)
				coef := make([]complex128, h)
				for i := lo; i < hi; i++ {
					clear(coef)
					copy(coef, in[i*inLen:i*inLen+min(inLen, h)])
					// NumPy ignores the imaginary parts at 0 and n/2.
					coef[0] = complex(real(coef[0]), 0)
					if n%2 == 0 {
						coef[h-1] = complex(real(coef[h-1]), 0)
					}
					dst := res[i*n : (i+1)*n]
					t.Sequence(dst, coef)
					for j := range dst {
						dst[j] *= f
					}
				}
			})
			out = res
		} else {
			res := make([]complex128, rows*n)
			parallel(rows, func(lo, hi int) {
				t := fourier.NewCmplxFFT(n)
				seq := make([]complex128, n)
				for i := lo; i < hi; i++ {
					clear(seq)
					copy(seq, in[i*inLen:i*inLen+min(inLen, n)])
					dst := res[i*n : (i+1)*n]
					if inverse {
						t.Sequence(dst, seq)
					} else {
						t.Coefficients(dst, seq)
					}
					scaleC(dst, f)
				}
			})
			out = res
		}
	}
	oshape := append([]int(nil), moved.Shape()...)
	oshape[r-1] = outLen
	var y *array.Array
	switch v := out.(type) {
	case []complex128:
		y = array.FromComplexOn(x.Device(), v, oshape...)
		if one {
			y = convert(y, array.Complex64)
		}
	case []float64:
		y = array.FromSliceOn(x.Device(), v, oshape...)
		if one {
			y = convert(y, array.Float32)
		}
	}
	return lastTo(y, ax)
}

// lastTo moves y's last axis to ax, closing y when that makes a view.
func lastTo(y *array.Array, ax int) *array.Array {
	if ax == len(y.Shape())-1 || y.Err() != nil {
		return y
	}
	v := y.MoveAxis(-1, ax)
	y.Close()
	return v
}

// convert is y.AsType(dt), closing y.
func convert(y *array.Array, dt array.DType) *array.Array {
	c := y.AsType(dt)
	y.Close()
	return c
}

// hostValues reads the values of x (then closed) in row-major order.
func hostValues[T any](x *array.Array, read func(*array.Array) ([]T, error)) ([]T, error) {
	defer x.Close()
	return read(x)
}

func scaleC(v []complex128, f float64) {
	if f == 1 {
		return
	}
	for i := range v {
		v[i] = complex(real(v[i])*f, imag(v[i])*f)
	}
}

// parallel runs f over [0, n) in chunks on all cores.
func parallel(n int, f func(lo, hi int)) {
	w := min(runtime.GOMAXPROCS(0), n)
	if w <= 1 {
		f(0, n)
		return
	}
	var wg sync.WaitGroup
	step := (n + w - 1) / w
	for lo := 0; lo < n; lo += step {
		wg.Add(1)
		go func(lo, hi int) {
			defer wg.Done()
			f(lo, hi)
		}(lo, min(lo+step, n))
	}
	wg.Wait()
}

// FFT is the 1-D discrete Fourier transform (numpy.fft.fft).
func FFT(x *array.Array, opts ...Option) *array.Array {
	c := configure(opts)
	return transform1("FFT", x, c2c, c.n, c.axis, false, c.norm)
}

// IFFT is the inverse of FFT (numpy.fft.ifft).
func IFFT(x *array.Array, opts ...Option) *array.Array {
	c := configure(opts)
	return transform1("IFFT", x, c2c, c.n, c.axis, true, c.norm)
}

// RFFT is the FFT of real input, its n/2+1 non-negative frequency terms
// (numpy.fft.rfft).
func RFFT(x *array.Array, opts ...Option) *array.Array {
	c := configure(opts)
	return transform1("RFFT", x, r2c, c.n, c.axis, false, c.norm)
}

// IRFFT is the inverse of RFFT (numpy.fft.irfft): n real outputs,
// 2(m-1) by default for m input terms.
func IRFFT(x *array.Array, opts ...Option) *array.Array {
	c := configure(opts)
	return transform1("IRFFT", x, c2r, c.n, c.axis, true, c.norm)
}

// axesOf resolves an N-D transform's s and axes as NumPy does.
func axesOf(op string, x *array.Array, c config, last int) (s, axes []int, err error) {
	r := len(x.Shape())
	switch {
	case c.hasAxes:
		axes = c.axes
	case c.s != nil:
		for i := r - len(c.s); i < r; i++ {
			axes = append(axes, i)
		}
	case last > 0:
		for i := max(r-last, 0); i < r; i++ {
			axes = append(axes, i)
		}
	default:
		for i := 0; i < r; i++ {
			axes = append(axes, i)
		}
	}
	if c.s != nil && len(c.s) != len(axes) {
		return nil, nil, &Error{Op: op, Msg: fmt.Sprintf("s has %d lengths, axes %d", len(c.s), len(axes))}
	}
	s = make([]int, len(axes))
	copy(s, c.s)
	return s, axes, nil
}

func transformN(op string, x *array.Array, k kind, inverse bool, last int, opts []Option) *array.Array {
	c := configure(opts)
	s, axes, err := axesOf(op, x, c, last)
	if err != nil {
		return array.Failed(err)
	}
	if len(axes) == 0 {
		return errorf(op, "needs at least one axis")
	}
	if y := trailingGPU(op, x, k, inverse, s, axes, c.norm); y != nil {
		return y
	}
	y := x
	// step applies one 1-D transform, closing the previous intermediate.
	step := func(k kind, i int, inv bool) {
		z := transform1(op, y, k, s[i], axes[i], inv, c.norm)
		if y != x {
			y.Close()
		}
		y = z
	}
	l := len(axes) - 1
	switch k {
	case r2c:
		step(r2c, l, false)
		for i := l - 1; i >= 0; i-- {
			step(c2c, i, false)
		}
	case c2r:
		for i := 0; i < l; i++ {
			step(c2c, i, true)
		}
		step(c2r, l, true)
	default:
		for i := l; i >= 0; i-- {
			step(c2c, i, inverse)
		}
	}
	return y
}

// FFT2 is the 2-D FFT over the last two axes (numpy.fft.fft2).
func FFT2(x *array.Array, opts ...Option) *array.Array {
	return transformN("FFT2", x, c2c, false, 2, opts)
}

// IFFT2 is the inverse of FFT2 (numpy.fft.ifft2).
func IFFT2(x *array.Array, opts ...Option) *array.Array {
	return transformN("IFFT2", x, c2c, true, 2, opts)
}

// FFTN is the N-D FFT over all axes by default (numpy.fft.fftn).
func FFTN(x *array.Array, opts ...Option) *array.Array {
	return transformN("FFTN", x, c2c, false, 0, opts)
}

// IFFTN is the inverse of FFTN (numpy.fft.ifftn).
func IFFTN(x *array.Array, opts ...Option) *array.Array {
	return transformN("IFFTN", x, c2c, true, 0, opts)
}

// RFFTN is the N-D FFT of real input: RFFT along the last axis, FFT along
// the others (numpy.fft.rfftn).
func RFFTN(x *array.Array, opts ...Option) *array.Array {
	return transformN("RFFTN", x, r2c, false, 0, opts)
}

// IRFFTN is the inverse of RFFTN (numpy.fft.irfftn).
func IRFFTN(x *array.Array, opts ...Option) *array.Array {
	return transformN("IRFFTN", x, c2r, true, 0, opts)
}

// FFTFreq returns the n sample frequencies of an FFT with sample spacing
// d, as float64 (numpy.fft.fftfreq).
func FFTFreq(n int, d float64) *array.Array {
	if n < 1 {
		return errorf("FFTFreq", "n must be positive, got %d", n)
	}
	v := make([]float64, n)
	for i := range v {
		k := i
		if i > (n-1)/2 {
			k = i - n
		}
		v[i] = float64(k) / (float64(n) * d)
	}
	return array.FromSlice(v, n)
}

// RFFTFreq returns the n/2+1 sample frequencies of an RFFT
// (numpy.fft.rfftfreq).
func RFFTFreq(n int, d float64) *array.Array {
	if n < 1 {
		return errorf("RFFTFreq", "n must be positive, got %d", n)
	}
	v := make([]float64, n/2+1)
	for i := range v {
		v[i] = float64(i) / (float64(n) * d)
	}
	return array.FromSlice(v, len(v))
}

// FFTShift moves the zero frequency to the centre along the axes (all by
// default), as numpy.fft.fftshift.
func FFTShift(x *array.Array, axes ...int) *array.Array { return shift("FFTShift", x, axes, false) }

// IFFTShift undoes FFTShift (numpy.fft.ifftshift).
func IFFTShift(x *array.Array, axes ...int) *array.Array { return shift("IFFTShift", x, axes, true) }

func shift(op string, x *array.Array, axes []int, inverse bool) *array.Array {
	if err := x.Err(); err != nil {
		return array.Failed(err)
	}
	shape := x.Shape()
	r := len(shape)
	if len(axes) == 0 {
		for i := 0; i < r; i++ {
			axes = append(axes, i)
		}
	}
	y := x
	for _, ax := range axes {
		if ax < -r || ax >= r {
			return errorf(op, "axis %d is out of bounds for an array of %d dimensions", ax, r)
		}
		if ax < 0 {
			ax += r
		}
		n := shape[ax]
		if n < 2 {
			continue
		}
		k := n / 2 // fftshift rolls by n/2, ifftshift by -(n/2)
		if inverse {
			k = n - n/2
		}
		// roll by k: the last k elements come first.
		idx := make([]array.Index, ax+1)
		for i := range idx {
			idx[i] = array.All
		}
		idx[ax] = array.S(n-k, n)
		a := y.Slice(idx...)
		idx[ax] = array.S(0, n-k)
		b := y.Slice(idx...)
		y = array.Concat(ax, a, b)
	}
	return y
}
