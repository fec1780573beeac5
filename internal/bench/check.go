package bench

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"sync"
)

// CPU references and the checks that compare outputs with them. Inputs are
// random, outputs are poisoned before the first run (0xFF bytes: NaN in
// float32, 255 in uint8, which no grayscale value reaches), so an element
// the device never wrote fails.

// parallel runs f over [0, n) split into one chunk per CPU, each of at
// least grain elements.
func parallel(n, grain int, f func(lo, hi int)) {
	w := min(runtime.GOMAXPROCS(0), max(1, n/grain))
	var wg sync.WaitGroup
	for i := range w {
		lo, hi := n*i/w, n*(i+1)/w
		wg.Go(func() { f(lo, hi) })
	}
	wg.Wait()
}

// randFloats returns n uniform float32 in [-1, 1), drawn in parallel from
// streams seeded by r.
func randFloats(r *rand.Rand, n int) []float32 {
	x := make([]float32, n)
	seed := r.Uint64()
	parallel(n, 1<<16, func(lo, hi int) {
		g := rand.New(rand.NewPCG(seed, uint64(lo)))
		for i := lo; i < hi; i++ {
			x[i] = 2*g.Float32() - 1
		}
	})
	return x
}

// randBytes returns n random bytes.
func randBytes(r *rand.Rand, n int) []byte {
	x := make([]byte, n)
	seed := r.Uint64()
	parallel(n, 1<<16, func(lo, hi int) {
		g := rand.New(rand.NewPCG(seed, uint64(lo)))
		for i := lo; i < hi; i++ {
			x[i] = byte(g.Uint32())
		}
	})
	return x
}

// randInts returns n random integers from -8 to 8 without 0, as float32.
func randInts(r *rand.Rand, n int) []float32 {
	x := make([]float32, n)
	seed := r.Uint64()
	parallel(n, 1<<16, func(lo, hi int) {
		g := rand.New(rand.NewPCG(seed, uint64(lo)))
		for i := lo; i < hi; i++ {
			v := float32(1 + g.IntN(8))
			if g.IntN(2) == 0 {
				v = -v
			}
			x[i] = v
		}
	})
	return x
}

// checkElems compares n elements with a reference: ref(i) returns the
// expected value and the tolerance (0: the very same float). NaN, the
// poison, never passes.
func checkElems(what string, got []float32, n int, ref func(i int) (want float32, tol float64)) error {
	if len(got) != n {
		return fmt.Errorf("%s: %d elements, want %d", what, len(got), n)
	}
	var bad error
	var once sync.Once
	parallel(n, 1<<16, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			want, tol := ref(i)
			g := got[i]
			if g == want || tol > 0 && math.Abs(float64(g)-float64(want)) <= tol {
				continue
			}
			once.Do(func() { bad = fmt.Errorf("%s: element %d is %v, want %v (tolerance %.3g)", what, i, g, want, tol) })
			return
		}
	})
	return bad
}

func poisonBytes(b []byte) {
	for i := range b {
		b[i] = 0xFF
	}
}

// sameBytes compares two byte slices and names the first difference.
func sameBytes(what string, got, want []byte) error {
	if len(got) != len(want) {
		return fmt.Errorf("%s: %d bytes, want %d", what, len(got), len(want))
	}
	if bytes.Equal(got, want) {
		return nil
	}
	for i := range got {
		if got[i] != want[i] {
			return fmt.Errorf("%s: byte %d is %#02x, want %#02x", what, i, got[i], want[i])
		}
	}
	return nil
}

// grayWeights are the lecture's luminance weights as float32 constants.
var grayWeights = [3]float32{0.2989, 0.5870, 0.1140}

// checkGray compares a grayscale image of n pixels with the planar rgb
// input. The kernel computes 0.2989f*r + 0.5870f*g + 0.1140f*b in float32
// and truncates; a compiler may fuse the multiply-adds, which changes the
// last bit, so an exact value within 1e-4 of an integer may truncate
// either way. Every other pixel must match exactly.
func checkGray(rgb, gray []byte, n int) error {
	if len(gray) < n || len(rgb) < 3*n {
		return fmt.Errorf("grayscale: %d pixels and %d input bytes for n = %d", len(gray), len(rgb), n)
	}
	wr, wg, wb := float64(grayWeights[0]), float64(grayWeights[1]), float64(grayWeights[2])
	var bad error
	var once sync.Once
	parallel(n, 1<<16, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			exact := wr*float64(rgb[i]) + wg*float64(rgb[i+n]) + wb*float64(rgb[i+2*n])
			want := math.Floor(exact)
			got := float64(gray[i])
			if got == want {
				continue
			}
			frac := exact - want
			if (frac < 1e-4 && got == want-1) || (frac > 1-1e-4 && got == want+1) {
				continue
			}
			once.Do(func() {
				bad = fmt.Errorf("grayscale: pixel %d (r=%d g=%d b=%d) is %v, want %v", i, rgb[i], rgb[i+n], rgb[i+2*n], got, want)
			})
			return
		}
	})
	return bad
}

// Matmul checks. c = a b, row-major, a m x k, b k x n. Every element of c
// must be finite (catches poison: an element never written), and sampled
// whole rows and columns are compared with a float64 reference within the
// rounding bound |c - ref| <= tol * sum_k |a_ik| |b_kj| (tol is 3e-4 for
// FP32 accumulation over k <= 4096 terms, 4e-3 for TF32 inputs rounded to
// 10-bit mantissas): a wrong index or a missed tile misses by orders of
// magnitude more.
const (
	tolFP32 = 3e-4
	tolTF32 = 4e-3
)

func checkMatmul(a, b, c []float32, m, n, k int, tol float64, r *rand.Rand) error {
	if len(a) < m*k || len(b) < k*n || len(c) < m*n {
		return fmt.Errorf("matmul: buffers of %d, %d, %d elements for %dx%dx%d", len(a), len(b), len(c), m, n, k)
	}
	var bad error
	var once sync.Once
	fail := func(err error) { once.Do(func() { bad = err }) }
	parallel(m*n, 1<<16, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			if v := float64(c[i]); math.IsNaN(v) || math.IsInf(v, 0) {
				fail(fmt.Errorf("matmul: c[%d][%d] = %v: never written or overflowed", i/n, i%n, c[i]))
				return
			}
		}
	})
	if bad != nil {
		return bad
	}
	const samples = 16
	var rows, cols []int
	for range samples {
		rows = append(rows, r.IntN(m))
		cols = append(cols, r.IntN(n))
	}
	rows = append(rows, 0, m-1)
	cols = append(cols, 0, n-1)
	elem := func(i, j int) {
		var ref, mag float64
		for p := range k {
			x, y := float64(a[i*k+p]), float64(b[p*n+j])
			ref += x * y
			mag += math.Abs(x * y)
		}
		if d := math.Abs(float64(c[i*n+j]) - ref); d > tol*mag || math.IsNaN(d) {
			fail(fmt.Errorf("matmul: c[%d][%d] = %v, want %v (error %.3g, bound %.3g)", i, j, c[i*n+j], ref, d, tol*mag))
		}
	}
	parallel(len(rows)*n+len(cols)*m, 64, func(lo, hi int) {
		for t := lo; t < hi; t++ {
			if t < len(rows)*n {
				elem(rows[t/n], t%n)
			} else {
				u := t - len(rows)*n
				elem(u%m, cols[u/m])
			}
		}
	})
	return bad
}
