package cusolver_test

import (
	"math"
	"testing"

	"github.com/gocu-dev/gocu"
	"github.com/gocu-dev/gocu/cuda"
	"github.com/gocu-dev/gocu/cusolver"
	"github.com/gocu-dev/gocu/internal/units"
)

// needGPU returns GPU 0, or skips without a GPU or cuSOLVER.
func needGPU(t *testing.T) *cuda.Device {
	t.Helper()
	if err := gocu.GPUUsable(); err != nil {
		t.Skipf("no usable GPU: %s", units.OneLine(err))
	}
	if err := cusolver.Load(); err != nil {
		t.Skipf("no cuSOLVER: %s", units.OneLine(err))
	}
	d, err := gocu.Open("cuda:0")
	if err != nil {
		t.Skipf("no GPU 0: %v", err)
	}
	return d.CUDA()
}

func upload[T any](t *testing.T, dev *cuda.Device, v []T, size int) *cuda.Memory {
	t.Helper()
	m, err := dev.Alloc(max(len(v)*size, 16))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = m.Free() })
	if len(v) > 0 {
		if err := cuda.CopyHtoD(m, v); err != nil {
			t.Fatal(err)
		}
	}
	return m
}

// An LU solve, a singular matrix's info, a Cholesky factor and symmetric
// eigenvalues of small column-major float64 matrices.
func TestGPUDense(t *testing.T) {
	dev := needGPU(t)
	p := func(m *cuda.Memory) uint64 { return uint64(m.Ptr()) }
	err := dev.WithContext(func() error {
		h, err := cusolver.Create()
		if err != nil {
			return err
		}
		defer h.Destroy()
		const n = 3
		a := []float64{4, 2, 0, 2, 5, 1, 0, 1, 3} // symmetric, positive definite
		b := []float64{1, 2, 3}
		da, db := upload(t, dev, a, 8), upload(t, dev, b, 8)
		ipiv, info := upload[int32](t, dev, make([]int32, n), 4), upload[int32](t, dev, []int32{-7}, 4)
		lw, err := h.GetrfBufferSize(cusolver.Float64, n, n, p(da), n)
		if err != nil {
			return err
		}
		work := upload(t, dev, make([]float64, lw), 8)
		if err := h.Getrf(cusolver.Float64, n, n, p(da), n, p(work), p(ipiv), p(info)); err != nil {
			return err
		}
		if err := h.Getrs(cusolver.Float64, cusolver.NoTrans, n, 1, p(da), n, p(ipiv), p(db), n, p(info)); err != nil {
			return err
		}
		x := make([]float64, n)
		inf := make([]int32, 1)
		if err := cuda.CopyDtoH(x, db); err != nil {
			return err
		}
		if err := cuda.CopyDtoH(inf, info); err != nil {
			return err
		}
		for i := range n {
			s := 0.0
			for j := range n {
				s += a[i+j*n] * x[j]
			}
			if math.Abs(s-b[i]) > 1e-12 || inf[0] != 0 {
				t.Errorf("A·x - b = %g at %d, info %d", s-b[i], i, inf[0])
			}
		}

		sing := upload(t, dev, []float64{1, 2, 0, 2, 4, 0, 0, 0, 1}, 8)
		if err := h.Getrf(cusolver.Float64, n, n, p(sing), n, p(work), p(ipiv), p(info)); err != nil {
			return err
		}
		if err := cuda.CopyDtoH(inf, info); err != nil {
			return err
		}
		if inf[0] <= 0 {
			t.Errorf("singular matrix: info %d, want > 0", inf[0])
		}

		dc := upload(t, dev, a, 8)
		lw, err = h.PotrfBufferSize(cusolver.Float64, cusolver.Lower, n, p(dc), n)
		if err != nil {
			return err
		}
		work = upload(t, dev, make([]float64, lw), 8)
		if err := h.Potrf(cusolver.Float64, cusolver.Lower, n, p(dc), n, p(work), lw, p(info)); err != nil {
			return err
		}
		l := make([]float64, n*n)
		if err := cuda.CopyDtoH(l, dc); err != nil {
			return err
		}
		if math.Abs(l[0]-2) > 1e-12 || math.Abs(l[1]-1) > 1e-12 || math.Abs(l[4]-2) > 1e-12 {
			t.Errorf("Cholesky factor (column-major) %v, want L[0][0]=2, L[1][0]=1, L[1][1]=2", l)
		}

		de := upload(t, dev, a, 8)
		w := upload(t, dev, make([]float64, n), 8)
		lw, err = h.SyevdBufferSize(cusolver.Float64, cusolver.NoVectors, cusolver.Lower, n, p(de), n, p(w))
		if err != nil {
			return err
		}
		work = upload(t, dev, make([]float64, lw), 8)
		if err := h.Syevd(cusolver.Float64, cusolver.NoVectors, cusolver.Lower, n, p(de), n, p(w), p(work), lw, p(info)); err != nil {
			return err
		}
		ev := make([]float64, n)
		if err := cuda.CopyDtoH(ev, w); err != nil {
			return err
		}
		// The trace and the ordering: 4+5+3 = 12, ascending.
		if math.Abs(ev[0]+ev[1]+ev[2]-12) > 1e-10 || ev[0] > ev[1] || ev[1] > ev[2] {
			t.Errorf("eigenvalues %v", ev)
		}
		return dev.Synchronize()
	})
	if err != nil {
		t.Fatal(err)
	}
}
