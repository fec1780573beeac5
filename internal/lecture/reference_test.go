package lecture

import (
	"bytes"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// reference is a float32 product computed in float64 and rounded.
func reference(a, b []float32, m, n, k int) []float32 {
	c := make([]float32, m*n)
	for i := range m {
		for j := range n {
			var s float64
			for p := range k {
				s += float64(a[i*k+p]) * float64(b[p*n+j])
			}
			c[i*n+j] = float32(s)
		}
	}
	return c
}

// TestCheckMatMul checks that the checker passes a correct product and
// catches the mistakes a kernel makes: one product term missed, a NaN
// left by an unwritten element, a transposed operand.
func TestCheckMatMul(t *testing.T) {
	r := newRand(t)
	const m, n, k = 40, 33, 300
	a, b := RandomMatrix(r, m, k), RandomMatrix(r, k, n)
	good := reference(a, b, m, n, k)
	chk, err := CheckMatMul(a, b, good, m, n, k, 1<<20, r)
	if err != nil || chk.Checked != m*n || chk.MaxErr > 1e-7 {
		t.Fatalf("correct product: %v, %v", chk, err)
	}
	// Sampling checks the requested number of entries, corners included.
	if chk, err := CheckMatMul(a, b, good, m, n, k, 100, r); err != nil || chk.Checked != 100 {
		t.Fatalf("sampled: %v, %v", chk, err)
	}

	i, j := r.IntN(m), r.IntN(n)
	missed := append([]float32(nil), good...)
	p := r.IntN(k)
	missed[i*n+j] -= a[i*k+p] * b[p*n+j] // one term of k = 300 left out
	if math.Abs(float64(a[i*k+p]*b[p*n+j])) > 0.05 {
		if _, err := CheckMatMul(a, b, missed, m, n, k, 1<<20, r); err == nil {
			t.Errorf("a product missing term %d of c[%d][%d] passed", p, i, j)
		}
	}
	nan := append([]float32(nil), good...)
	nan[m*n-1] = float32(math.NaN())
	if _, err := CheckMatMul(a, b, nan, m, n, k, 10, r); err == nil || !strings.Contains(err.Error(), "NaN") {
		t.Errorf("a NaN in the last corner: %v", err)
	}
	// b read transposed (square so that the shapes fit).
	sq := RandomMatrix(r, 64, 64)
	tr := reference(sq, transpose(sq, 64), 64, 64, 64)
	if _, err := CheckMatMul(sq, sq, tr, 64, 64, 64, 50, r); err == nil {
		t.Error("a product with b transposed passed")
	}
	if _, err := CheckMatMul(a, b, good[:10], m, n, k, 10, r); err == nil {
		t.Error("short c: no error")
	}
}

func transpose(x []float32, n int) []float32 {
	y := make([]float32, n*n)
	for i := range n {
		for j := range n {
			y[j*n+i] = x[i*n+j]
		}
	}
	return y
}

// TestGrayReference pins the formula on hand-computed pixels.
func TestGrayReference(t *testing.T) {
	rgb := []uint8{255, 0, 0, 10, 0, 255, 0, 20, 0, 0, 255, 30}
	// 0.2989*255 = 76.2, 0.5870*255 = 149.7, 0.1140*255 = 29.07,
	// 0.2989*10 + 0.5870*20 + 0.1140*30 = 18.10.
	want := []uint8{76, 149, 29, 18}
	if got := GrayReference(rgb, 4); !bytes.Equal(got, want) {
		t.Errorf("GrayReference = %v, want %v", got, want)
	}
}

// newRand returns a generator seeded afresh for every run; failures log
// the seed.
func newRand(t testing.TB) *rand.Rand {
	seed := rand.Uint64()
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("random seed %#x", seed)
		}
	})
	return rand.New(rand.NewPCG(seed, 1))
}
