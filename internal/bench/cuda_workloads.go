package bench

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"unsafe"

	"github.com/gocu-dev/gocu"
	"github.com/gocu-dev/gocu/cublas"
	"github.com/gocu-dev/gocu/cuda"
	"github.com/gocu-dev/gocu/nvrtc"
)

// The GPU workloads. Sizes and CUDA C sources are those of
// bench/anchors/baseline.py, so that the peers' figures compare.

// graySrc is the lecture's grayscale kernel as CuPy's RawKernel runs it in
// baseline.py.
const graySrc = `extern "C" __global__ void rgb_to_grayscale(const unsigned char* x, unsigned char* out, int n){
      int i = blockIdx.x*blockDim.x + threadIdx.x;
      if (i < n) out[i] = 0.2989f*x[i] + 0.5870f*x[i+n] + 0.1140f*x[i+2*n]; }`

// naiveSrc and tiledSrc are the lecture's matmuls as in baseline.py.
const naiveSrc = `extern "C" __global__ void matmul_k(const float* m, const float* n, float* out, int h, int w, int k){
      int r = blockIdx.y*blockDim.y + threadIdx.y, c = blockIdx.x*blockDim.x + threadIdx.x;
      if (r>=h || c>=w) return; float o = 0; for (int i=0;i<k;++i) o += m[r*k+i]*n[i*w+c]; out[r*w+c] = o; }`

const tiledSrc = `#define TW 16
    extern "C" __global__ void matmul_t(const float* m, const float* n, float* out, int h, int w, int k){
      __shared__ float ms[TW][TW], ns[TW][TW];
      int tr=threadIdx.y, tc=threadIdx.x, r=blockIdx.y*TW+tr, c=blockIdx.x*TW+tc; float p=0;
      for (int ph=0; ph<(k+TW-1)/TW; ++ph){ int idx=ph*TW;
        ms[tr][tc] = (r<h && idx+tc<k) ? m[r*k+idx+tc] : 0.f; ns[tr][tc] = (c<w && idx+tr<k) ? n[(idx+tr)*w+c] : 0.f;
        __syncthreads(); for (int i=0;i<TW;++i) p += ms[tr][i]*ns[i][tc]; __syncthreads(); }
      if (r<h && c<w) out[r*w+c]=p; }`

// incSrc is the tiny kernel of the launch-overhead figures.
const incSrc = `extern "C" __global__ void inc(float* p){ p[0] += 1.f; }`

