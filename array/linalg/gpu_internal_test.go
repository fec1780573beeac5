package linalg

import (
	"math"
	"testing"

	"github.com/gocu-dev/gocu/array"
)

// The GPU determinant is array operations on cuSOLVER's factors; checked
// here on the CPU with gonum's factors.
func TestSlogdetFromLU(t *testing.T) {
	for _, dt := range dtypes {
		const nb, n = 6, 5
		a := randn(40, nb*n*n)
		// One singular matrix, one with a negative determinant.
		for j := range n {
			a[2*n*n+3*n+j] = 0
		}
		ref := append([]float64(nil), a...)
		wantS, wantL := cpuSlogdet(ref, nb, n)
		lu := append([]float64(nil), a...)
		piv, _ := cpuLU(lu, nb, n)
		p32 := make([]int32, len(piv))
		for i, p := range piv {
			p32[i] = int32(p + 1)
		}
		s, l := slogdetFromLU(cpu, mk(t, dt, lu, 2, 3, n, n), array.FromSliceOn(cpu.Device(), p32, 2, 3, n), []int{2, 3}, n)
		if sh := s.Shape(); len(sh) != 2 || sh[0] != 2 || sh[1] != 3 {
			t.Fatalf("shape %v", sh)
		}
		sv, lv := vals(t, s), vals(t, l)
		for i := range nb {
			if sv[i] != wantS[i] || !(math.Abs(lv[i]-wantL[i]) < 1e-5 || math.IsInf(wantL[i], -1) && math.IsInf(lv[i], -1)) {
				t.Errorf("%v matrix %d: %v %v, want %v %v", dt, i, sv[i], lv[i], wantS[i], wantL[i])
			}
		}
	}
}

func TestPointerAndMaskHelpers(t *testing.T) {
	m := vals(t, lowerMask(cpu, 3).AsType(array.Float64))
	if d := maxDiff(m, []float64{1, 0, 0, 1, 1, 0, 1, 1, 1}); d != 0 {
		t.Errorf("lowerMask = %v", m)
	}
	if c, es := dtypeOf(array.Float64); es != 8 || c.String() != "float64" {
		t.Errorf("dtypeOf(float64) = %v %d", c, es)
	}
	if c, es := dtypeOf(array.Float32); es != 4 || c.String() != "float32" {
		t.Errorf("dtypeOf(float32) = %v %d", c, es)
	}
	if SetSVDDriver(QRIteration) != Jacobi || SetSVDDriver(Jacobi) != QRIteration {
		t.Error("SetSVDDriver does not return the previous driver")
	}
	was := SetCheckInfo(false)
	if !was || SetCheckInfo(true) {
		t.Errorf("SetCheckInfo: %v", was)
	}
}
