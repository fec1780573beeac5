package array

import (
	"errors"
	"math"
	"math/cmplx"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/gocu-dev/gocu/array/internal/backend"
)

// randComplexValues draws n standard complex normal values that dt holds
// exactly.
func randComplexValues(r *rand.Rand, dt DType, n int) []complex128 {
	v := make([]complex128, n)
	for i := range v {
		re, im := r.NormFloat64(), r.NormFloat64()
		if dt == Complex64 {
			re, im = float64(float32(re)), float64(float32(im))
		}
		v[i] = complex(re, im)
	}
	return v
}

// complexOn makes a materialised complex array of dtype dt holding v.
func complexOn(t *testing.T, d *Maker, dt DType, v []complex128, shape ...int) *Array {
	t.Helper()
	var a *Array
	if dt == Complex64 {
		c := make([]complex64, len(v))
		for i, x := range v {
			c[i] = complex64(x)
		}
		a = fromComplexOn(d, c, shape...)
	} else {
		a = fromComplexOn(d, v, shape...)
	}
	if err := a.Eval().Err(); err != nil {
		t.Fatal(err)
	}
	return a
}

// readComplex reads a complex or real array as complex128 values.
func readComplex(t *testing.T, a *Array) []complex128 {
	t.Helper()
	if a.DType().IsComplex() {
		v, err := ToComplex[complex128](a.AsType(Complex128))
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	f, err := ToSlice[float64](a)
	if err != nil {
		t.Fatal(err)
	}
	v := make([]complex128, len(f))
	for i, x := range f {
		v[i] = complex(x, 0)
	}
	return v
}

// TestComplexChainsFuse checks that chains of complex operations are one
// program (one kernel launch on a GPU) reading their inputs once, on
// fresh random inputs against complex128 references.
func TestComplexChainsFuse(t *testing.T) {
	forEachBackend(t, func(t *testing.T, d0 *Maker) {
		d, c := countingOn(d0)
		r := newRand(t)
		for _, dt := range []DType{Complex64, Complex128} {
			const n = 3001 // odd, several blocks
			av, bv := randComplexValues(r, dt, n), randComplexValues(r, dt, n)
			a, b := complexOn(t, d, dt, av, n), complexOn(t, d, dt, bv, n)
			cases := []struct {
				name  string
				f     func() *Array
				want  func(x, y complex128) complex128
				rdt   DType // the result's dtype
				evals int64 // programs run, -1 for not checked
			}{
				{"abs(a*b)", func() *Array { return a.Mul(b).Abs() },
					func(x, y complex128) complex128 { return complex(cmplx.Abs(x*y), 0) }, dt.component(), 1},
				{"abs(a*a)", func() *Array { return a.Mul(a).Abs() },
					func(x, y complex128) complex128 { return complex(cmplx.Abs(x*x), 0) }, dt.component(), 1},
				{"a*b", func() *Array { return a.Mul(b) },
					func(x, y complex128) complex128 { return x * y }, dt, 1},
				{"conj(a+b)-a", func() *Array { return a.Add(b).Conj().Sub(a) },
					func(x, y complex128) complex128 { return cmplx.Conj(x+y) - x }, dt, 1},
				{"-(a-b)*2.5", func() *Array { return a.Sub(b).Mul(2.5).Neg() },
					func(x, y complex128) complex128 { return -((x - y) * 2.5) }, dt, 1},
				{"a/b", func() *Array { return a.Div(b) },
					func(x, y complex128) complex128 { return x / y }, dt, 1},
				{"real(a*b)+imag(a-b)", func() *Array { return a.Mul(b).Real().Add(a.Sub(b).Imag()) },
					func(x, y complex128) complex128 { return complex(real(x*y)+imag(x-y), 0) }, dt.component(), 1},
				{"angle(a*conj(b))", func() *Array { return a.Mul(b.Conj()).Angle() },
					func(x, y complex128) complex128 { return complex(cmplx.Phase(x*cmplx.Conj(y)), 0) }, dt.component(), 1},
				{"exp(a)*b", func() *Array { return a.Exp().Mul(b) },
					func(x, y complex128) complex128 { return cmplx.Exp(x) * y }, dt, 1},
				{"exp(a*b)", func() *Array { return a.Mul(b).Exp() },
					func(x, y complex128) complex128 { return cmplx.Exp(x * y) }, dt, -1},
				{"sqrt(a)+log(b)", func() *Array { return a.Sqrt().Add(b.Log()) },
					func(x, y complex128) complex128 { return cmplx.Sqrt(x) + cmplx.Log(y) }, dt, -1},
			}
			tol := 1e-13
			if dt == Complex64 {
				tol = 4e-6
			}
			for _, tc := range cases {
				e0, a0 := c.evals.Load(), c.allocs.Load()
				y := tc.f()
				if err := errOf("test", y); err != nil {
					t.Fatalf("%v %s: %v", dt, tc.name, err)
				}
				if y.DType() != tc.rdt {
					t.Errorf("%v %s: dtype %v, want %v", dt, tc.name, y.DType(), tc.rdt)
				}
				if tc.evals == 1 && (c.evals.Load() != e0 || c.allocs.Load() != a0) {
					t.Errorf("%v %s: building the chain evaluated or allocated", dt, tc.name)
				}
				if err := y.Eval().Err(); err != nil {
					t.Fatalf("%v %s: %v", dt, tc.name, err)
				}
				if n := c.evals.Load() - e0; tc.evals >= 0 && n != tc.evals {
					t.Errorf("%v %s: %d programs, want %d", dt, tc.name, n, tc.evals)
				}
				if n := c.allocs.Load() - a0; tc.evals >= 0 && n != tc.evals {
					t.Errorf("%v %s: %d allocations, want %d (one per program)", dt, tc.name, n, tc.evals)
				}
				got := readComplex(t, y)
				y.Close()
				for i := range got {
					w := tc.want(av[i], bv[i])
					if d := cmplx.Abs(got[i] - w); !(d <= tol*(1+cmplx.Abs(w))) {
						t.Errorf("%v %s: element %d = %v, want %v", dt, tc.name, i, got[i], w)
						break
					}
				}
			}
			closeAll(a, b)
		}
	})
}

// TestComplexAbsExtremes checks that Abs is hypot, as NumPy's: no
// overflow or underflow from squaring large or tiny parts, inf where a
// part is infinite even beside a NaN; on materialised and pending arrays.
func TestComplexAbsExtremes(t *testing.T) {
	forEachBackend(t, func(t *testing.T, d *Maker) {
		inf, nan := math.Inf(1), math.NaN()
		for _, dt := range []DType{Complex64, Complex128} {
			big, tiny := 2e38, 1e-30
			if dt == Complex128 {
				big, tiny = 1e308, 1e-300
			}
			v := []complex128{complex(big, big), complex(tiny, -tiny), complex(3, -4), complex(inf, nan),
				complex(nan, -inf), complex(nan, 1), 0}
			want := []float64{big * math.Sqrt2, tiny * math.Sqrt2, 5, inf, inf, nan, 0}
			if dt == Complex64 {
				want[0] = float64(float32(2e38 * math.Sqrt2))
				want[1] = float64(float32(1e-30 * math.Sqrt2))
			}
			if dt == Complex128 {
				want[0] = inf // 1e308·√2 overflows float64 itself
			}
			x := complexOn(t, d, dt, v, len(v))
			for _, y := range []*Array{x.Abs(), x.Conj().Abs()} {
				got := readHost(t, y).v
				for i, w := range want {
					if !(got[i] == w || math.IsNaN(w) && math.IsNaN(got[i]) || math.Abs(got[i]-w) <= 1e-6*w) {
						t.Errorf("%v abs(%v) = %v, want %v", dt, v[i], got[i], w)
					}
				}
				y.Close()
			}
			x.Close()
		}
	})
}

// TestComplexPackCases covers what a pending complex array's evaluation
// must handle besides plain parts: parts that read OpIota, broadcast
// parts, a result assigned into a strided view, and a pending array used
// twice (evaluated once, then read).
func TestComplexPackCases(t *testing.T) {
	forEachBackend(t, func(t *testing.T, d0 *Maker) {
		d, c := countingOn(d0)
		k := d.Arange(Float64, 5)
		z := Complex(k, k.Mul(2).Add(1))
		checkComplexValues(t, "complex(arange)", z, func(i int) complex128 { return complex(float64(i), float64(2*i+1)) })
		re := d.Arange(Float32, 3).Add(1).Eval()
		im := fromSliceOn(d, []float32{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}, 4, 3)
		b := Complex(re, im)
		if err := b.Err(); err != nil {
			t.Fatal(err)
		}
		if got := b.Shape(); len(got) != 2 || got[0] != 4 || got[1] != 3 {
			t.Fatalf("broadcast shape %v", got)
		}
		rb := b.Real()
		if got := rb.Shape(); len(got) != 2 || got[0] != 4 || got[1] != 3 {
			t.Errorf("the real part of a broadcast complex array has shape %v", got)
		}
		checkComplexValues(t, "broadcast", b, func(i int) complex128 { return complex(float64(i%3+1), float64(i+1)) })
		r := newRand(t)
		av := randComplexValues(r, Complex64, 8)
		a := complexOn(t, d, Complex64, av, 8)
		dst := d.Zeros(Complex64, 16)
		if err := dst.Slice(S(1, 16, 2)).Assign(a.Mul(a)); err != nil {
			t.Fatal(err)
		}
		checkComplexValues(t, "assign", dst, func(i int) complex128 {
			if i%2 == 0 {
				return 0
			}
			return complex128(complex64(av[i/2] * av[i/2]))
		})
		e0 := c.evals.Load()
		p := a.Mul(a)
		q, s := p.Abs(), p.Real()
		checkComplexValues(t, "shared abs", q, func(i int) complex128 { return complex(float64(float32(cmplx.Abs(av[i]*av[i]))), 0) })
		checkComplexValues(t, "shared real", s, func(i int) complex128 { return complex(float64(real(complex64(av[i]*av[i]))), 0) })
		if n := c.evals.Load() - e0; n > 3 {
			t.Errorf("a pending complex array used twice: %d programs, want at most 3", n)
		}
	})
}

func checkComplexValues(t *testing.T, what string, a *Array, want func(i int) complex128) {
	t.Helper()
	got := readComplex(t, a)
	for i, g := range got {
		w := want(i)
		if d := cmplx.Abs(g - w); !(d <= 1e-6*(1+cmplx.Abs(w))) {
			t.Errorf("%s: element %d = %v, want %v", what, i, g, w)
			return
		}
	}
}

// TestComplexTemporariesHoldNoMemory checks that complex operations close
// their temporaries: once the inputs and the result are closed, every
// buffer is free again without a collection.
func TestComplexTemporariesHoldNoMemory(t *testing.T) {
	c := &liveBackend{Backend: CPU().be, bufs: map[backend.Buffer]bool{}}
	d := &Maker{be: c}
	r := newRand(t)
	// Single operations: the intermediate of a chain is the caller's to
	// close, as with real arrays.
	ops := map[string]func(x, y *Array) *Array{
		"abs(x)":  func(x, y *Array) *Array { return x.Abs() },
		"x*y":     func(x, y *Array) *Array { return x.Mul(y) },
		"x+y":     func(x, y *Array) *Array { return x.Add(y) },
		"x/y":     func(x, y *Array) *Array { return x.Div(y) },
		"conj(x)": func(x, y *Array) *Array { return x.Conj() },
		"-x":      func(x, y *Array) *Array { return x.Neg() },
		"exp(x)":  func(x, y *Array) *Array { return x.Exp() },
		"log(x)":  func(x, y *Array) *Array { return x.Log() },
		"x==y":    func(x, y *Array) *Array { return x.Eq(y) },
		"1/x":     func(x, y *Array) *Array { return x.Reciprocal() },
		"x*2.5":   func(x, y *Array) *Array { return x.Mul(2.5) },
		"angle":   func(x, y *Array) *Array { return x.Angle() },
		"real":    func(x, y *Array) *Array { return x.Real() },
	}
	base := c.live()
	for name, f := range ops {
		x := complexOn(t, d, Complex64, randComplexValues(r, Complex64, 100), 100)
		y := complexOn(t, d, Complex64, randComplexValues(r, Complex64, 100), 100)
		z := f(x, y)
		if err := z.Eval().Err(); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		closeAll(x, y, z)
		if n := c.live() - base; n != 0 {
			t.Errorf("%s: %d buffers still live", name, n)
		}
	}
}

// liveBackend counts the buffers it allocated that are not freed yet
// (frees of views it did not allocate are not counted).
type liveBackend struct {
	backend.Backend
	mu   sync.Mutex
	bufs map[backend.Buffer]bool
}

func (l *liveBackend) Alloc(dt backend.DType, n int) (backend.Buffer, error) {
	b, err := l.Backend.Alloc(dt, n)
	if err == nil {
		l.mu.Lock()
		l.bufs[b] = true
		l.mu.Unlock()
	}
	return b, err
}

func (l *liveBackend) Free(b backend.Buffer) {
	l.mu.Lock()
	delete(l.bufs, b)
	l.mu.Unlock()
	l.Backend.Free(b)
}

func (l *liveBackend) live() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.bufs)
}

