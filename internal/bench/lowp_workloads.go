package bench

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sync"

	"github.com/gocu-dev/gocu/array"
	"github.com/gocu-dev/gocu/lowp"
)

// The low-precision workloads (suite "lowp"), as
// ../shared/anchors/baseline_lowp.py measures torch on them: matrix
// products of 4096^3 in bfloat16, float16, int8 (into int32) and FP8 e4m3
// (scaled, into bfloat16), row quantisation of an 8192^2 float32 matrix to
// int8 with its scales, softmax along the rows of the same, and an add of
// 2^26 bfloat16. The tensor-core rates the products are compared with are
// ceilings of their own (ceil_bf16, ceil_fp16, ceil_int8, ceil_fp8: the
// same library products at 8192^3), measured in the same run when a
// workload that uses them is selected. On the CPU the sizes are smaller
// (1024^3, 2048^2, 2^24) and there are no peers.
//
// Every workload runs what a user writes with package array, each result
// closed before the next repetition, and is checked against a CPU
// reference: products on sampled rows and columns against float64, the
// quantisation and the add bit for bit, softmax on sampled rows.

type lowpSizes struct {
	mat, matSmall   int // side of the products
	ceil            int // side of the ceiling products
	rows, rowsSmall int // side of the quantised and softmaxed matrix
	vec, vecSmall   int // elements of the add
}

var (
	gpuLowp = lowpSizes{mat: 4096, matSmall: 256, ceil: 8192, rows: 8192, rowsSmall: 256, vec: 1 << 26, vecSmall: 1 << 20}
	cpuLowp = lowpSizes{mat: 1024, matSmall: 128, rows: 2048, rowsSmall: 128, vec: 1 << 24, vecSmall: 1 << 18}
)

// matmulKind is the operand types and layout of a product workload.
type matmulKind struct {
	in array.DType
	tn bool // b is a transposed view of a contiguous N×K matrix
}

