package cublas

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gocu-dev/gocu/internal/gputest"
)

func newLt(t *testing.T) *LtHandle {
	t.Helper()
	gputest.Need(t, LoadLt())
	h, err := LtCreate()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { theGPU.onThread(func() { h.Destroy() }) })
	return h
}

// An int8 TN product through cuBLASLt equals the exact int32 one, batched
// too; the output is poisoned first.
func TestLtInt8(t *testing.T) {
	g := needGPU(t)
	h := newLt(t)
	r := rand.New(rand.NewPCG(1, 2))
	const m, n, k, batch = 64, 96, 128, 3
	// Column-major: A stored k×m (op T gives m×k), B stored k×n.
	a := make([]int8, batch*k*m)
	b := make([]int8, batch*k*n)
	for i := range a {
		a[i] = int8(r.IntN(256) - 128)
	}
	for i := range b {
		b[i] = int8(r.IntN(256) - 128)
	}
	c := make([]int32, batch*m*n)
	for i := range c {
		c[i] = -1
	}
	da, db, dc := upload(t, g, a), upload(t, g, b), upload(t, g, c)
	ws := upload(t, g, make([]byte, 1<<22))
	p, err := h.Plan(LtMatmul{TransA: Trans, TransB: NoTrans, M: m, N: n, K: k,
		TypeA: R8I, TypeB: R8I, TypeC: R32I, TypeD: R32I, LDA: k, LDB: k, LDC: m, LDD: m,
		Compute: Compute32I, ScaleType: R32I, Batch: batch,
		StrideA: k * m, StrideB: k * n, StrideC: m * n, StrideD: m * n, WorkspaceBytes: 1 << 22})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Destroy()
	if err := p.Run(LtArgs{A: da, B: db, C: dc, D: dc, Alpha: 1, Workspace: ws, WorkspaceBytes: 1 << 22}); err != nil {
		t.Fatal(err)
	}
	got := download[int32](t, g, dc, batch*m*n)
	for z := 0; z < batch; z++ {
		for i := 0; i < m; i++ {
			for j := 0; j < n; j++ {
				var want int32
				for q := 0; q < k; q++ {
					want += int32(a[z*k*m+i*k+q]) * int32(b[z*k*n+j*k+q])
				}
				if g := got[z*m*n+j*m+i]; g != want {
					t.Fatalf("batch %d C[%d,%d] = %d, want %d", z, i, j, g, want)
				}
			}
		}
	}
}

// An FP8 e4m3 TN product with per-tensor scales into float32 and
// bfloat16, on GPUs that have FP8 (elsewhere: StatusNotSupported).
func TestLtFP8(t *testing.T) {
	g := needGPU(t)
	h := newLt(t)
	r := rand.New(rand.NewPCG(3, 4))
	const m, n, k = 32, 48, 64
	// e4m3 bits of small integers -3..3 (exact): 0 0x00, 1 0x38, 2 0x40, 3 0x44; negative with 0x80.
	code := map[int]uint8{0: 0, 1: 0x38, 2: 0x40, 3: 0x44}
	val := func() (uint8, float64) {
		v := r.IntN(7) - 3
		c := code[max(v, -v)]
		if v < 0 {
			c |= 0x80
		}
		return c, float64(v)
	}
	a, av := make([]uint8, k*m), make([]float64, k*m)
	b, bv := make([]uint8, k*n), make([]float64, k*n)
	for i := range a {
		a[i], av[i] = val()
	}
	for i := range b {
		b[i], bv[i] = val()
	}
	da, db := upload(t, g, a), upload(t, g, b)
	sa, sb := upload(t, g, []float32{0.5}), upload(t, g, []float32{0.25})
	ws := upload(t, g, make([]byte, 1<<22))
	out := make([]float32, m*n)
	for i := range out {
		out[i] = float32(math.NaN())
	}
	dc := upload(t, g, out)
	p, err := h.Plan(LtMatmul{TransA: Trans, TransB: NoTrans, M: m, N: n, K: k,
		TypeA: R8FE4M3, TypeB: R8FE4M3, TypeC: R32F, TypeD: R32F, LDA: k, LDB: k, LDC: m, LDD: m,
		Compute: Compute32F, ScaleType: R32F, WorkspaceBytes: 1 << 22})
	if errors.Is(err, StatusNotSupported) {
		t.Skipf("no FP8 kernels on this GPU: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	defer p.Destroy()
	if err := p.Run(LtArgs{A: da, B: db, C: dc, D: dc, ScaleA: sa, ScaleB: sb, Alpha: 1, Workspace: ws, WorkspaceBytes: 1 << 22}); err != nil {
		t.Fatal(err)
	}
	got := download[float32](t, g, dc, m*n)
	for i := 0; i < m; i++ {
		for j := 0; j < n; j++ {
			want := 0.0
			for q := 0; q < k; q++ {
				want += av[i*k+q] * bv[j*k+q]
			}
			want *= 0.125
			if float64(got[j*m+i]) != want {
				t.Fatalf("C[%d,%d] = %v, want %v", i, j, got[j*m+i], want)
			}
		}
	}
}
