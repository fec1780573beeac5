package array

import (
	"errors"
	"math"
	"testing"

	"github.com/gocu-dev/gocu/array/internal/gpu"
	"github.com/gocu-dev/gocu/lowp"
)

// The GPU tests of the low-precision work. The shared tests
// (lowp_test.go) already run every conversion, operation, product and
// quantisation on the GPU through forEachBackend; these add sizes that
// reach the tensor-core paths proper, and compare GPU with CPU.

// cpuTwin returns a copy of a GPU array on the CPU.
func cpuTwin(t *testing.T, a *Array) *Array {
	t.Helper()
	c := a.to(CPU())
	if err := c.Err(); err != nil {
		t.Fatal(err)
	}
	return c
}

// Large float16/bfloat16 products on the tensor cores, against float64
// references of fresh random inputs (relative to sum |a||b|), transposed
// and batched, outputs poisoned first.
func TestGPULowpMatMulLarge(t *testing.T) {
	g := testGPU(t)
	d := newDevice(poisonBackend{g.be, t}, g.gpu)
	r := newRand(t)
	for _, dt := range []DType{Float16, BFloat16} {
		for _, c := range []struct {
			m, n, k int
			transB  bool
			batch   int
		}{{512, 384, 1024, false, 1}, {257, 129, 513, true, 1}, {64, 96, 128, true, 6}} {
			ha := randHost(r, Float32, []int{c.batch, c.m, c.k}, -1, 1)
			hb := randHost(r, Float32, []int{c.batch, c.k, c.n}, -1, 1)
			a := makeArray(t, d, Float32, ha, contiguous).AsType(dt)
			kind := contiguous
			if c.transB {
				kind = transposed
			}
			b := makeArray(t, d, Float32, hb, kind).AsType(dt)
			// The reference uses the rounded inputs.
			av, _ := a.Float64s()
			bv, _ := b.Float64s()
			got, err := a.MatMul(b).Float64s()
			if err != nil {
				t.Fatal(err)
			}
			worst := 0.0
			for z := 0; z < c.batch; z++ {
				want, mag := refMatMul2D(av[z*c.m*c.k:(z+1)*c.m*c.k], bv[z*c.k*c.n:(z+1)*c.k*c.n], c.m, c.n, c.k)
				for i := range want {
					e := math.Abs(got[z*c.m*c.n+i]-want[i]) / math.Max(mag[i], 1e-30)
					worst = math.Max(worst, e)
				}
			}
			t.Logf("%v %v: worst error %.3g relative to sum |a||b|", dt, c, worst)
			if worst > lowpEps(dt) {
				t.Errorf("%v %v: error %.3g relative to sum |a||b|, tolerance %g", dt, c, worst, lowpEps(dt))
			}
		}
	}
}

// int8 products through cuBLASLt (TN, no copy), padded layouts and the
// fallback give the CPU's exact int32 results.
func TestGPUInt8MatMulMatchesCPU(t *testing.T) {
	g := testGPU(t)
	for _, c := range []struct {
		m, n, k int
		transB  bool
	}{{1024, 1024, 2048, true}, {300, 200, 1000, false}, {33, 17, 129, true}, {4096, 8, 64, true}} {
		a := g.NewRNG(1).Uniform(Float32, -128, 128, c.m, c.k).AsType(Int8)
		var b *Array
		if c.transB {
			b = g.NewRNG(2).Uniform(Float32, -128, 128, c.n, c.k).AsType(Int8).Eval().T()
		} else {
			b = g.NewRNG(2).Uniform(Float32, -128, 128, c.k, c.n).AsType(Int8)
		}
		got, err := a.MatMul(b).Int32s()
		if err != nil {
			t.Fatal(err)
		}
		want, err := cpuTwin(t, a).MatMul(cpuTwin(t, b)).Int32s()
		if err != nil {
			t.Fatal(err)
		}
		for i := range want {
			if got[i] != want[i] {
				t.Fatalf("%v: element %d = %d, CPU %d", c, i, got[i], want[i])
			}
		}
	}
}

