package array

import (
	"testing"

	"github.com/gocu-dev/gocu/array/internal/backend"
)

// CPU benchmarks; testdata/numpy_bench.py measures NumPy on the same
// workloads (run both in one session and compare ratios).

func benchArrays(b *testing.B, n int) (*Array, *Array) {
	r := NewRNG(1)
	x := r.Uniform(Float32, -1, 1, n)
	y := r.Uniform(Float32, -1, 1, n)
	if err := x.Err(); err != nil {
		b.Fatal(err)
	}
	return x, y
}

func reportGBs(b *testing.B, bytes float64) {
	b.ReportMetric(bytes*float64(b.N)/b.Elapsed().Seconds()/1e9, "GB/s")
}

// BenchmarkAdd: z = x + y over 2^24 float32 (12 bytes of traffic per element).
func BenchmarkAdd(b *testing.B) {
	n := 1 << 24
	x, y := benchArrays(b, n)
	for b.Loop() {
		z := x.Add(y).Eval()
		z.Close()
	}
	reportGBs(b, 12*float64(n))
}

// BenchmarkSum: the sum of 2^24 float32 (4 bytes read per element).
func BenchmarkSum(b *testing.B) {
	n := 1 << 24
	x, _ := benchArrays(b, n)
	for b.Loop() {
		s := x.Sum()
		s.Close()
	}
	reportGBs(b, 4*float64(n))
}

// BenchmarkFused: relu(1.5x+0.5)*2 over 2^24 float32, one fused pass.
func BenchmarkFused(b *testing.B) {
	n := 1 << 24
	x, _ := benchArrays(b, n)
	for b.Loop() {
		z := x.Mul(1.5).Add(0.5).ReLU().Mul(2).Eval()
		z.Close()
	}
	reportGBs(b, 8*float64(n))
}

// BenchmarkUnfused: the same chain with every intermediate materialised
// (what an eager library does).
func BenchmarkUnfused(b *testing.B) {
	n := 1 << 24
	x, _ := benchArrays(b, n)
	for b.Loop() {
		a := x.Mul(1.5).Eval()
		c := a.Add(0.5).Eval()
		d := c.ReLU().Eval()
		z := d.Mul(2).Eval()
		a.Close()
		c.Close()
		d.Close()
		z.Close()
	}
	reportGBs(b, 8*float64(n))
}

// BenchmarkMatMul: 1024×1024 float32 product.
func BenchmarkMatMul(b *testing.B) {
	n := 1024
	r := NewRNG(2)
	x := r.Uniform(Float32, -1, 1, n, n)
	w := r.Uniform(Float32, -1, 1, n, n)
	for b.Loop() {
		z := x.MatMul(w)
		z.Close()
	}
	b.ReportMetric(2*float64(n*n*n)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
}

// BenchmarkMatMulTransposed: x @ w.T without a copy of w.
func BenchmarkMatMulTransposed(b *testing.B) {
	n := 1024
	r := NewRNG(2)
	x := r.Uniform(Float32, -1, 1, n, n)
	w := r.Uniform(Float32, -1, 1, n, n).T()
	for b.Loop() {
		z := x.MatMul(w)
		z.Close()
	}
	b.ReportMetric(2*float64(n*n*n)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
}

// BenchmarkMatMul64: 1024×1024 float64 product.
func BenchmarkMatMul64(b *testing.B) {
	n := 1024
	r := NewRNG(2)
	x := r.Uniform(Float64, -1, 1, n, n)
	w := r.Uniform(Float64, -1, 1, n, n)
	for b.Loop() {
		z := x.MatMul(w)
		z.Close()
	}
	b.ReportMetric(2*float64(n*n*n)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
}

// BenchmarkSmallOp: the per-operation overhead on a 16-element array
// (build the expression, evaluate, free).
func BenchmarkSmallOp(b *testing.B) {
	x, _ := benchArrays(b, 16)
	for b.Loop() {
		z := x.Add(1).Eval()
		z.Close()
	}
}

// BenchmarkSoftmax: softmax over rows of a 4096×1024 float32 matrix.
func BenchmarkSoftmax(b *testing.B) {
	r := NewRNG(3)
	x := r.Normal(Float32, 0, 1, 4096, 1024)
	for b.Loop() {
		z := x.Softmax(1)
		z.Close()
	}
	reportGBs(b, 8*4096*1024)
}

// BenchmarkSumAxis0: column sums of a 4096×4096 float32 matrix.
func BenchmarkSumAxis0(b *testing.B) {
	r := NewRNG(3)
	x := r.Normal(Float32, 0, 1, 4096, 4096)
	for b.Loop() {
		z := x.Sum(0)
		z.Close()
	}
	reportGBs(b, 4*4096*4096)
}

// nullBackend does no work: BenchmarkOverheadArrayLayer measures what the
// array layer itself costs per operation (expression building, the
// program, buffer bookkeeping), the part a GPU launch adds to.
type nullBackend struct{}

type nullBuf struct {
	dt backend.DType
	n  int
}

func (b nullBuf) DType() backend.DType { return b.dt }
func (b nullBuf) Len() int             { return b.n }

func (nullBackend) Name() string { return "null" }
func (nullBackend) Alloc(dt backend.DType, n int) (backend.Buffer, error) {
	return &nullBuf{dt, n}, nil
}
func (nullBackend) Free(backend.Buffer)                          {}
func (nullBackend) Write(backend.Buffer, int, any) error         { return nil }
func (nullBackend) Read(any, backend.Buffer, int) error          { return nil }
func (nullBackend) Eval(*backend.Program, backend.Operand) error { return nil }
func (nullBackend) Reduce(*backend.Reduction) error              { return nil }
func (nullBackend) AxisOp(*backend.AxisOp) error                 { return nil }
func (nullBackend) MatMul(*backend.MatMul) error                 { return nil }
func (nullBackend) Random(*backend.Random) error                 { return nil }
func (nullBackend) Sync() error                                  { return nil }
func (nullBackend) Poll() error                                  { return nil }

// BenchmarkOverheadArrayLayer: x.Add(y) on 16 elements, evaluated and
// closed, on a backend that does nothing.
func BenchmarkOverheadArrayLayer(b *testing.B) {
	d := newDevice(nullBackend{}, nil)
	x, y := d.Zeros(Float32, 16).Eval(), d.Zeros(Float32, 16).Eval()
	b.ReportAllocs()
	for b.Loop() {
		z := x.Add(y).Eval()
		z.Close()
	}
}