func init() {
	suites := []string{"lowp"}
	for _, d := range []Device{CUDA, CPU} {
		sz := gpuLowp
		if d == CPU {
			sz = cpuLowp
		}
		peers := func(p ...Peer) []Peer {
			if d == CUDA {
				return p
			}
			return nil
		}
		side := fmt.Sprintf("%d^3", sz.mat)
		Register(Workload{Name: "matmul_bf16", Doc: "array x.MatMul(w), " + side + " bfloat16, float32 accumulation (cuBLAS GemmEx)",
			Kind: Compute, Devices: d, Suites: suites, Roof: RoofBF16, Reps: 20,
			Peers: peers(Peer{"torch", "matmul_4096_bf16_ms", Millis}), Setup: setupLowpMatmul(sz, matmulKind{in: array.BFloat16}, false)})
		Register(Workload{Name: "matmul_fp16", Doc: "array x.MatMul(w), " + side + " float16, float32 accumulation (cuBLAS GemmEx)",
			Kind: Compute, Devices: d, Suites: suites, Roof: RoofFP16, Reps: 20,
			Peers: peers(Peer{"torch", "matmul_4096_fp16_ms", Millis}), Setup: setupLowpMatmul(sz, matmulKind{in: array.Float16}, false)})
		Register(Workload{Name: "matmul_int8", Doc: "array x.MatMul(w), " + side + " int8 -> int32, w row-major as torch._int_mm's (a transposing copy, then cuBLASLt IMMA)",
			Kind: Compute, Devices: d, Suites: suites, Roof: RoofInt8, Reps: 20,
			Peers: peers(Peer{"torch._int_mm", "matmul_4096_int8_ms", Millis}), Setup: setupLowpMatmul(sz, matmulKind{in: array.Int8}, false)})
		Register(Workload{Name: "matmul_int8_tn", Doc: "array x.MatMul(w.T()), " + side + " int8 -> int32, w an N×K matrix (cuBLASLt IMMA, no copy)",
			Kind: Compute, Devices: d, Suites: suites, Roof: RoofInt8, Reps: 20,
			Peers: peers(Peer{"torch._int_mm", "matmul_4096_int8_ms", Millis}), Setup: setupLowpMatmul(sz, matmulKind{in: array.Int8, tn: true}, false)})
		Register(Workload{Name: "matmul_fp8", Doc: "array ScaledMatMul(x, w.T(), sx, sw, BFloat16), " + side + " FP8 e4m3 (cuBLASLt)",
			Kind: Compute, Devices: d, Suites: suites, Roof: RoofFP8, Reps: 20,
			Peers: peers(Peer{"torch._scaled_mm", "matmul_4096_fp8_ms", Millis}), Setup: setupLowpMatmul(sz, matmulKind{in: array.Float8E4M3, tn: true}, false)})
		Register(Workload{Name: "quantize_rows", Doc: fmt.Sprintf("array x.Quantize(Int8, 1), %d^2 float32 to int8 and a scale per row (one kernel)", sz.rows),
			Kind: Bandwidth, Devices: d, Suites: suites,
			Peers: peers(Peer{"torch.compile", "quantise_rows_8192sq_compile_ms", Millis}, Peer{"torch eager", "quantise_rows_8192sq_torch_ms", Millis}),
			Setup: setupQuantizeRows(sz)})
		Register(Workload{Name: "softmax_rows", Doc: fmt.Sprintf("array x.Softmax(1), %d^2 float32 (one kernel, rows in registers)", sz.rows),
			Kind: Bandwidth, Devices: d, Suites: suites,
			Peers: peers(Peer{"torch", "softmax_rows_8192sq_ms", Millis}), Setup: setupSoftmaxRows(sz)})
		vec := "2^26"
		if d == CPU {
			vec = "2^24"
		}
		Register(Workload{Name: "add_bf16", Doc: "array x.Add(y).Eval(), " + vec + " bfloat16 (computed in float32, rounded once)",
			Kind: Bandwidth, Devices: d, Suites: suites, Setup: setupAddBF16(sz)})
	}
	ceil := fmt.Sprintf("%d^3", gpuLowp.ceil)
	for _, c := range []struct {
		name string
		roof Ceiling
		kind matmulKind
		doc  string
	}{
		{"ceil_bf16", BF16Roof, matmulKind{in: array.BFloat16}, "bfloat16 GEMM " + ceil + " (cuBLAS GemmEx, float32 accumulation)"},
		{"ceil_fp16", FP16Roof, matmulKind{in: array.Float16}, "float16 GEMM " + ceil + " (cuBLAS GemmEx, float32 accumulation)"},
		{"ceil_int8", Int8Roof, matmulKind{in: array.Int8, tn: true}, "int8 GEMM " + ceil + " into int32, TN (cuBLASLt IMMA)"},
		{"ceil_fp8", FP8Roof, matmulKind{in: array.Float8E4M3, tn: true}, "FP8 e4m3 GEMM " + ceil + " into bfloat16, TN (cuBLASLt)"},
	} {
		Register(Workload{Name: c.name, Doc: c.doc, Kind: Compute, Devices: CUDA, Suites: suites, Ceiling: c.roof,
			Roof: roofOf(c.roof), Reps: 10, Setup: setupLowpMatmul(gpuLowp, c.kind, true)})
	}
}

// lowpHost draws n float32 values in [-1, 1) and rounds them as storing
// them in dt does (integers in [-128, 127] for int8; the 8-bit float
// scaled to use its range), returning the values as float32.
func lowpHost(r *rand.Rand, dt array.DType, n int) []float32 {
	x := randFloats(r, n)
	parallel(n, 1<<16, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			v := x[i]
			switch dt {
			case array.BFloat16:
				v = lowp.BFloat16FromFloat32(v).Float32()
			case array.Float16:
				v = lowp.Float16FromFloat32(v).Float32()
			case array.Float8E4M3:
				v = lowp.Float8E4M3FromFloat32(v * 8).Float32()
			case array.Int8:
				v = float32(math.Floor(float64(v) * 128))
			}
			x[i] = v
		}
	})
	return x
}