func init() {
	Register(Workload{Name: "copy", Doc: "device-to-device copy of 1 GiB (bytes read + written)", Kind: Bandwidth, Devices: CUDA,
		Suites: []string{"runtime"}, Ceiling: MemoryRoof,
		Peers: []Peer{{"torch", "d2d_copy_GBps(read+write)", GBps}}, Setup: setupCopy})
	Register(Workload{Name: "sgemm_fp32", Doc: "cuBLAS SGEMM 4096^3, FP32", Kind: Compute, Devices: CUDA,
		Suites: []string{"lecture"}, Ceiling: FP32Roof, Reps: 20,
		Peers: []Peer{{"torch", "sgemm_4096_cublas_fp32_ms", Millis}}, Setup: setupCublas(false)})
	Register(Workload{Name: "sgemm_tf32", Doc: "cuBLAS SGEMM 4096^3 on TF32 tensor cores", Kind: Compute, Devices: CUDA,
		Suites: []string{"lecture"}, Ceiling: TF32Roof, Roof: RoofTF32, Reps: 20,
		Peers: []Peer{{"torch", "sgemm_4096_cublas_tf32_ms", Millis}}, Setup: setupCublas(true)})
	Register(Workload{Name: "launch", Doc: "10,000 launches of a one-thread kernel, then one synchronisation", Kind: Latency, Devices: CUDA,
		Suites: []string{"runtime"}, Clock: Wall, Unit: "us", Reps: 5, Warmup: 1,
		Peers: []Peer{{"CuPy RawKernel", "cupy_rawkernel_launch_us", MicrosPerOp}, {"torch", "torch_launch_us_per_tiny_op", MicrosPerOp}},
		Setup: setupLaunch})
	Register(Workload{Name: "graph", Doc: "CUDA graph of 100 one-thread kernels, replayed 100 times", Kind: Latency, Devices: CUDA,
		Suites: []string{"runtime"}, Clock: Wall, Unit: "us", Reps: 10, Warmup: 1,
		Peers: []Peer{{"torch CUDA graph", "torch_cudagraph_us_per_tiny_op", MicrosPerOp}}, Setup: setupGraph})
	Register(Workload{Name: "h2d_pageable", Doc: "host-to-device copy of 256 MiB from Go memory", Kind: Bandwidth, Devices: CUDA,
		Suites: []string{"runtime"}, Roof: RoofNone, Reps: 10,
		Peers: []Peer{{"torch", "h2d_pageable_GBps", GBps}}, Setup: setupHostCopy(true, false)})
	Register(Workload{Name: "h2d_pinned", Doc: "host-to-device copy of 256 MiB from pinned memory", Kind: Bandwidth, Devices: CUDA,
		Suites: []string{"runtime"}, Roof: RoofNone, Reps: 10,
		Peers: []Peer{{"torch", "h2d_pinned_GBps", GBps}}, Setup: setupHostCopy(true, true)})
	Register(Workload{Name: "d2h_pinned", Doc: "device-to-host copy of 256 MiB into pinned memory", Kind: Bandwidth, Devices: CUDA,
		Suites: []string{"runtime"}, Roof: RoofNone, Reps: 10,
		Peers: []Peer{{"torch", "d2h_pinned_GBps", GBps}}, Setup: setupHostCopy(false, true)})
	Register(Workload{Name: "nvrtc_cold", Doc: "NVRTC compile of the grayscale kernel (new source each time), cache write and module load", Kind: Latency,
		Devices: CUDA, Suites: []string{"runtime"}, Clock: Wall, Unit: "ms", Reps: 5, Warmup: 1,
		Peers: []Peer{{"CuPy", "cupy_nvrtc_compile_small_kernel_ms", Millis}}, Setup: setupCompile(false)})
	Register(Workload{Name: "nvrtc_warm", Doc: "warm disk-cache load of the grayscale kernel: key, read, verify, module load", Kind: Latency,
		Devices: CUDA, Suites: []string{"runtime"}, Clock: Wall, Unit: "ms", Reps: 20, Setup: setupCompile(true)})
	Register(Workload{Name: "gray", Doc: "lecture grayscale, 4096x4096 uint8, CUDA C through gocu.Compile", Kind: Bandwidth, Devices: CUDA,
		Suites: []string{"lecture"},
		Peers:  []Peer{{"CuPy RawKernel", "gray_4096_cupy_rawkernel_ms", Millis}, {"torch", "gray_4096_torch_ms", Millis}},
		Setup:  setupGray})
	Register(Workload{Name: "matmul_naive", Doc: "lecture naive SGEMM 4096^3, 16x16 blocks, CUDA C", Kind: Compute, Devices: CUDA,
		Suites: []string{"lecture"}, Reps: 10,
		Peers: []Peer{{"CuPy RawKernel", "sgemm_4096_naive_lecture_ms", Millis}}, Setup: setupLectureMatmul(naiveSrc, "matmul_k")})
	Register(Workload{Name: "matmul_tiled", Doc: "lecture 16x16-tiled SGEMM 4096^3 in shared memory, CUDA C", Kind: Compute, Devices: CUDA,
		Suites: []string{"lecture"}, Reps: 10,
		Peers: []Peer{{"CuPy RawKernel", "sgemm_4096_tiled16_lecture_ms", Millis}}, Setup: setupLectureMatmul(tiledSrc, "matmul_t")})
}

