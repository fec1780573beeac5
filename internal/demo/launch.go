package demo

import (
	"errors"
	"fmt"
	"sync"

	"github.com/gocu-dev/gocu"
	"github.com/gocu-dev/gocu/examples/kernels"
	"github.com/gocu-dev/gocu/gen/meta"
	"github.com/gocu-dev/gocu/kernel"
	"github.com/gocu-dev/gocu/sim"
)

// The launchers below run the lecture kernels of package kernels on a gocu
// device: on the simulator they call the Go function itself (its checked
// twin when GOCU_SIM_CHECKED=1), on a GPU the CUDA C++ that gocu gen
// translated it to, compiled with NVRTC for that GPU and cached. Each has
// the signature of the typed launcher gocu gen will write beside the
// kernel (issue 4), so that switching to kernels.LaunchGray and the others
// is one line per call.

// LaunchGray runs kernels.Gray: rgb holds n pixels in planar (CHW) RGB,
// gray receives n gray values.
func LaunchGray(dev *gocu.Device, cfg gocu.Config, rgb, gray *gocu.Buffer[uint8], n int32) error {
	if err := same(dev, "Gray", rgb, gray); err != nil {
		return err
	}
	if dev.Kind() == gocu.Sim {
		r, g := rgb.Host(), gray.Host()
		return simLaunch(cfg, "Gray", kernels.Gray, func(f func(*kernel.Thread, []uint8, []uint8, int32)) func(*kernel.Thread) {
			return func(t *kernel.Thread) { f(t, r, g, n) }
		}, r, g, n)
	}
	return cudaLaunch(dev, cfg, "Gray", rgb, int64(rgb.Len()), gray, int64(gray.Len()), n)
}

// LaunchGray2D runs kernels.Gray2D on a width x height image.
func LaunchGray2D(dev *gocu.Device, cfg gocu.Config, rgb, gray *gocu.Buffer[uint8], width, height int32) error {
	if err := same(dev, "Gray2D", rgb, gray); err != nil {
		return err
	}
	if dev.Kind() == gocu.Sim {
		r, g := rgb.Host(), gray.Host()
		return simLaunch(cfg, "Gray2D", kernels.Gray2D, func(f func(*kernel.Thread, []uint8, []uint8, int32, int32)) func(*kernel.Thread) {
			return func(t *kernel.Thread) { f(t, r, g, width, height) }
		}, r, g, width, height)
	}
	return cudaLaunch(dev, cfg, "Gray2D", rgb, int64(rgb.Len()), gray, int64(gray.Len()), width, height)
}

// LaunchMatMul runs kernels.MatMul, c = a b for an m x k a and a k x n b.
func LaunchMatMul(dev *gocu.Device, cfg gocu.Config, a, b, c *gocu.Buffer[float32], m, n, k int32) error {
	return launchMM(dev, cfg, "MatMul", kernels.MatMul, a, b, c, m, n, k)
}

// LaunchTiledMatMul runs kernels.TiledMatMul; cfg must have
// kernels.Tile x kernels.Tile blocks.
func LaunchTiledMatMul(dev *gocu.Device, cfg gocu.Config, a, b, c *gocu.Buffer[float32], m, n, k int32) error {
	return launchMM(dev, cfg, "TiledMatMul", kernels.TiledMatMul, a, b, c, m, n, k)
}

type mmKernel = func(t *kernel.Thread, a, b, c []float32, m, n, k int32)

func launchMM(dev *gocu.Device, cfg gocu.Config, name string, fn mmKernel, a, b, c *gocu.Buffer[float32], m, n, k int32) error {
	if err := same(dev, name, a, b, c); err != nil {
		return err
	}
	if dev.Kind() == gocu.Sim {
		ha, hb, hc := a.Host(), b.Host(), c.Host()
		return simLaunch(cfg, name, fn, func(f mmKernel) func(*kernel.Thread) {
			return func(t *kernel.Thread) { f(t, ha, hb, hc, m, n, k) }
		}, ha, hb, hc, m, n, k)
	}
	return cudaLaunch(dev, cfg, name, a, int64(a.Len()), b, int64(b.Len()), c, int64(c.Len()), m, n, k)
}

