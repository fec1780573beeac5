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
					gpu := runOpt(t, g, dt, c, false)
					if dt == array.Float32 {
						sameBits(t, "GPU kernel vs host loop", gpu, host)
						return
					}
					// The kernel takes the bias corrections' powers with
					// CUDA's pow, which like Go's math.Pow is not correctly
					// rounded. The ulp it loses in 1-β1ᵗ grows by
					// cancellation, so float64 is compared to the tensor's
					// scale: 4 ulp of its largest element.
					nearScale(t, "GPU kernel vs host loop", gpu, host, 4)
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

// nearScale fails at the first value further from want than ulps float64
// epsilons of the largest magnitude in its tensor.
func nearScale(t *testing.T, what string, got, want [][]float64, ulps float64) {
	t.Helper()
	for i := range want {
		scale := 0.0
		for _, w := range want[i] {
			scale = math.Max(scale, math.Abs(w))
		}
		tol := ulps * 0x1p-52 * scale
		for j := range want[i] {
			if d := math.Abs(got[i][j] - want[i][j]); !(d <= tol) {
				t.Errorf("%s: param %d element %d = %v, want %v (off by %.3g, allowed %.3g)", what, i, j, got[i][j], want[i][j], d, tol)
				return
			}
		}
	}
}
