package bench

import (
	"fmt"
	"math"

	"github.com/gocu-dev/gocu/array"
	"github.com/gocu-dev/gocu/cuda"
	"github.com/gocu-dev/gocu/nvrtc"
)

// Workloads of package array, the NumPy-style arrays: on a GPU through its
// CUDA backend (generated, fused kernels and cuBLAS, all queued on the
// device's own stream, which the CUDA events are recorded on: Case.Stream),
// on the CPU through its pure-Go backend. They run what a user writes:
// x.Add(y).Eval(), x.Sum(), x.Mul(1.5).Add(0.5).ReLU().Mul(2), x.MatMul(w),
// each result closed before the next repetition, as the array package's
// own GPU benchmarks do (array/bench_gpu_test.go).
//
// Sizes are baseline.py's on the GPU (2^26 float32, 4096^3); on the CPU
// they are those of the array package's CPU benchmarks (2^24 float32, as
// issue 5's "CPU: add of 2^24 float32", and 1024^3), which a 2-core machine
// runs in seconds. The peers (torch and CuPy on the GPU) are mapped on the
// GPU only.
//
// Outputs are fresh arrays, which the device's caching allocator takes
// from memory it kept; before the checked run, each workload evaluates an
// array of NaN of the output's size and closes it, so that the output most
// likely reuses poisoned memory. The checks compare every element.

// arraySizes are the sizes of the array workloads on one device.
type arraySizes struct {
	vec, vecSmall int // elements of the elementwise and sum workloads
	mat, matSmall int // side of the matrix products
	vecDoc        string
}

var (
	gpuArrays = arraySizes{vec: 1 << 26, vecSmall: 1 << 20, mat: 4096, matSmall: 256, vecDoc: "2^26"}
	cpuArrays = arraySizes{vec: 1 << 24, vecSmall: 1 << 18, mat: 1024, matSmall: 128, vecDoc: "2^24"}
)

// overheadOps is the number of tiny operations of one repetition of
// array_op_overhead (torch's figure times 10,000 in a row).
const overheadOps = 10_000

func init() {
	for _, d := range []Device{CUDA, CPU} {
		sz, on := gpuArrays, "one generated kernel"
		if d == CPU {
			sz, on = cpuArrays, "Go on all cores"
		}
		// peers maps the peers on the GPU only.
		peers := func(p ...Peer) []Peer {
			if d == CUDA {
				return p
			}
			return nil
		}
		suites := []string{"arrays"}
		Register(Workload{Name: "add", Doc: fmt.Sprintf("array x.Add(y).Eval(), %s float32 (%s)", sz.vecDoc, on),
			Kind: Bandwidth, Devices: d, Suites: suites,
			Peers: peers(Peer{"torch", "vadd_64M_torch_ms", Millis}), Setup: setupArrayAdd(sz)})
		Register(Workload{Name: "sum", Doc: fmt.Sprintf("array x.Sum() of %s float32 to one value", sz.vecDoc),
			Kind: Bandwidth, Devices: d, Suites: suites,
			Peers: peers(Peer{"torch", "sum_64M_torch_ms", Millis}, Peer{"CuPy", "sum_64M_cupy_ms", Millis}), Setup: setupArraySum(sz)})
		Register(Workload{Name: "chain_fused", Doc: fmt.Sprintf("array relu(1.5x+0.5)*2, %s float32, lazy and fused into %s", sz.vecDoc, on),
			Kind: Bandwidth, Devices: d, Suites: suites,
			Peers: peers(Peer{"torch.compile", "chain3_64M_torch_compile_ms", Millis}, Peer{"CuPy fuse", "chain3_64M_cupy_fuse_ms", Millis},
				Peer{"torch eager", "chain3_64M_torch_eager_ms", Millis}),
			Setup: setupArrayChain(sz, true)})
		Register(Workload{Name: "chain_unfused", Doc: fmt.Sprintf("the same chain evaluated op by op (4 passes, 3 intermediates), %s float32", sz.vecDoc),
			Kind: Bandwidth, Devices: d, Suites: suites,
			Peers: peers(Peer{"torch eager", "chain3_64M_torch_eager_ms", Millis}), Setup: setupArrayChain(sz, false)})
		lib := "cuBLAS"
		if d == CPU {
			lib = "the packed AVX2/FMA GEMM"
		}
		Register(Workload{Name: "matmul_array_fp32", Doc: fmt.Sprintf("array x.MatMul(w), %d^3 float32, FP32 (%s)", sz.mat, lib),
			Kind: Compute, Devices: d, Suites: suites, Reps: 10,
			Peers: peers(Peer{"torch cuBLAS", "sgemm_4096_cublas_fp32_ms", Millis}), Setup: setupArrayMatmul(sz, array.FP32)})
		Register(Workload{Name: "array_op_overhead", Doc: "10,000 x.Add(1).Eval() on 16 float32, each result closed, then one Sync (host cost per op)",
			Kind: Latency, Devices: d, Suites: suites, Clock: Wall, Unit: "us", Reps: 10, Warmup: 1,
			Peers: peers(Peer{"torch", "torch_launch_us_per_tiny_op", MicrosPerOp}), Setup: setupArrayOverhead})
		Register(Workload{Name: "array_op_overhead_into", Doc: "10,000 array.BinaryInto(z, OpAdd, x, 1) on 16 float32 (NumPy's out=: no array made), then one Sync (host cost per op)",
			Kind: Latency, Devices: d, Suites: suites, Clock: Wall, Unit: "us", Reps: 10, Warmup: 1,
			Peers: peers(Peer{"torch", "torch_launch_us_per_tiny_op", MicrosPerOp}), Setup: setupArrayOverheadInto})
	}
	Register(Workload{Name: "matmul_array_tf32", Doc: "array x.MatMul(w), 4096^3 float32 on TF32 tensor cores (cuBLAS)",
		Kind: Compute, Devices: CUDA, Suites: []string{"arrays"}, Roof: RoofTF32, Reps: 20,
		Peers: []Peer{{"torch cuBLAS", "sgemm_4096_cublas_tf32_ms", Millis}}, Setup: setupArrayMatmul(gpuArrays, array.TF32)})
}