// TestComplexAssign writes complex values into complex arrays and views:
// arrays of the same and of another dtype, real arrays and Go numbers, the
// array itself (conjugated in place) and an overlapping view of it; a
// complex source for a real destination is an ErrDType error.
func TestComplexAssign(t *testing.T) {
	forEachBackend(t, func(t *testing.T, d *Maker) {
		r := newRand(t)
		const n = 7
		xv := randComplexValues(r, Complex64, n)
		x := complexOn(t, d, Complex64, xv, n)
		c64 := func(v complex128) complex128 { return complex128(complex64(v)) }
		dst := d.Zeros(Complex64, 2*n).Eval()
		if err := dst.Slice(S(1, 2*n, 2)).Assign(x); err != nil {
			t.Fatal(err)
		}
		checkComplexValues(t, "into a strided view", dst, func(i int) complex128 {
			if i%2 == 0 {
				return 0
			}
			return xv[i/2]
		})
		if err := dst.Slice(S(0, 2*n, 2)).Assign(complex(1, -2)); err != nil {
			t.Fatal(err)
		}
		if err := dst.Slice(S(1, 2*n, 2)).Assign(x.Mul(x)); err != nil {
			t.Fatal(err)
		}
		checkComplexValues(t, "a Go number and a pending product", dst, func(i int) complex128 {
			if i%2 == 0 {
				return complex(1, -2)
			}
			return c64(xv[i/2] * xv[i/2])
		})
		wide := d.Zeros(Complex128, n).Eval()
		if err := wide.Assign(x); err != nil {
			t.Fatal(err)
		}
		checkComplexValues(t, "complex64 into complex128", wide, func(i int) complex128 { return xv[i] })
		re := d.Arange(Float32, n).Eval()
		if err := wide.Assign(re); err != nil {
			t.Fatal(err)
		}
		checkComplexValues(t, "a real array", wide, func(i int) complex128 { return complex(float64(i), 0) })
		y := complexOn(t, d, Complex64, xv, n)
		if err := y.Assign(y.Conj()); err != nil {
			t.Fatal(err)
		}
		checkComplexValues(t, "conjugated in place", y, func(i int) complex128 { return cmplx.Conj(xv[i]) })
		z := complexOn(t, d, Complex64, xv, n)
		if err := z.Slice(S(1, n)).Assign(z.Slice(S(0, n-1))); err != nil {
			t.Fatal(err)
		}
		checkComplexValues(t, "an overlapping view", z, func(i int) complex128 { return xv[max(i-1, 0)] })
		f := d.Zeros(Float32, n).Eval()
		if err := f.Assign(x); !errors.Is(err, ErrDType) {
			t.Errorf("complex into float32: %v, want ErrDType", err)
		}
	})
}