func size(e *Env, full, small int) int {
	if e.Small {
		return small
	}
	return full
}

// asBytes views a slice of plain values as bytes.
func asBytes[T any](s []T) []byte {
	var z T
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(s))), len(s)*int(unsafe.Sizeof(z)))
}

// closer collects what to release, in reverse order.
type closer []func() error

func (c *closer) add(f func() error) { *c = append(*c, f) }

func (c closer) close() error {
	var errs []error
	for i := len(c) - 1; i >= 0; i-- {
		errs = append(errs, c[i]())
	}
	return errors.Join(errs...)
}

// fail releases what was set up so far and returns err.
func (c closer) fail(err error) (*Case, error) {
	c.close()
	return nil, err
}

// devAlloc allocates device memory, poisoned with 0xFF bytes.
func devAlloc(e *Env, c *closer, n int) (*cuda.Memory, error) {
	m, err := e.GPU.Alloc(n)
	if err != nil {
		return nil, err
	}
	c.add(m.Free)
	return m, m.MemsetD8(0xFF)
}

// readBack copies device memory into a new host slice.
func readBack[T any](m *cuda.Memory, n int) ([]T, error) {
	h := make([]T, n)
	return h, cuda.CopyDtoH(h, m)
}

func setupCopy(e *Env) (*Case, error) {
	n := size(e, 1<<28, 1<<20) // float32
	var c closer
	host := randFloats(e.Rand, n)
	src, err := devAlloc(e, &c, 4*n)
	if err != nil {
		return c.fail(err)
	}
	dst, err := devAlloc(e, &c, 4*n)
	if err != nil {
		return c.fail(err)
	}
	if err := cuda.CopyHtoD(src, host); err != nil {
		return c.fail(err)
	}
	return &Case{
		Run: func() error { return cuda.CopyDtoDAsync(dst, src, 4*n, e.CUStream) },
		Check: func() error {
			got, err := readBack[float32](dst, n)
			if err != nil {
				return err
			}
			return sameBytes("device-to-device copy", asBytes(got), asBytes(host))
		},
		Close: c.close, Bytes: 8 * float64(n),
	}, nil
}

func setupHostCopy(toDevice, pinned bool) func(e *Env) (*Case, error) {
	return func(e *Env) (*Case, error) {
		n := size(e, 1<<26, 1<<18) // float32: 256 MiB
		var c closer
		src := randFloats(e.Rand, n)
		dev, err := devAlloc(e, &c, 4*n)
		if err != nil {
			return c.fail(err)
		}
		host := src
		if pinned {
			h, err := e.GPU.AllocHost(4 * n)
			if err != nil {
				return c.fail(err)
			}
			c.add(h.Free)
			host = cuda.HostSlice[float32](h)
			if toDevice {
				copy(host, src)
			} else {
				poisonBytes(h.Bytes())
			}
		} else if !toDevice {
			return c.fail(errors.New("bench: no pageable device-to-host workload"))
		}
		cs := &Case{Close: c.close, Bytes: 4 * float64(n)}
		if toDevice {
			cs.Run = func() error { return cuda.CopyHtoDAsync(dev, host, e.CUStream) }
			cs.Check = func() error {
				got, err := readBack[float32](dev, n)
				if err != nil {
					return err
				}
				return sameBytes("host-to-device copy", asBytes(got), asBytes(src))
			}
			return cs, nil
		}
		if err := cuda.CopyHtoD(dev, src); err != nil {
			return c.fail(err)
		}
		cs.Run = func() error { return cuda.CopyDtoHAsync(host, dev, e.CUStream) }
		cs.Check = func() error { return sameBytes("device-to-host copy", asBytes(host), asBytes(src)) }
		return cs, nil
	}
}

// compileKernel compiles src for the GPU (through gocu's cache) and returns the
// named kernel.
func compileKernel(e *Env, src, name string) (*gocu.Kernel, error) {
	m, err := e.Dev.Compile(src, gocu.Name(name+".cu"))
	if err != nil {
		return nil, err
	}
	return m.Kernel(name)
}