// same checks that the device exists and that every buffer is live and
// lives on it.
func same[T any](dev *gocu.Device, kernel string, bufs ...*gocu.Buffer[T]) error {
	if dev == nil {
		return fmt.Errorf("launch of %s: nil device", kernel)
	}
	for i, b := range bufs {
		if b == nil {
			return fmt.Errorf("launch of %s: buffer argument %d is nil", kernel, i+1)
		}
		if d := b.Device(); d != dev {
			if d == nil {
				return fmt.Errorf("launch of %s: buffer argument %d is an In, Out or InOut wrapper, which only gocu.Kernel.Launch and gocu gen's launchers take: allocate it on %v", kernel, i+1, dev)
			}
			return fmt.Errorf("launch of %s on %v: buffer argument %d lives on %v", kernel, dev, i+1, d)
		}
		if _, err := b.Slice(0, 0); err != nil { // a freed buffer
			return fmt.Errorf("launch of %s: buffer argument %d: %w", kernel, i+1, err)
		}
	}
	return nil
}

// simLaunch runs fn on the simulator. bind binds the kernel's arguments to
// fn or to its checked twin, which checked mode runs.
func simLaunch[F any](cfg gocu.Config, name string, fn F, bind func(F) func(*kernel.Thread), args ...any) error {
	sc := sim.Config{Grid: cfg.Grid, Block: cfg.Block, DynamicSharedBytes: cfg.Shared}
	if cfg.Grid == (gocu.Dim3{}) && cfg.Block == (gocu.Dim3{}) {
		if cfg.N <= 0 {
			return fmt.Errorf("launch of %s: no grid and block, and N = %d threads", name, cfg.N)
		}
		const block = 256 // gocu.Config.N on the simulator
		sc.Grid, sc.Block = kernel.Dim3{X: int32((cfg.N + block - 1) / block)}, kernel.Dim3{X: block}
	}
	k := sim.Kernel{Name: name, Func: bind(fn), Args: args}
	if tw, ok := Twin(fn); ok {
		k.Checked = bind(tw)
	}
	return sim.Launch(sc, k)
}

// Twin returns the checked twin of a kernel function of package kernels,
// for the simulator's checked mode: the one gocu gen registered with
// package meta, or, until examples/kernels/zz_gocu_kernels.go exists, the
// interim copy in zz_gocu_interim.go.
func Twin[F any](fn F) (F, bool) {
	if _, k, ok := meta.Lookup(fn); ok {
		if tw, ok := k.Checked.(F); ok {
			return tw, true
		}
	}
	p := funcPC(fn)
	for _, t := range interimTwins {
		if funcPC(t.fn) == p {
			tw, ok := t.twin.(F)
			return tw, ok
		}
	}
	var zero F
	return zero, false
}

// cudaSource returns the CUDA C++ of package kernels: the module gocu gen
// registered, or the interim copy.
func cudaSource() string {
	if m, _, ok := meta.Lookup(kernels.Gray); ok {
		return m.Source
	}
	return interimSource
}

// ErrNoKernel is returned when a kernel is missing from the compiled
// source.
var ErrNoKernel = errors.New("kernel not in gocu gen's source")

var modules sync.Map // *gocu.Device -> *gocu.Module, compiled once

// Module compiles package kernels' CUDA C++ for dev (a GPU), once per
// device; NVRTC's disk cache makes later runs of the program load it.
func Module(dev *gocu.Device) (*gocu.Module, error) {
	if m, ok := modules.Load(dev); ok {
		return m.(*gocu.Module), nil
	}
	m, err := dev.Compile(cudaSource(), gocu.Std("c++17"), gocu.Name("examples_kernels.cu"))
	if err != nil {
		return nil, fmt.Errorf("compiling the lecture kernels for %v: %w", dev, err)
	}
	modules.Store(dev, m)
	return m, nil
}

// cudaLaunch launches the kernel called name with its C arguments: each
// slice as its buffer and its length (long long), then the scalars.
func cudaLaunch(dev *gocu.Device, cfg gocu.Config, name string, args ...any) error {
	m, err := Module(dev)
	if err != nil {
		return err
	}
	k, err := m.Kernel(name)
	if err != nil {
		return fmt.Errorf("%s: %w: %v", name, ErrNoKernel, err)
	}
	return k.Launch(cfg, args...)
}