// arrayDevice returns the array device of the benchmark's device and the
// stream its work is queued on (nil on the CPU).
func arrayDevice(e *Env) (*array.Maker, *cuda.Stream, error) {
	if e.Device != CUDA {
		return array.CPU(), nil, nil
	}
	if err := nvrtc.Load(); err != nil {
		return nil, nil, Skipf("the array GPU backend needs NVRTC: %v", err)
	}
	d, err := array.GPU(e.GPU.Ordinal())
	if err != nil {
		return nil, nil, err
	}
	s := d.CUDAStream()
	if s == nil {
		return nil, nil, fmt.Errorf("bench: array device %v has no CUDA stream", d)
	}
	return d, s, nil
}

// arrays holds what an array workload keeps: its inputs, and the result
// of the last repetition (closed when the next one is made).
type arrays struct {
	dev    *array.Maker
	stream *cuda.Stream
	in     []*array.Array
	last   *array.Array
}

func newArrays(e *Env) (*arrays, error) {
	d, s, err := arrayDevice(e)
	if err != nil {
		return nil, err
	}
	return &arrays{dev: d, stream: s}, nil
}

// input puts host data on the device.
func (a *arrays) input(x []float32, shape ...int) (*array.Array, error) {
	v := array.FromSliceOn(a.dev.Device(), x, shape...)
	if err := v.Err(); err != nil {
		return nil, err
	}
	a.in = append(a.in, v)
	return v, nil
}

// poison evaluates an array of NaN of the output's shape and keeps it as
// the last result: the first repetition closes it just before it allocates
// its output, which the caching allocator then most likely takes from it.
func (a *arrays) poison(shape ...int) error {
	p := a.dev.Full(array.Float32, math.NaN(), shape...).Eval()
	a.last = p
	return p.Err()
}

// keep makes z the last result, closing the previous one first. It reports
// a failed operation without waiting for the device (a failed array has
// no dtype); errors the GPU reports later surface at the check or the
// next synchronisation.
func (a *arrays) keep(z *array.Array) error {
	if z.DType() != array.Float32 {
		if err := z.Err(); err != nil {
			return err
		}
		return fmt.Errorf("bench: a result of dtype %v, want float32", z.DType())
	}
	a.last = z
	return nil
}

// release closes the last result before the next one is made.
func (a *arrays) release() {
	a.last.Close()
	a.last = nil
}

// sync waits for the CPU backend (a no-op there, for symmetry): on the GPU
// the runner's events and synchronisation do the waiting.
func (a *arrays) sync() error {
	if a.stream == nil {
		return a.dev.Sync()
	}
	return nil
}

// result reads the last result back, after waiting for the device.
func (a *arrays) result() ([]float32, error) {
	if err := a.dev.Sync(); err != nil {
		return nil, err
	}
	if a.last == nil {
		return nil, fmt.Errorf("no result")
	}
	return a.last.Float32s()
}