func setupLaunch(e *Env) (*Case, error) {
	const launches = 10_000
	k, err := compileKernel(e, incSrc, "inc")
	if err != nil {
		return nil, err
	}
	p, err := gocu.Alloc[float32](e.Dev, 1)
	if err != nil {
		return nil, err
	}
	if err := p.Zero(); err != nil {
		p.Free()
		return nil, err
	}
	cfg := gocu.Config{Grid: gocu.Dim3{X: 1}, Block: gocu.Dim3{X: 1}, Stream: e.Stream}
	return &Case{
		Run: func() error {
			for range launches {
				if err := k.Launch(cfg, p); err != nil {
					return err
				}
			}
			return nil
		},
		Check: func() error { return checkCount(p, launches) },
		Close: p.Free, Ops: launches,
	}, nil
}

// checkCount checks the counter the inc kernel increments.
func checkCount(p *gocu.Buffer[float32], want int) error {
	v, err := p.ToSlice()
	if err != nil {
		return err
	}
	if v[0] != float32(want) {
		return fmt.Errorf("the kernel ran %v times, want %d", v[0], want)
	}
	return nil
}

func setupGraph(e *Env) (*Case, error) {
	const nodes, replays = 100, 100
	k, err := compileKernel(e, incSrc, "inc")
	if err != nil {
		return nil, err
	}
	var c closer
	p, err := gocu.Alloc[float32](e.Dev, 1)
	if err != nil {
		return nil, err
	}
	c.add(p.Free)
	if err := p.Zero(); err != nil {
		return c.fail(err)
	}
	// Graphs capture on a stream of their own.
	s, err := e.GPU.NewStream(cuda.StreamNonBlocking)
	if err != nil {
		return c.fail(err)
	}
	c.add(s.Close)
	cfg := cuda.Config{Grid: cuda.Dim3{X: 1}, Block: cuda.Dim3{X: 1}, Stream: s}
	g, err := s.Capture(cuda.CaptureRelaxed, func(s *cuda.Stream) error {
		for range nodes {
			if err := k.CUDA().Launch(cfg, p.Memory()); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return c.fail(err)
	}
	c.add(g.Close)
	x, err := g.Instantiate()
	if err != nil {
		return c.fail(err)
	}
	c.add(x.Close)
	if err := x.Upload(s); err != nil && !errors.Is(err, cuda.ErrNotSupported) {
		return c.fail(err)
	}
	return &Case{
		Run: func() error {
			for range replays {
				if err := x.Launch(s); err != nil {
					return err
				}
			}
			return nil
		},
		Check: func() error { return checkCount(p, nodes*replays) },
		Close: c.close, Ops: nodes * replays,
	}, nil
}

var compiles atomic.Int64

// setupCompile measures NVRTC: a cold compile of a new program (a kernel
// name never used before, as CuPy's figure does) through a disk cache in a
// temporary directory, and loading it; or (warm) loading it again from the
// cache through a new Cache, as a new process would.
func setupCompile(warm bool) func(e *Env) (*Case, error) {
	return func(e *Env) (*Case, error) {
		if err := nvrtc.Load(); err != nil {
			return nil, Skipf("NVRTC: %v", err)
		}
		if warm && nvrtc.CacheDisabledByEnv() {
			return nil, Skipf("GOCU_CACHE turns the disk cache off")
		}
		drv, err := cuda.DriverVersion()
		if err != nil {
			return nil, err
		}
		target, err := nvrtc.TargetFor(e.GPU.ComputeCapability())
		if err != nil {
			return nil, err
		}
		dir, err := os.MkdirTemp("", "gocu-bench-nvrtc-")
		if err != nil {
			return nil, err
		}
		load := func(name string, wantCached bool) (*cuda.Module, *cuda.Function, error) {
			c, err := nvrtc.NewCache(nvrtc.CacheConfig{Dir: dir, Driver: strconv.Itoa(drv)})
			if err != nil {
				return nil, nil, err
			}
			res, err := c.Compile(strings.ReplaceAll(graySrc, "rgb_to_grayscale", name), nvrtc.Options{Arch: target, Name: "gray.cu"})
			if err != nil {
				return nil, nil, err
			}
			if res.Cached != wantCached {
				return nil, nil, fmt.Errorf("bench: compile of %s: from the cache %v, want %v", name, res.Cached, wantCached)
			}
			m, err := e.GPU.LoadModule(res.Code)
			if err != nil {
				return nil, nil, err
			}
			f, err := m.Function(name)
			if err != nil {
				m.Unload()
				return nil, nil, err
			}
			return m, f, nil
		}
		fresh := func() string { return fmt.Sprintf("gray_%d_%d", os.Getpid(), compiles.Add(1)) }
		warmName := fresh()
		if warm {
			m, _, err := load(warmName, false)
			if err != nil {
				os.RemoveAll(dir)
				return nil, err
			}
			m.Unload()
		}
		once := func() error {
			name, cached := fresh(), false
			if warm {
				name, cached = warmName, true
			}
			m, _, err := load(name, cached)
			if err != nil {
				return err
			}
			return m.Unload()
		}
		return &Case{
			Run: once,
			// The module the timed path produces must run correctly.
			Check: func() error {
				name, cached := fresh(), false
				if warm {
					name, cached = warmName, true
				}
				m, f, err := load(name, cached)
				if err != nil {
					return err
				}
				defer m.Unload()
				return runGray(e, f)
			},
			Close: func() error { return os.RemoveAll(dir) },
			Ops:   1,
		}, nil
	}
}

// runGray launches a grayscale kernel on a small random image and checks
// it.
func runGray(e *Env, f *cuda.Function) error {
	const n = 100_003
	rgb := randBytes(e.Rand, 3*n)
	var c closer
	defer c.close()
	in, err := devAlloc(e, &c, 3*n)
	if err != nil {
		return err
	}
	out, err := devAlloc(e, &c, n)
	if err != nil {
		return err
	}
	if err := cuda.CopyHtoD(in, rgb); err != nil {
		return err
	}
	if err := f.Launch(cuda.Config{Grid: cuda.GridFor(n, 256), Block: cuda.Dim3{X: 256}}, in, out, int32(n)); err != nil {
		return err
	}
	got, err := readBack[byte](out, n)
	if err != nil {
		return err
	}
	return checkGray(rgb, got, n)
}

func setupGray(e *Env) (*Case, error) {
	side := size(e, 4096, 512)
	n := side * side
	k, err := compileKernel(e, graySrc, "rgb_to_grayscale")
	if err != nil {
		return nil, err
	}
	rgb := randBytes(e.Rand, 3*n)
	in, err := gocu.FromSlice(e.Dev, rgb)
	if err != nil {
		return nil, err
	}
	out, err := gocu.Alloc[uint8](e.Dev, n)
	if err != nil {
		in.Free()
		return nil, err
	}
	closeAll := func() error { return errors.Join(out.Free(), in.Free()) }
	if err := out.Memory().MemsetD8(0xFF); err != nil {
		closeAll()
		return nil, err
	}
	cfg := gocu.Grid1D(n, 256)
	cfg.Stream = e.Stream
	return &Case{
		Run: func() error { return k.Launch(cfg, in, out, int32(n)) },
		Check: func() error {
			got, err := out.ToSlice()
			if err != nil {
				return err
			}
			return checkGray(rgb, got, n)
		},
		Close: closeAll,
		Bytes: 4 * float64(n), Flops: 5 * float64(n), // 3 reads, 1 write; 3 multiplies, 2 adds
	}, nil
}

// matrices are the inputs the matmul workloads share: a and b, n x n,
// row-major, on the host and on the device (as gocu buffers, for the
// generated launchers of the Go kernels; da and db are their memory).
type matrices struct {
	n      int
	a, b   []float32
	ba, bb *gocu.Buffer[float32]
	da, db *cuda.Memory
}

func matmulInputs(e *Env) (*matrices, error) {
	v, err := e.Shared("matmul", func() (any, func() error, error) {
		n := size(e, 4096, 256)
		m := &matrices{n: n, a: randFloats(e.Rand, n*n), b: randFloats(e.Rand, n*n)}
		var c closer
		var err error
		if m.ba, err = gocu.FromSlice(e.Dev, m.a); err != nil {
			return nil, nil, err
		}
		c.add(m.ba.Free)
		if m.bb, err = gocu.FromSlice(e.Dev, m.b); err != nil {
			return nil, nil, errors.Join(err, c.close())
		}
		c.add(m.bb.Free)
		m.da, m.db = m.ba.Memory(), m.bb.Memory()
		return m, c.close, nil
	})
	if err != nil {
		return nil, err
	}
	return v.(*matrices), nil
}

// matmulCase returns the Case of a workload computing c = a b with run.
func matmulCase(e *Env, m *matrices, out *cuda.Memory, tol float64, run func() error, c closer) *Case {
	n := float64(m.n)
	return &Case{
		Run: run,
		Check: func() error {
			got, err := readBack[float32](out, m.n*m.n)
			if err != nil {
				return err
			}
			return checkMatmul(m.a, m.b, got, m.n, m.n, m.n, tol, e.Rand)
		},
		Close: c.close,
		Flops: 2 * n * n * n, Bytes: 3 * 4 * n * n, // reads a and b and writes c once at the least
	}
}

func setupCublas(tf32 bool) func(e *Env) (*Case, error) {
	return func(e *Env) (*Case, error) {
		if err := cublas.Load(); err != nil {
			return nil, Skipf("cuBLAS: %v", err)
		}
		m, err := matmulInputs(e)
		if err != nil {
			return nil, err
		}
		var c closer
		out, err := devAlloc(e, &c, 4*m.n*m.n)
		if err != nil {
			return c.fail(err)
		}
		var h *cublas.Handle
		err = e.GPU.WithContext(func() error {
			var err error
			if h, err = cublas.Create(); err != nil {
				return err
			}
			if tf32 {
				if err := h.SetMathMode(cublas.TF32TensorOpMath); err != nil {
					return err
				}
			}
			return h.SetStream(e.CUStream.Handle())
		})
		if h != nil {
			c.add(func() error { return e.GPU.WithContext(h.Destroy) })
		}
		if err != nil {
			return c.fail(err)
		}
		n := m.n
		a, b, cp := uint64(m.da.Ptr()), uint64(m.db.Ptr()), uint64(out.Ptr())
		tol := tolFP32
		if tf32 {
			tol = tolTF32
		}
		// Row-major C = A B is column-major Cᵀ = Bᵀ Aᵀ: swap the operands.
		sgemm := func() error { return h.Sgemm(cublas.NoTrans, cublas.NoTrans, n, n, n, 1, b, n, a, n, 0, cp, n) }
		return matmulCase(e, m, out, tol, func() error { return e.GPU.WithContext(sgemm) }, c), nil
	}
}

func setupLectureMatmul(src, name string) func(e *Env) (*Case, error) {
	return func(e *Env) (*Case, error) {
		k, err := compileKernel(e, src, name)
		if err != nil {
			return nil, err
		}
		m, err := matmulInputs(e)
		if err != nil {
			return nil, err
		}
		var c closer
		out, err := devAlloc(e, &c, 4*m.n*m.n)
		if err != nil {
			return c.fail(err)
		}
		n := int32(m.n)
		cfg := gocu.Grid2D(m.n, m.n, 16, 16)
		cfg.Stream = e.Stream
		run := func() error { return k.Launch(cfg, m.da, m.db, out, n, n, n) }
		return matmulCase(e, m, out, tolFP32, run, c), nil
	}
}