// FP8 scaled products against the CPU (which accumulates in float32 in
// another order): within the output's rounding.
func TestGPUScaledMatMul(t *testing.T) {
	g := testGPU(t)
	if err := g.gpu.SupportsFP8(); err != nil {
		t.Skip(err)
	}
	x := g.NewRNG(1).Normal(Float32, 0, 3, 256, 512)
	w := g.NewRNG(2).Normal(Float32, 0, 0.05, 384, 512)
	xq, xs := x.Quantize(Float8E4M3)
	wq, ws := w.Quantize(Float8E4M3)
	for _, out := range []DType{Float32, BFloat16} {
		z := ScaledMatMul(xq, wq.T(), xs.Reshape(), ws.Reshape(), out)
		got, err := z.Float64s()
		if err != nil {
			t.Fatal(err)
		}
		want, err := ScaledMatMul(cpuTwin(t, xq), cpuTwin(t, wq).T(), cpuTwin(t, xs).Reshape(), cpuTwin(t, ws).Reshape(), out).Float64s()
		if err != nil {
			t.Fatal(err)
		}
		mag, _ := cpuTwin(t, xq).AsType(Float32).Abs().MatMul(cpuTwin(t, wq).AsType(Float32).Abs().T()).Mul(cpuTwin(t, xs).Mul(cpuTwin(t, ws))).Float64s()
		tol := fp8AccumTol
		if out != Float32 {
			tol = max(tol, lowpEps(out))
		}
		for i := range want {
			if math.Abs(got[i]-want[i]) > tol*mag[i]+1e-30 {
				t.Fatalf("%v: element %d = %v, CPU %v (sum |ab| %v)", out, i, got[i], want[i], mag[i])
			}
		}
	}
	// Operands not in cuBLASLt's layout (row-major b, K and N not
	// multiples of 16) are copied and padded.
	a := g.NewRNG(3).Normal(Float32, 0, 1, 20, 50).AsType(Float8E4M3)
	b := g.NewRNG(4).Normal(Float32, 0, 1, 50, 30).AsType(Float8E4M3)
	got, err := ScaledMatMul(a, b, nil, nil, Float32).Float32s()
	if err != nil {
		t.Fatal(err)
	}
	want, _ := ScaledMatMul(cpuTwin(t, a), cpuTwin(t, b), nil, nil, Float32).Float32s()
	mag, _ := cpuTwin(t, a).AsType(Float32).Abs().MatMul(cpuTwin(t, b).AsType(Float32).Abs()).Float32s()
	for i := range want {
		// Hopper's FP8 accumulator: the bound scales with sum |ab|, not |sum ab|.
		if math.Abs(float64(got[i]-want[i])) > fp8AccumTol*float64(mag[i])+1e-30 {
			t.Fatalf("padded: element %d = %v, CPU %v (sum |ab| %v)", i, got[i], want[i], mag[i])
		}
	}
}

// Below compute capability 8.9 an FP8 product is a clear error.
func TestFP8NeedsAda(t *testing.T) {
	for _, c := range []struct {
		major, minor int
		ok           bool
	}{{7, 5, false}, {8, 0, false}, {8, 6, false}, {8, 9, true}, {9, 0, true}, {10, 0, true}} {
		err := gpu.FP8Check(c.major, c.minor)
		if (err == nil) != c.ok || (err != nil && !errors.Is(err, ErrUnsupported)) {
			t.Errorf("sm_%d%d: %v", c.major, c.minor, err)
		}
	}
}

// Row quantisation of rows that reach the conversion's edges, on the row
// kernel (8192 wide) and the general one (axis 0), matches the CPU bit
// for bit: ties to even, values that round to ±127, a NaN in a row, ±Inf
// (Inf/Inf is NaN, which quantises to 0), a zero row and subnormals.
func TestGPUQuantizeEdgeRowsMatchCPU(t *testing.T) {
	g := testGPU(t)
	const L = 8192
	r := newRand(t)
	var xs []float32
	row := func(f func(j int) float32) {
		for j := range L {
			xs = append(xs, f(j))
		}
	}
	// With 127 in the row the scale is 1: the values quantise as they are.
	row(func(j int) float32 { return []float32{127, 0.5, 1.5, 2.5, -0.5, -1.5, -126.5, 126.5, 3.5}[j%9] })
	row(func(j int) float32 {
		if j == 77 {
			return float32(math.NaN())
		}
		return float32(r.NormFloat64())
	})
	row(func(j int) float32 {
		if j == 5 {
			return float32(math.Inf(1))
		}
		return float32(r.NormFloat64())
	})
	row(func(j int) float32 {
		if j == 6 {
			return float32(math.Inf(-1))
		}
		return float32(r.NormFloat64())
	})
	row(func(int) float32 { return 0 })
	row(func(j int) float32 { return math.Float32frombits(uint32(1+r.IntN(1<<20))) * float32(1-2*(j%2)) })
	row(func(j int) float32 { return float32(r.NormFloat64() * 1e30) })
	row(func(j int) float32 { return float32(j%255-127) * 1.0000001 })
	x := fromSliceOn(g, xs, len(xs)/L, L)
	xc := cpuTwin(t, x)
	for _, dt := range []DType{Int8, Float8E4M3, Float8E5M2} {
		for _, axis := range []int{1, 0} {
			q, s := x.Quantize(dt, axis)
			qc, sc := xc.Quantize(dt, axis)
			qg, err := ToSlice[float32](q)
			if err != nil {
				t.Fatal(err)
			}
			qw, _ := ToSlice[float32](qc)
			sg, _ := s.Float32s()
			sw, _ := sc.Float32s()
			for i := range sw {
				if math.Float32bits(sg[i]) != math.Float32bits(sw[i]) {
					t.Fatalf("%v axis %d: scale %d = %v, CPU %v", dt, axis, i, sg[i], sw[i])
				}
			}
			for i := range qw {
				if qg[i] != qw[i] && !(math.IsNaN(float64(qg[i])) && math.IsNaN(float64(qw[i]))) {
					t.Fatalf("%v axis %d: q %d (%v) = %v, CPU %v", dt, axis, i, xs[i], qg[i], qw[i])
				}
			}
		}
	}
}