// setupLowpMatmul times one product of n×n matrices of the kind's dtype.
// A ceiling uses the ceiling size.
func setupLowpMatmul(sz lowpSizes, k matmulKind, ceiling bool) func(e *Env) (*Case, error) {
	return func(e *Env) (*Case, error) {
		n := size(e, sz.mat, sz.matSmall)
		if ceiling {
			n = size(e, sz.ceil, sz.matSmall)
		}
		a, err := newArrays(e)
		if err != nil {
			return nil, err
		}
		if k.in.IsFloat8() {
			if err := fp8Unsupported(a.dev); err != nil {
				return nil, errs(Skipf("%v", err), a.close())
			}
		}
		ah, bh := lowpHost(e.Rand, k.in, n*n), lowpHost(e.Rand, k.in, n*n)
		xf, err := a.input(ah, n, n)
		if err != nil {
			return nil, errs(err, a.close())
		}
		// w holds b (K×N) row-major, or its transpose (N×K) for a TN product.
		wh := bh
		if k.tn {
			wh = transpose(bh, n, n)
		}
		wf, err := a.input(wh, n, n)
		if err != nil {
			return nil, errs(err, a.close())
		}
		x := xf.AsType(k.in).Eval()
		w := wf.AsType(k.in).Eval()
		a.in = append(a.in, x, w)
		if err := errs2(x.Err(), w.Err()); err != nil {
			return nil, errs(err, a.close())
		}
		b := w
		if k.tn {
			b = w.T()
			a.in = append(a.in, b)
		}
		one := a.dev.Ones(array.Float32).Eval()
		a.in = append(a.in, one)
		op := func() *array.Array { return x.MatMul(b) }
		out := k.in
		switch {
		case k.in == array.Int8:
			out = array.Int32
		case k.in.IsFloat8():
			out = array.BFloat16
			op = func() *array.Array { return array.ScaledMatMul(x, b, one, one, array.BFloat16) }
		}
		if err := a.poisonAs(out, n, n); err != nil {
			return nil, errs(err, a.close())
		}
		// Tolerances relative to sum |a||b|: float32 accumulation plus the
		// output's rounding; int8 products are exact.
		tol := tolFP32 + 1.0/128
		switch out {
		case array.Float16:
			tol = tolFP32 + 1.0/1024
		case array.Int32:
			tol = 0
		}
		return &Case{
			Run: a.runAny(op),
			Check: func() error {
				got, err := a.resultFloat64()
				if err != nil {
					return err
				}
				return checkMatmul64(ah, bh, got, n, n, n, tol, e.Rand)
			},
			Close: a.close, Stream: a.stream,
			Flops: 2 * float64(n) * float64(n) * float64(n),
			Bytes: float64(n*n) * float64(2*k.in.Size()+out.Size()),
		}, nil
	}
}

// fp8Unsupported says why the device cannot run FP8 products (a GPU
// without FP8 tensor cores), or nil.
func fp8Unsupported(d *array.Maker) error {
	if !d.IsGPU() {
		return nil
	}
	z := array.ScaledMatMul(d.Zeros(array.Float8E4M3, 16, 16), d.Zeros(array.Float8E4M3, 16, 16).T(), nil, nil, array.Float32)
	defer z.Close()
	return z.Err()
}

func transpose(x []float32, rows, cols int) []float32 {
	t := make([]float32, len(x))
	parallel(rows, 64, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			for j := 0; j < cols; j++ {
				t[j*rows+i] = x[i*cols+j]
			}
		}
	})
	return t
}

