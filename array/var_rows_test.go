package array

import (
	"errors"
	"fmt"
	"math"
	"testing"

	"github.com/gocu-dev/gocu/array/internal/backend"
)

// TestVarRows covers Var over trailing axes (the CPU backend's row
// kernel): a large mean, odd row lengths, a NaN row, ddof up to the row
// length, against float64 sums.
func TestVarRows(t *testing.T) {
	forEachBackend(t, func(t *testing.T, d *Maker) {
		r := newRand(t)
		for _, c := range []struct {
			shape []int
			axes  []int
		}{{[]int{5, 37}, []int{1}}, {[]int{3, 4, 9}, []int{1, 2}}, {[]int{2, 3, 1}, []int{2}}, {[]int{7, 3}, []int{1}}} {
			for _, dt := range []DType{Float32, Float64} {
				n := prod(c.shape)
				v := make([]float64, n)
				for i := range v {
					v[i] = roundTo(dt, r.NormFloat64()*3+1e4)
				}
				v[1] = math.NaN()
				x := fromTyped(d, typed(dt, v), c.shape)
				groups, outShape := ssGroups(c.shape, c.axes)
				for _, ddof := range []int{0, 1, 3} {
					want := make([]float64, len(groups))
					for g, idx := range groups {
						m := 0.0
						for _, i := range idx {
							m += v[i]
						}
						m /= float64(len(idx))
						s := 0.0
						for _, i := range idx {
							s += (v[i] - m) * (v[i] - m)
						}
						want[g] = s / float64(max(len(idx)-ddof, 0))
					}
					tol := map[DType]float64{Float32: 1e-5, Float64: 1e-12}[dt]
					what := fmt.Sprintf("Var(%v%v, ddof %d, axes %v)", dt, c.shape, ddof, c.axes)
					checkHost(t, what, readCase(t, what, x.Var(ddof, c.axes...)), outShape, want, tol)
				}
				x.Close()
			}
		}
	})
}

func (p poisonBackend) VarRows(x, out backend.Operand, rows, n, ddof int) error {
	vr, ok := p.Backend.(rowVarer)
	if !ok {
		return errors.ErrUnsupported
	}
	return vr.VarRows(x, out, rows, n, ddof)
}
