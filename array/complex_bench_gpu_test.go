package array

import "testing"

// BenchmarkComplexGPU: complex64 chains over 2^24 elements, each one
// fused kernel (GB/s counting each input read once and the output
// written; %copy against a copy of x's floats in the same run). mul-abs is
// x.Mul(y).Abs() (CuPy's abs(c*c) took 0.174 ms on the H200), mul the
// complex product written out.
func BenchmarkComplexGPU(b *testing.B) {
	g := testGPU(b)
	const n = 1 << 24
	r := g.NewRNG(1)
	x, y := r.Normal(Complex64, 0, 1, n).Eval(), r.Normal(Complex64, 0, 1, n).Eval()
	xf := x.ViewAsReal()
	if err := firstErr(x.Err(), y.Err(), xf.Err()); err != nil {
		b.Fatal(err)
	}
	m := medians(b, g,
		func() { closing(x.Mul(y).Abs().Eval()) },
		func() { closing(x.Mul(x).Abs().Eval()) },
		func() { closing(x.Mul(y).Eval()) },
		func() { closing(xf.Copy().Eval()) })
	b.ReportMetric(float64(m[0].Microseconds())/1e3, "mul-abs-ms")
	b.ReportMetric(gbps(20*n, m[0]), "mul-abs-GB/s")
	b.ReportMetric(float64(m[1].Microseconds())/1e3, "square-abs-ms")
	b.ReportMetric(float64(m[2].Microseconds())/1e3, "mul-ms")
	b.ReportMetric(gbps(24*n, m[2]), "mul-GB/s")
	cp := gbps(16*n, m[3])
	b.ReportMetric(cp, "copy-GB/s")
	b.ReportMetric(100*gbps(20*n, m[0])/cp, "mul-abs-%copy")
	b.ReportMetric(100*gbps(24*n, m[2])/cp, "mul-%copy")
}