// checkMatmul64 is checkMatmul for a result read as float64 (int32
// products exceed float32's exact integers).
func checkMatmul64(a, b []float32, c []float64, m, n, k int, tol float64, r *rand.Rand) error {
	var bad error
	var once sync.Once
	fail := func(err error) { once.Do(func() { bad = err }) }
	parallel(m*n, 1<<16, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			if math.IsNaN(c[i]) || math.IsInf(c[i], 0) {
				fail(fmt.Errorf("matmul: c[%d][%d] = %v: never written or overflowed", i/n, i%n, c[i]))
				return
			}
		}
	})
	if bad != nil {
		return bad
	}
	var rows, cols []int
	for range 8 {
		rows = append(rows, r.IntN(m))
		cols = append(cols, r.IntN(n))
	}
	rows = append(rows, 0, m-1)
	cols = append(cols, 0, n-1)
	elem := func(i, j int) {
		var ref, mag float64
		for p := range k {
			x, y := float64(a[i*k+p]), float64(b[p*n+j])
			ref += x * y
			mag += math.Abs(x * y)
		}
		if d := math.Abs(c[i*n+j] - ref); d > tol*mag || math.IsNaN(d) {
			fail(fmt.Errorf("matmul: c[%d][%d] = %v, want %v (error %.3g, bound %.3g)", i, j, c[i*n+j], ref, d, tol*mag))
		}
	}
	parallel(len(rows)*n+len(cols)*m, 64, func(lo, hi int) {
		for t := lo; t < hi; t++ {
			if t < len(rows)*n {
				elem(rows[t/n], t%n)
			} else {
				u := t - len(rows)*n
				elem(u%m, cols[u/m])
			}
		}
	})
	return bad
}

// poisonAs makes an array of NaN (or -1 for integers) of the output's
// dtype and shape the last result, as poison does for float32.
func (a *arrays) poisonAs(dt array.DType, shape ...int) error {
	var p *array.Array
	if dt == array.Int32 || dt == array.Int8 {
		p = a.dev.Full(dt, -1, shape...).Eval()
	} else {
		p = a.dev.Full(dt, math.NaN(), shape...).Eval()
	}
	a.last = p
	return p.Err()
}

// runAny is run for results of any dtype.
func (a *arrays) runAny(op func() *array.Array) func() error {
	return func() error {
		a.release()
		z := op()
		if !z.DType().Valid() {
			return z.Err()
		}
		a.last = z
		return a.sync()
	}
}

// resultFloat64 reads the last result as float64.
func (a *arrays) resultFloat64() ([]float64, error) {
	if err := a.dev.Sync(); err != nil {
		return nil, err
	}
	if a.last == nil {
		return nil, fmt.Errorf("no result")
	}
	return a.last.Float64s()
}

func setupQuantizeRows(sz lowpSizes) func(e *Env) (*Case, error) {
	return func(e *Env) (*Case, error) {
		n := size(e, sz.rows, sz.rowsSmall)
		a, err := newArrays(e)
		if err != nil {
			return nil, err
		}
		xh := randFloats(e.Rand, n*n)
		x, err := a.input(xh, n, n)
		if err != nil {
			return nil, err
		}
		if err := a.poisonAs(array.Int8, n, n); err != nil {
			return nil, errs(err, a.close())
		}
		var scale *array.Array
		return &Case{
			Run: func() error {
				a.release()
				if scale != nil {
					scale.Close()
				}
				q, s := x.Quantize(array.Int8, 1)
				if !q.DType().Valid() {
					return q.Err()
				}
				a.last, scale = q, s
				return a.sync()
			},
			Check: func() error {
				if err := a.dev.Sync(); err != nil {
					return err
				}
				q, err := a.last.Int8s()
				if err != nil {
					return err
				}
				s, err := scale.Float32s()
				if err != nil {
					return err
				}
				// The reference in float32, as the kernel: bit for bit.
				var bad error
				var once sync.Once
				parallel(n, 16, func(lo, hi int) {
					for i := lo; i < hi; i++ {
						row := xh[i*n : (i+1)*n]
						var m float32
						for _, v := range row {
							m = max(m, float32(math.Abs(float64(v))))
						}
						sc := m / 127
						if sc == 0 {
							sc = 1
						}
						if s[i] != sc {
							once.Do(func() { bad = fmt.Errorf("quantize: scale of row %d = %v, want %v", i, s[i], sc) })
							return
						}
						for j, v := range row {
							want := int8(math.Max(-128, math.Min(127, math.RoundToEven(float64(v/sc)))))
							if q[i*n+j] != want {
								once.Do(func() { bad = fmt.Errorf("quantize: q[%d][%d] = %d, want %d", i, j, q[i*n+j], want) })
								return
							}
						}
					}
				})
				return bad
			},
			Close: func() error {
				if scale != nil {
					scale.Close()
				}
				return a.close()
			},
			Stream: a.stream,
			Bytes:  float64(n*n)*(4+1) + 4*float64(n), // read x, write q and the scales
		}, nil
	}
}

