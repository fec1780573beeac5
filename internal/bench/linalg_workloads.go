package bench

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/gocu-dev/gocu/array"
	"github.com/gocu-dev/gocu/array/linalg"
)

// The linear algebra workloads (suite "linalg"), as
// ../shared/anchors/baseline_numpy.py measures CuPy on them: Solve of a
// 4096² system with 64 right-hand sides in float32 and float64, Inv,
// Cholesky, QR and Det of 4096² float32, the SVD of 1024² and Eigh of 2048²
// float32, 4096 batched 32² systems, and Einsum "bhqd,bhkd->bhqk" of
// 4×16×1024×64 float32. The matrices are CuPy's: normal entries plus n on
// the diagonal (symmetric X·Xᵀ for Cholesky, H + Hᵀ for Eigh). On the CPU
// the sizes are smaller and there are no peers.
//
// Every repetition runs what a user writes with package linalg, including
// its reading of cuSOLVER's info (one wait), as CuPy's does; the results
// of the first one are checked on sampled rows against float64 on the
// host. Flop counts are LAPACK's nominal ones.

type linalgSizes struct {
	n, nSmall       int // the square systems and factorisations
	svd, eigh       int
	batch, batchSm  int // systems of 32² in the batched solve
	heads, seq, dim int // einsum: 4 × heads × seq × dim
}

var (
	gpuLinalg = linalgSizes{n: 4096, nSmall: 256, svd: 1024, eigh: 2048, batch: 4096, batchSm: 64, heads: 16, seq: 1024, dim: 64}
	cpuLinalg = linalgSizes{n: 512, nSmall: 128, svd: 256, eigh: 256, batch: 512, batchSm: 64, heads: 4, seq: 256, dim: 64}
)

// linalgCase is one factorisation to time: setup draws inputs, run makes
// the results (all are closed before the next repetition), check verifies
// the first repetition's.
type linalgCase struct {
	dt    array.DType
	dev   *array.Maker
	in    []*array.Array
	last  []*array.Array
	run   func() []*array.Array
	check func(out []*array.Array) error
}

func (c *linalgCase) repeat() error {
	for _, x := range c.last {
		if x != nil {
			x.Close()
		}
	}
	c.last = c.run()
	for _, x := range c.last {
		if x != nil {
			if err := x.Err(); err != nil {
				return err
			}
		}
	}
	if !c.dev.IsGPU() {
		return c.dev.Sync()
	}
	return nil
}

func (c *linalgCase) close() error {
	for _, x := range append(c.last, c.in...) {
		if x != nil {
			x.Close()
		}
	}
	return c.dev.Sync()
}

func init() {
	suites := []string{"linalg"}
	for _, d := range []Device{CUDA, CPU} {
		sz := gpuLinalg
		if d == CPU {
			sz = cpuLinalg
		}
		peer := func(key string) []Peer {
			if d == CUDA {
				return []Peer{{"CuPy", key, Millis}}
			}
			return nil
		}
		n := sz.n
		for _, dt := range []array.DType{array.Float32, array.Float64} {
			t := "f32"
			if dt == array.Float64 {
				t = "f64"
			}
			Register(Workload{Name: "linalg_solve_" + t, Doc: fmt.Sprintf("linalg.Solve(a, b), a %d² %v, b with 64 columns (LU: getrf, getrs)", n, dt),
				Kind: Compute, Devices: d, Suites: suites, Reps: 10, Peers: peer(fmt.Sprintf("solve_4096_%s_cupy_ms", t)),
				Setup: setupLinalg(sz, dt, "solve")})
		}
		for _, op := range []struct{ name, doc string }{
			{"inv", "linalg.Inv(a) (getrf, getrs against I)"},
			{"cholesky", "linalg.Cholesky(a) (potrf)"},
			{"qr", "linalg.QR(a, Reduced) (geqrf, orgqr)"},
			{"det", "linalg.Det(a) (getrf, then array operations)"},
		} {
			Register(Workload{Name: "linalg_" + op.name + "_f32", Doc: fmt.Sprintf("%s, %d² float32", op.doc, n),
				Kind: Compute, Devices: d, Suites: suites, Reps: 10, Peers: peer(fmt.Sprintf("%s_4096_f32_cupy_ms", op.name)),
				Setup: setupLinalg(sz, array.Float32, op.name)})
		}
		Register(Workload{Name: "linalg_svd_f32", Doc: fmt.Sprintf("linalg.SVD(a, true), %d² float32 (Jacobi gesvdj)", sz.svd),
			Kind: Compute, Devices: d, Suites: suites, Reps: 5, Peers: peer("svd_1024_f32_cupy_ms"),
			Setup: setupLinalg(sz, array.Float32, "svd")})
		Register(Workload{Name: "linalg_svd_gesvd_f32", Doc: fmt.Sprintf("linalg.SVD(a, true) with SetSVDDriver(QRIteration), %d² float32 (gesvd, as CuPy)", sz.svd),
			Kind: Compute, Devices: d, Suites: suites, Reps: 5, Peers: peer("svd_1024_f32_cupy_ms"),
			Setup: setupLinalg(sz, array.Float32, "gesvd")})
		Register(Workload{Name: "linalg_eigh_f32", Doc: fmt.Sprintf("linalg.Eigh(a), %d² float32 (syevd)", sz.eigh),
			Kind: Compute, Devices: d, Suites: suites, Reps: 5, Peers: peer("eigh_2048_f32_cupy_ms"),
			Setup: setupLinalg(sz, array.Float32, "eigh")})
		Register(Workload{Name: "linalg_solve_batched", Doc: fmt.Sprintf("linalg.Solve(a, a[..., :1]), %d systems of 32² float32 (cuBLAS batched LU)", sz.batch),
			Kind: Compute, Devices: d, Suites: suites, Reps: 20, Peers: peer("solve_batched_4096x32_f32_cupy_ms"),
			Setup: setupLinalg(sz, array.Float32, "batched")})
		Register(Workload{Name: "linalg_einsum_attn", Doc: fmt.Sprintf("linalg.Einsum(\"bhqd,bhkd->bhqk\"), 4×%d×%d×%d float32 (one batched GEMM)", sz.heads, sz.seq, sz.dim),
			Kind: Compute, Devices: d, Suites: suites, Reps: 20, Peers: peer("einsum_bhqd_bhkd_4x16x1024x64_cupy_ms"),
			Setup: setupLinalg(sz, array.Float32, "einsum")})
	}
}

