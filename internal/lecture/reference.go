package lecture

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/gocu-dev/gocu"
)

// GrayReference is the grayscale conversion in plain Go, one loop over the
// pixels with the kernels' formula: the CPU reference the kernels are
// checked against.
func GrayReference(rgb []uint8, n int) []uint8 {
	gray := make([]uint8, n)
	for i := range n {
		r, g, b := float32(rgb[i]), float32(rgb[i+n]), float32(rgb[i+2*n])
		gray[i] = uint8(0.2989*r + 0.5870*g + 0.1140*b)
	}
	return gray
}

// DefaultSize returns the default matrix size on a device: 4096 on a GPU,
// the size of the peers' figures in DESIGN.md; 256 on the simulator, where
// the tiled kernel, whose threads really meet at each barrier, takes about
// 0.15 s on 2 cores.
func DefaultSize(dev *gocu.Device) int {
	if dev.Kind() == gocu.CUDA {
		return 4096
	}
	return 256
}

// RandomMatrix returns rows x cols float32 values drawn uniformly from
// [-1, 1).
func RandomMatrix(r *rand.Rand, rows, cols int) []float32 {
	x := make([]float32, rows*cols)
	for i := range x {
		x[i] = 2*r.Float32() - 1
	}
	return x
}

// MatMulCheck is the outcome of CheckMatMul.
type MatMulCheck struct {
	Checked int     // entries compared with the reference
	MaxErr  float64 // largest |c - ref| / sum_i |a_ri b_ic| among them
}

func (c MatMulCheck) String() string {
	return fmt.Sprintf("%d entries, max rel err %.1e", c.Checked, c.MaxErr)
}

// CheckMatMul compares c with a float64 reference of the row-major product
// of the m x k matrix a and the k x n matrix b: every entry when there are
// at most samples of them, else samples entries drawn at random (a GPU's
// 4096^3 product would take minutes to recompute on the CPU). An entry's
// error is |c - ref| divided by the sum of the magnitudes of its k
// products, and must stay within the rounding bound of a float32 dot
// product for zero-mean inputs such as RandomMatrix's, 16 sqrt(k) 2^-24
// (capped at the worst-case bound (k+1) 2^-24): rounding errors of a sum of
// terms of random sign grow like sqrt(k), and a wrong entry (one product
// missed or counted twice, a stale tile, NaN from poisoned memory) is off
// by about 1/k or more, which is far larger.
func CheckMatMul(a, b, c []float32, m, n, k, samples int, r *rand.Rand) (MatMulCheck, error) {
	if len(a) < m*k || len(b) < k*n || len(c) < m*n {
		return MatMulCheck{}, fmt.Errorf("CheckMatMul: %d, %d, %d elements for %dx%d times %dx%d", len(a), len(b), len(c), m, k, k, n)
	}
	bound := min(16*math.Sqrt(float64(k)), float64(k+1)) * 0x1p-24
	var res MatMulCheck
	check := func(row, col int) error {
		var sum, mag float64
		for i := range k {
			p := float64(a[row*k+i]) * float64(b[i*n+col])
			sum += p
			mag += math.Abs(p)
		}
		got := float64(c[row*n+col])
		e := math.Abs(got - sum)
		if mag > 0 {
			e /= mag
		}
		if !(e <= bound) { // also catches NaN
			return fmt.Errorf("c[%d][%d] = %g, want %g (relative error %.2g, bound %.2g)", row, col, got, sum, e, bound)
		}
		res.Checked++
		res.MaxErr = max(res.MaxErr, e)
		return nil
	}
	if m*n <= samples {
		for row := range m {
			for col := range n {
				if err := check(row, col); err != nil {
					return res, err
				}
			}
		}
		return res, nil
	}
	// The corners first: edge tiles are where tiled kernels go wrong.
	for _, rc := range [][2]int{{0, 0}, {0, n - 1}, {m - 1, 0}, {m - 1, n - 1}} {
		if err := check(rc[0], rc[1]); err != nil {
			return res, err
		}
	}
	for res.Checked < samples {
		if err := check(r.IntN(m), r.IntN(n)); err != nil {
			return res, err
		}
	}
	return res, nil
}

// Fill sets every element of x to v (NaN poisons an output, so that an
// element a kernel fails to write fails the check).
func Fill[T any](x []T, v T) []T {
	for i := range x {
		x[i] = v
	}
	return x
}