func setupSoftmaxRows(sz lowpSizes) func(e *Env) (*Case, error) {
	return func(e *Env) (*Case, error) {
		n := size(e, sz.rows, sz.rowsSmall)
		a, err := newArrays(e)
		if err != nil {
			return nil, err
		}
		xh := randFloats(e.Rand, n*n)
		x, err := a.input(xh, n, n)
		if err != nil {
			return nil, err
		}
		if err := a.poison(n, n); err != nil {
			return nil, errs(err, a.close())
		}
		return &Case{
			Run: a.run(func() *array.Array { return x.Softmax(1) }),
			Check: func() error {
				got, err := a.result()
				if err != nil {
					return err
				}
				for _, i := range []int{0, n / 3, n - 1, e.Rand.IntN(n)} {
					row := xh[i*n : (i+1)*n]
					mx := math.Inf(-1)
					for _, v := range row {
						mx = math.Max(mx, float64(v))
					}
					s := 0.0
					for _, v := range row {
						s += math.Exp(float64(v) - mx)
					}
					for j, v := range row {
						want := math.Exp(float64(v)-mx) / s
						if g := float64(got[i*n+j]); math.Abs(g-want) > 2e-6*want || math.IsNaN(g) {
							return fmt.Errorf("softmax: [%d][%d] = %v, want %v", i, j, g, want)
						}
					}
				}
				for i, v := range got {
					if !(v >= 0 && v <= 1) {
						return fmt.Errorf("softmax: element %d = %v, outside [0, 1] (never written?)", i, v)
					}
				}
				return nil
			},
			Close: a.close, Stream: a.stream,
			Bytes: 8 * float64(n*n),
		}, nil
	}
}

func setupAddBF16(sz lowpSizes) func(e *Env) (*Case, error) {
	return func(e *Env) (*Case, error) {
		n := size(e, sz.vec, sz.vecSmall)
		a, err := newArrays(e)
		if err != nil {
			return nil, err
		}
		xh, yh := lowpHost(e.Rand, array.BFloat16, n), lowpHost(e.Rand, array.BFloat16, n)
		xf, err := a.input(xh)
		if err != nil {
			return nil, err
		}
		yf, err := a.input(yh)
		if err != nil {
			return nil, errs(err, a.close())
		}
		x, y := xf.AsType(array.BFloat16).Eval(), yf.AsType(array.BFloat16).Eval()
		a.in = append(a.in, x, y)
		if err := a.poisonAs(array.BFloat16, n); err != nil {
			return nil, errs(err, a.close())
		}
		return &Case{
			Run: a.runAny(func() *array.Array { return x.Add(y).Eval() }),
			Check: func() error {
				if err := a.dev.Sync(); err != nil {
					return err
				}
				got, err := array.ToSlice[lowp.BFloat16](a.last)
				if err != nil {
					return err
				}
				var bad error
				var once sync.Once
				parallel(n, 1<<16, func(lo, hi int) {
					for i := lo; i < hi; i++ {
						if want := lowp.BFloat16FromFloat32(xh[i] + yh[i]); got[i] != want {
							once.Do(func() { bad = fmt.Errorf("bfloat16 add: element %d = %v, want %v", i, got[i], want) })
							return
						}
					}
				})
				return bad
			},
			Close: a.close, Stream: a.stream,
			Bytes: 6 * float64(n), Flops: float64(n), // read x and y, write z: 2 bytes each
		}, nil
	}
}