func (a *arrays) close() error {
	var err error
	if a.last != nil {
		err = a.last.Close()
	}
	for _, x := range a.in {
		x.Close()
	}
	// Surface an error the device reported meanwhile.
	if serr := a.dev.Sync(); err == nil {
		err = serr
	}
	return err
}

// run returns a repetition computing op and keeping its result.
func (a *arrays) run(op func() *array.Array) func() error {
	return func() error {
		a.release()
		if err := a.keep(op()); err != nil {
			return err
		}
		return a.sync()
	}
}

func setupArrayAdd(sz arraySizes) func(e *Env) (*Case, error) {
	return func(e *Env) (*Case, error) {
		n := size(e, sz.vec, sz.vecSmall)
		a, err := newArrays(e)
		if err != nil {
			return nil, err
		}
		xh, yh := randFloats(e.Rand, n), randFloats(e.Rand, n)
		x, err := a.input(xh)
		if err != nil {
			return nil, err
		}
		y, err := a.input(yh)
		if err != nil {
			return nil, errs(err, a.close())
		}
		if err := a.poison(n); err != nil {
			return nil, errs(err, a.close())
		}
		return &Case{
			Run: a.run(func() *array.Array { return x.Add(y).Eval() }),
			Check: func() error {
				got, err := a.result()
				if err != nil {
					return err
				}
				// One rounding in float32 on every backend: equal bits.
				return checkElems("x + y", got, n, func(i int) (float32, float64) { return xh[i] + yh[i], 0 })
			},
			Close: a.close, Stream: a.stream,
			Bytes: 12 * float64(n), Flops: float64(n), // read x and y, write z
		}, nil
	}
}

func setupArraySum(sz arraySizes) func(e *Env) (*Case, error) {
	return func(e *Env) (*Case, error) {
		n := size(e, sz.vec, sz.vecSmall)
		a, err := newArrays(e)
		if err != nil {
			return nil, err
		}
		// Integers from ±1 to ±8: every partial sum of any order stays far
		// below 2^24, so float32 sums them exactly, in whatever order the
		// backend adds, and the total must equal the exact one: a missed or
		// doubled element fails.
		xh := randInts(e.Rand, n)
		var want int64
		for _, v := range xh {
			want += int64(v)
		}
		x, err := a.input(xh)
		if err != nil {
			return nil, err
		}
		if err := a.poison(); err != nil {
			return nil, errs(err, a.close())
		}
		return &Case{
			Run: a.run(func() *array.Array { return x.Sum() }),
			Check: func() error {
				got, err := a.result()
				if err != nil {
					return err
				}
				if len(got) != 1 || float64(got[0]) != float64(want) {
					return fmt.Errorf("sum of %d integers is %v, want %d", n, got, want)
				}
				return nil
			},
			Close: a.close, Stream: a.stream,
			Bytes: 4 * float64(n), Flops: float64(n),
		}, nil
	}
}

// setupArrayChain times relu(1.5x+0.5)*2, fused (one pass: read x, write
// the result) or evaluated after every operation (four passes). Both count
// the bytes the fused chain moves (8 per element) and 3 FLOP per element
// (the multiplies and the add), so that their rates compare.
func setupArrayChain(sz arraySizes, fused bool) func(e *Env) (*Case, error) {
	return func(e *Env) (*Case, error) {
		n := size(e, sz.vec, sz.vecSmall)
		a, err := newArrays(e)
		if err != nil {
			return nil, err
		}
		xh := randFloats(e.Rand, n)
		x, err := a.input(xh)
		if err != nil {
			return nil, err
		}
		if err := a.poison(n); err != nil {
			return nil, errs(err, a.close())
		}
		op := func() *array.Array { return x.Mul(1.5).Add(0.5).ReLU().Mul(2).Eval() }
		if !fused {
			op = func() *array.Array {
				s := x.Mul(1.5).Eval()
				t := s.Add(0.5).Eval()
				s.Close()
				r := t.ReLU().Eval()
				t.Close()
				z := r.Mul(2).Eval()
				r.Close()
				return z
			}
		}
		return &Case{
			Run: a.run(op),
			Check: func() error {
				got, err := a.result()
				if err != nil {
					return err
				}
				return checkElems("relu(1.5x+0.5)*2", got, n, func(i int) (float32, float64) {
					v := float64(xh[i])
					// Rounding of 1.5x and of the add: a few ulp of the
					// operands, not of a result that cancels to near 0.
					return chainRef(xh[i]), 4 * 0x1p-24 * (3*math.Abs(v) + 1)
				})
			},
			Close: a.close, Stream: a.stream,
			Bytes: 8 * float64(n), Flops: 3 * float64(n),
		}, nil
	}
}

