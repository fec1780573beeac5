package nn_test

import (
	"fmt"
	"math"
	"testing"

	"github.com/gocu-dev/gocu/array"
	"github.com/gocu-dev/gocu/internal/gputest"
)

// Adam is written three times: as array expressions (Unfused), as the
// fused host loop and as the fused CUDA kernel. All three must agree bit
// for bit on random inputs after five steps. The kernel is checked where
// there is a GPU.
func TestAdamBitForBit(t *testing.T) {
	for _, c := range optCases() {
		if !c.adam {
			continue
		}
		for _, dt := range []array.DType{array.Float32, array.Float64} {
			t.Run(fmt.Sprintf("%s/%v", c.name, dt), func(t *testing.T) {
				host := runOpt(t, array.CPU(), dt, c, false)
				expr := runOpt(t, array.CPU(), dt, c, true)
				sameBits(t, "expressions vs host loop", expr, host)
				if g, err := gpuOnce(); gputest.Usable(t, err) {
					// The kernel takes the bias corrections' powers with
					// CUDA's pow, which like Go's math.Pow is not correctly
					// rounded: in float64 the last bit may differ (seen on an
					// H200); float32 rounds that away.
					ulps := uint64(0)
					if dt == array.Float64 {
						ulps = 2
					}
					nearBits(t, "GPU kernel vs host loop", runOpt(t, g, dt, c, false), host, ulps)
				}
			})
		}
	}
}

// sameBits fails at the first value whose bits differ.
func sameBits(t *testing.T, what string, got, want [][]float64) {
	t.Helper()
	for i := range want {
		for j := range want[i] {
			if math.Float64bits(got[i][j]) != math.Float64bits(want[i][j]) {
				t.Errorf("%s: param %d element %d = %v, want %v (bits differ)", what, i, j, got[i][j], want[i][j])
				return
			}
		}
	}
}

// nearBits fails at the first value more than ulps float64 steps from want.
func nearBits(t *testing.T, what string, got, want [][]float64, ulps uint64) {
	t.Helper()
	for i := range want {
		for j := range want[i] {
			a, b := math.Float64bits(got[i][j]), math.Float64bits(want[i][j])
			d := a - b
			if b > a {
				d = b - a
			}
			if d > ulps || math.Signbit(got[i][j]) != math.Signbit(want[i][j]) {
				t.Errorf("%s: param %d element %d = %v, want %v (%d ulp apart, allowed %d)", what, i, j, got[i][j], want[i][j], d, ulps)
				return
			}
		}
	}
}