// Row quantisation and softmax of wide rows (the register-resident row
// kernel) and of columns (the general kernel) match the CPU bit for bit
// (quantisation) or to 1e-6 (softmax).
func TestGPURowKernelsMatchCPU(t *testing.T) {
	g := testGPU(t)
	x := g.NewRNG(5).Normal(Float32, 0, 2, 64, 8192)
	xc := cpuTwin(t, x)
	for _, dt := range []DType{Int8, Float8E4M3, Float8E5M2} {
		for _, axis := range []int{1, 0} {
			q, s := x.Quantize(dt, axis)
			qc, sc := xc.Quantize(dt, axis)
			qg, err := ToSlice[float32](q)
			if err != nil {
				t.Fatal(err)
			}
			qw, _ := ToSlice[float32](qc)
			sg, _ := s.Float32s()
			sw, _ := sc.Float32s()
			for i := range sw {
				if sg[i] != sw[i] {
					t.Fatalf("%v axis %d: scale %d = %v, CPU %v", dt, axis, i, sg[i], sw[i])
				}
			}
			for i := range qw {
				if qg[i] != qw[i] && !(math.IsNaN(float64(qg[i])) && math.IsNaN(float64(qw[i]))) {
					t.Fatalf("%v axis %d: q %d = %v, CPU %v", dt, axis, i, qg[i], qw[i])
				}
			}
		}
	}
	for _, n := range []int{8192, 1000, 16384, 20000} {
		y := g.NewRNG(6).Normal(Float32, 0, 3, 16, n)
		got, err := y.Softmax(1).Float32s()
		if err != nil {
			t.Fatal(err)
		}
		want, _ := cpuTwin(t, y).Softmax(1).Float32s()
		for i := range want {
			if math.Abs(float64(got[i]-want[i])) > 2e-6*math.Max(1e-3, float64(want[i])) {
				t.Fatalf("softmax rows of %d: element %d = %v, CPU %v", n, i, got[i], want[i])
			}
		}
		got, _ = y.Mul(0.5).Add(1).LogSoftmax(1).Float32s()
		want, _ = cpuTwin(t, y).Mul(0.5).Add(1).LogSoftmax(1).Float32s()
		for i := range want {
			if math.Abs(float64(got[i]-want[i])) > 2e-6*math.Max(1, math.Abs(float64(want[i]))) {
				t.Fatalf("fused log-softmax rows of %d: element %d = %v, CPU %v", n, i, got[i], want[i])
			}
		}
	}
}

// Every float16 and bfloat16 value widens, and a dense float32 sweep
// narrows, bit for bit as on the CPU (through an elementwise kernel with
// vector loads and through a strided one).
func TestGPUConversionsMatchCPU(t *testing.T) {
	g := testGPU(t)
	src := sweep32(1 << 10) // about 4 million values
	x := fromSliceOn(g, src)
	xc := cpuTwin(t, x)
	for _, dt := range lowpDTypes {
		for _, strided := range []bool{false, true} {
			a, b := x, xc
			if strided {
				a, b = x.Slice(S(None, None, 3)), xc.Slice(S(None, None, 3))
			}
			got, err := a.AsType(dt).AsType(Float32).Float32s()
			if err != nil {
				t.Fatal(err)
			}
			want, _ := b.AsType(dt).AsType(Float32).Float32s()
			for i := range want {
				if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
					t.Fatalf("%v (strided %v): %#x to %#x, CPU %#x", dt, strided, math.Float32bits(src[i]), math.Float32bits(got[i]), math.Float32bits(want[i]))
				}
			}
		}
	}
	bits := allBits16()
	h := make([]lowp.Float16, len(bits))
	for i, v := range bits {
		h[i] = lowp.Float16FromBits(v)
	}
	got, err := fromSliceOn(g, h).AsType(Float64).Float64s()
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range h {
		if math.Float64bits(got[i]) != math.Float64bits(v.Float64()) {
			t.Fatalf("float16 %#x to float64: %v, want %v", i, got[i], v.Float64())
		}
	}
}

// fp8AccumTol bounds an FP8 product's error relative to sum |a||b| on a
// GPU: Hopper's FP8 tensor cores add the products in fewer bits than a
// float32 (measured on an H100: 2.6e-5; NVIDIA documents the FP8
// accumulator as narrower than FP32), while the CPU adds in float32 exactly.
const fp8AccumTol = 1e-4