// chainRef is relu(1.5x+0.5)*2 in float32, each operation rounded (the
// conversions keep Go from fusing the multiply-add).
func chainRef(x float32) float32 {
	v := float32(x * 1.5)
	v = float32(v + 0.5)
	return max(v, 0) * 2
}

func setupArrayMatmul(sz arraySizes, p array.Precision) func(e *Env) (*Case, error) {
	return func(e *Env) (*Case, error) {
		n := size(e, sz.mat, sz.matSmall)
		a, err := newArrays(e)
		if err != nil {
			return nil, err
		}
		ah, bh := randFloats(e.Rand, n*n), randFloats(e.Rand, n*n)
		x, err := a.input(ah, n, n)
		if err != nil {
			return nil, err
		}
		w, err := a.input(bh, n, n)
		if err != nil {
			return nil, errs(err, a.close())
		}
		if err := a.poison(n, n); err != nil {
			return nil, errs(err, a.close())
		}
		// The precision is the device's, which other workloads share: set
		// before every product, restored at the end.
		prev := a.dev.MatMulPrecision()
		tol := tolFP32
		if p == array.TF32 {
			tol = tolTF32
		}
		return &Case{
			Run: a.run(func() *array.Array {
				a.dev.SetMatMulPrecision(p)
				return x.MatMul(w)
			}),
			Check: func() error {
				got, err := a.result()
				if err != nil {
					return err
				}
				return checkMatmul(ah, bh, got, n, n, n, tol, e.Rand)
			},
			Close: func() error {
				a.dev.SetMatMulPrecision(prev)
				return a.close()
			},
			Stream: a.stream,
			Flops:  2 * float64(n) * float64(n) * float64(n), Bytes: 12 * float64(n) * float64(n),
		}, nil
	}
}

// setupArrayOverhead times the host cost of a tiny operation, as torch's
// small.add_(1) loop: 10,000 whole operations in a row (the lazy
// expression, its evaluation as one launch, closing the result), then one
// wait for the device, on the wall clock.
func setupArrayOverhead(e *Env) (*Case, error) {
	const n = 16
	a, err := newArrays(e)
	if err != nil {
		return nil, err
	}
	xh := randFloats(e.Rand, n)
	x, err := a.input(xh)
	if err != nil {
		return nil, err
	}
	if err := a.poison(n); err != nil {
		return nil, errs(err, a.close())
	}
	return &Case{
		Run: func() error {
			for i := range overheadOps {
				z := x.Add(1).Eval()
				if i < overheadOps-1 {
					if z.DType() != array.Float32 {
						return z.Err()
					}
					z.Close()
					continue
				}
				a.release()
				if err := a.keep(z); err != nil {
					return err
				}
			}
			return a.dev.Sync()
		},
		Check: func() error {
			got, err := a.result()
			if err != nil {
				return err
			}
			return checkElems("x + 1", got, n, func(i int) (float32, float64) { return xh[i] + 1, 0 })
		},
		Close: a.close, Ops: overheadOps,
	}, nil
}

// setupArrayOverheadInto is setupArrayOverhead with each result written
// into one array by BinaryInto, which makes no array: closer to torch's
// in-place add_ than a new result each time.
func setupArrayOverheadInto(e *Env) (*Case, error) {
	const n = 16
	a, err := newArrays(e)
	if err != nil {
		return nil, err
	}
	xh := randFloats(e.Rand, n)
	x, err := a.input(xh)
	if err != nil {
		return nil, err
	}
	if err := a.poison(n); err != nil {
		return nil, errs(err, a.close())
	}
	z := a.last
	return &Case{
		Run: func() error {
			for range overheadOps {
				if err := array.BinaryInto(z, array.OpAdd, x, 1); err != nil {
					return err
				}
			}
			return a.dev.Sync()
		},
		Check: func() error {
			got, err := a.result()
			if err != nil {
				return err
			}
			return checkElems("x + 1", got, n, func(i int) (float32, float64) { return xh[i] + 1, 0 })
		},
		Close: a.close, Ops: overheadOps,
	}, nil
}

// errs joins a setup error with the error of releasing what was set up.
func errs(err, closeErr error) error {
	if closeErr != nil {
		return fmt.Errorf("%w (and releasing: %v)", err, closeErr)
	}
	return err
}