// normalMatrix draws rows×cols normal values plus diag on the diagonal.
func normalMatrix(r *rand.Rand, rows, cols int, diag float64) []float64 {
	x := make([]float64, rows*cols)
	for i := range x {
		x[i] = r.NormFloat64()
	}
	for i := range min(rows, cols) {
		x[i*cols+i] += diag
	}
	return x
}

func setupLinalg(sz linalgSizes, dt array.DType, op string) func(e *Env) (*Case, error) {
	return func(e *Env) (*Case, error) {
		dev, stream, err := arrayDevice(e)
		if err != nil {
			return nil, err
		}
		c := &linalgCase{dt: dt, dev: dev}
		put := func(v []float64, shape ...int) *array.Array {
			x := array.FromSliceOn(dev.Device(), v, shape...).AsType(dt).Eval()
			c.in = append(c.in, x)
			return x
		}
		r := e.Rand
		n := size(e, sz.n, sz.nSmall)
		var flops float64
		nf := float64(n)
		switch op {
		case "solve":
			ah, bh := normalMatrix(r, n, n, nf), normalMatrix(r, n, 64, 0)
			a, b := put(ah, n, n), put(bh, n, 64)
			c.run = func() []*array.Array { return []*array.Array{linalg.Solve(a, b)} }
			c.check = func(out []*array.Array) error {
				x, err := out[0].Float64s()
				if err != nil {
					return err
				}
				return checkRows(r, "solve", n, 64, func(i, j int) (float64, float64) {
					s, mag := 0.0, 0.0
					for k := range n {
						s += ah[i*n+k] * x[k*64+j]
						mag += math.Abs(ah[i*n+k] * x[k*64+j])
					}
					return s - bh[i*64+j], mag + math.Abs(bh[i*64+j])
				}, dt)
			}
			flops = 2*nf*nf*nf/3 + 2*nf*nf*64
		case "inv":
			ah := normalMatrix(r, n, n, nf)
			a := put(ah, n, n)
			c.run = func() []*array.Array { return []*array.Array{linalg.Inv(a)} }
			c.check = func(out []*array.Array) error {
				x, err := out[0].Float64s()
				if err != nil {
					return err
				}
				return checkRows(r, "inv", n, n, func(i, j int) (float64, float64) {
					s, mag := 0.0, 0.0
					for k := range n {
						s += ah[i*n+k] * x[k*n+j]
						mag += math.Abs(ah[i*n+k] * x[k*n+j])
					}
					if i == j {
						s--
					}
					return s, mag
				}, dt)
			}
			flops = 2*nf*nf*nf/3 + 2*nf*nf*nf
		case "cholesky":
			g := normalMatrix(r, n, n, nf)
			gx := put(g, n, n)
			a := gx.MatMul(gx.T()).Eval() // CuPy's a @ a.T
			c.in = append(c.in, a)
			c.run = func() []*array.Array { return []*array.Array{linalg.Cholesky(a)} }
			c.check = func(out []*array.Array) error {
				l, err := out[0].Float64s()
				if err != nil {
					return err
				}
				av, err := a.Float64s()
				if err != nil {
					return err
				}
				return checkRows(r, "cholesky", n, n, func(i, j int) (float64, float64) {
					s, mag := 0.0, 0.0
					for k := range n {
						s += l[i*n+k] * l[j*n+k]
						mag += math.Abs(l[i*n+k] * l[j*n+k])
					}
					return s - av[i*n+j], mag
				}, dt)
			}
			flops = nf * nf * nf / 3
		case "qr":
			ah := normalMatrix(r, n, n, nf)
			a := put(ah, n, n)
			c.run = func() []*array.Array { q, rr := linalg.QR(a, linalg.Reduced); return []*array.Array{q, rr} }
			c.check = func(out []*array.Array) error {
				q, err := out[0].Float64s()
				if err != nil {
					return err
				}
				rv, err := out[1].Float64s()
				if err != nil {
					return err
				}
				if err := checkRows(r, "qr: QR - A", n, n, func(i, j int) (float64, float64) {
					s, mag := 0.0, 0.0
					for k := range n {
						s += q[i*n+k] * rv[k*n+j]
						mag += math.Abs(q[i*n+k] * rv[k*n+j])
					}
					return s - ah[i*n+j], mag
				}, dt); err != nil {
					return err
				}
				return checkRows(r, "qr: QᵀQ - I", n, n, func(i, j int) (float64, float64) {
					s := 0.0
					for k := range n {
						s += q[k*n+i] * q[k*n+j]
					}
					if i == j {
						s--
					}
					return s, 1
				}, dt)
			}
			flops = 8 * nf * nf * nf / 3
		case "det":
			// Scaled by 1/n so that the determinant is finite in float32
			// (CuPy's a gives Inf); the work is the same.
			ah := normalMatrix(r, n, n, nf)
			for i := range ah {
				ah[i] /= nf
			}
			a := put(ah, n, n)
			c.run = func() []*array.Array { return []*array.Array{linalg.Det(a)} }
			c.check = func(out []*array.Array) error {
				got, err := out[0].Item()
				if err != nil {
					return err
				}
				// The reference: gonum's LU in float64 on the CPU.
				_, l := linalg.Slogdet(array.FromSliceOn(array.CPU().Device(), ah, n, n))
				want, err := l.Item()
				if err != nil {
					return err
				}
				if math.Abs(math.Log(math.Abs(got))-want) > tolOf(dt)*math.Max(1, math.Abs(want))*10 || got <= 0 {
					return fmt.Errorf("det: log|det| %v, want %v", math.Log(math.Abs(got)), want)
				}
				return nil
			}
			flops = 2 * nf * nf * nf / 3
		case "svd", "gesvd":
			n = size(e, sz.svd, sz.nSmall)
			nf = float64(n)
			ah := normalMatrix(r, n, n, 0)
			a := put(ah, n, n)
			drv := linalg.Jacobi
			if op == "gesvd" {
				drv = linalg.QRIteration
			}
			c.run = func() []*array.Array {
				defer linalg.SetSVDDriver(linalg.SetSVDDriver(drv))
				u, s, vh := linalg.SVD(a, true)
				return []*array.Array{u, s, vh}
			}
			c.check = func(out []*array.Array) error {
				u, err := out[0].Float64s()
				if err != nil {
					return err
				}
				s, err := out[1].Float64s()
				if err != nil {
					return err
				}
				vh, err := out[2].Float64s()
				if err != nil {
					return err
				}
				return checkRows(r, "svd: U·S·Vᵀ - A", n, n, func(i, j int) (float64, float64) {
					v, mag := 0.0, 0.0
					for k := range n {
						v += u[i*n+k] * s[k] * vh[k*n+j]
						mag += math.Abs(u[i*n+k] * s[k] * vh[k*n+j])
					}
					return v - ah[i*n+j], mag
				}, dt)
			}
			flops = 22 * nf * nf * nf
		case "eigh":
			n = size(e, sz.eigh, sz.nSmall)
			nf = float64(n)
			g := normalMatrix(r, n, n, 0)
			ah := make([]float64, n*n)
			for i := range n {
				for j := range n {
					ah[i*n+j] = g[i*n+j] + g[j*n+i]
				}
			}
			a := put(ah, n, n)
			c.run = func() []*array.Array { w, v := linalg.Eigh(a); return []*array.Array{w, v} }
			c.check = func(out []*array.Array) error {
				w, err := out[0].Float64s()
				if err != nil {
					return err
				}
				v, err := out[1].Float64s()
				if err != nil {
					return err
				}
				// (A·v_j)_i = w_j·v_ij.
				return checkRows(r, "eigh: A·V - V·Λ", n, n, func(i, j int) (float64, float64) {
					s, mag := 0.0, 0.0
					for k := range n {
						s += ah[i*n+k] * v[k*n+j]
						mag += math.Abs(ah[i*n+k] * v[k*n+j])
					}
					return s - w[j]*v[i*n+j], mag + math.Abs(w[j])
				}, dt)
			}
			flops = 9 * nf * nf * nf
		case "batched":
			nb := size(e, sz.batch, sz.batchSm)
			const m = 32
			ah := make([]float64, 0, nb*m*m)
			for range nb {
				ah = append(ah, normalMatrix(r, m, m, m)...)
			}
			a := put(ah, nb, m, m)
			b := a.Slice(array.Ellipsis, array.S(0, 1))
			c.run = func() []*array.Array { return []*array.Array{linalg.Solve(a, b)} }
			c.check = func(out []*array.Array) error {
				x, err := out[0].Float64s()
				if err != nil {
					return err
				}
				return checkRows(r, "batched solve", nb*m, 1, func(row, _ int) (float64, float64) {
					k, i := row/m, row%m
					s, mag := 0.0, 0.0
					for j := range m {
						s += ah[k*m*m+i*m+j] * x[k*m+j]
						mag += math.Abs(ah[k*m*m+i*m+j] * x[k*m+j])
					}
					return s - ah[k*m*m+i*m], mag
				}, dt)
			}
			flops = float64(nb) * (2*m*m*m/3 + 2*m*m)
		case "einsum":
			bsz, h, s, dd := 4, sz.heads, size(e, sz.seq, 128), sz.dim
			qh, kh := normalMatrix(r, bsz*h*s, dd, 0), normalMatrix(r, bsz*h*s, dd, 0)
			q, k := put(qh, bsz, h, s, dd), put(kh, bsz, h, s, dd)
			c.run = func() []*array.Array { return []*array.Array{linalg.Einsum("bhqd,bhkd->bhqk", q, k)} }
			c.check = func(out []*array.Array) error {
				y, err := out[0].Float64s()
				if err != nil {
					return err
				}
				return checkRows(r, "einsum", bsz*h*s, s, func(row, col int) (float64, float64) {
					bh := row / s
					v, mag := 0.0, 0.0
					for x := range dd {
						p := qh[row*dd+x] * kh[(bh*s+col)*dd+x]
						v += p
						mag += math.Abs(p)
					}
					return v - y[row*s+col], mag
				}, dt)
			}
			flops = 2 * float64(bsz*h*s*s*dd)
		default:
			return nil, fmt.Errorf("bench: unknown linalg workload %q", op)
		}
		return &Case{
			Run:    c.repeat,
			Check:  func() error { return c.check(c.last) },
			Close:  c.close,
			Stream: stream,
			Flops:  flops,
		}, nil
	}
}

// tolOf is the accepted error relative to the sum of magnitudes.
func tolOf(dt array.DType) float64 {
	if dt == array.Float32 {
		return 1e-4
	}
	return 1e-10
}

// checkRows checks elem on sampled rows (and all their columns, at most
// 64 of them sampled): elem returns the error of an entry and the sum of
// magnitudes that made it.
func checkRows(r *rand.Rand, what string, rows, cols int, elem func(i, j int) (err, mag float64), dt array.DType) error {
	var is, js []int
	for range 8 {
		is = append(is, r.IntN(rows))
	}
	is = append(is, 0, rows-1)
	if cols <= 64 {
		for j := range cols {
			js = append(js, j)
		}
	} else {
		for range 62 {
			js = append(js, r.IntN(cols))
		}
		js = append(js, 0, cols-1)
	}
	for _, i := range is {
		for _, j := range js {
			d, mag := elem(i, j)
			if math.IsNaN(d) || math.Abs(d) > tolOf(dt)*math.Max(mag, 1) {
				return fmt.Errorf("%s: entry [%d][%d] off by %.3g (magnitude %.3g)", what, i, j, d, mag)
			}
		}
	}
	return nil
}
