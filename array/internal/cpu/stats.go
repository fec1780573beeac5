package cpu

import (
	"fmt"

	"github.com/gocu-dev/gocu/array/internal/backend"
)

// VarRows writes the variance of each of rows contiguous rows of n floats
// (Float32 or Float64) to out: the mean, then the mean squared deviation
// from it with n-ddof as the divisor, both summed in float64. Rows go to
// the workers.
func (b *Backend) VarRows(x, out backend.Operand, rows, n, ddof int) error {
	div := float64(max(n-ddof, 0))
	switch s := part(x, rows*n).(type) {
	case []float32:
		o, ok := part(out, rows).([]float32)
		if !ok {
			return fmt.Errorf("cpu: variance of float32 into %v", out.Buf.DType())
		}
		b.parallel(rows, 1, 1, func(lo, hi int) {
			for r := lo; r < hi; r++ {
				o[r] = float32(varRow(s[r*n:(r+1)*n]) / div)
			}
		})
	case []float64:
		o, ok := part(out, rows).([]float64)
		if !ok {
			return fmt.Errorf("cpu: variance of float64 into %v", out.Buf.DType())
		}
		b.parallel(rows, 1, 1, func(lo, hi int) {
			for r := lo; r < hi; r++ {
				o[r] = varRow(s[r*n:(r+1)*n]) / div
			}
		})
	default:
		return fmt.Errorf("cpu: variance of %v", x.Buf.DType())
	}
	return nil
}

// varRow returns the sum of squared deviations of v from its mean. Four
// running sums keep the additions independent.
func varRow[T float32 | float64](v []T) float64 {
	var s0, s1, s2, s3 float64
	i := 0
	for ; i+4 <= len(v); i += 4 {
		s0 += float64(v[i])
		s1 += float64(v[i+1])
		s2 += float64(v[i+2])
		s3 += float64(v[i+3])
	}
	for ; i < len(v); i++ {
		s0 += float64(v[i])
	}
	m := (s0 + s1 + s2 + s3) / float64(len(v))
	s0, s1, s2, s3 = 0, 0, 0, 0
	i = 0
	for ; i+4 <= len(v); i += 4 {
		d0, d1 := float64(v[i])-m, float64(v[i+1])-m
		d2, d3 := float64(v[i+2])-m, float64(v[i+3])-m
		s0 += d0 * d0
		s1 += d1 * d1
		s2 += d2 * d2
		s3 += d3 * d3
	}
	for ; i < len(v); i++ {
		d := float64(v[i]) - m
		s0 += d * d
	}
	return s0 + s1 + s2 + s3
}
