package array

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/gocu-dev/gocu/array/internal/backend"
	"github.com/gocu-dev/gocu/array/internal/cpu"
	"github.com/gocu-dev/gocu/array/internal/gpu"
)

// Device is where arrays live and compute: the CPU (all cores, pure Go) or
// a GPU. Arrays of different devices do not mix; move one with To.
type Device struct {
	be        backend.Backend
	gpu       *gpu.Backend // the CUDA backend behind be, or nil
	err       error        // a device that could not be opened
	precision atomic.Int32 // -1: the package-wide precision
}

// Precision selects how float32 matrix products are computed on a GPU, like
// torch.set_float32_matmul_precision: FP32 ("highest") or TF32 ("high",
// tensor cores with 10-bit mantissa inputs). The CPU always computes FP32.
type Precision = backend.Precision

// Matrix product precisions.
const (
	FP32 = backend.FP32
	TF32 = backend.TF32
)

// cpuPoolBytes bounds the CPU backend's cache of freed large buffers.
const cpuPoolBytes = 512 << 20

var (
	cpuBackend    = cpu.New(cpuPoolBytes)
	cpuDevice     = newDevice(cpuBackend, nil)
	defaultDevice atomic.Pointer[Device]
	defaultOnce   sync.Once
	precision     atomic.Int32 // the package-wide float32 matmul precision
)

func newDevice(be backend.Backend, g *gpu.Backend) *Device {
	d := &Device{be: be, gpu: g}
	d.precision.Store(-1)
	return d
}

// CPU returns the CPU device.
func CPU() *Device { return cpuDevice }

var (
	gpuMu      sync.Mutex
	gpuDevices = map[int]*Device{}
)

// GPU returns GPU ordinal (0 is the first the driver lists, after
// CUDA_VISIBLE_DEVICES), opening it on first use; the same *Device is
// returned on every call. It fails on a machine without a usable GPU, with
// the driver's (or NVRTC's) reason.
func GPU(ordinal int) (*Device, error) {
	gpuMu.Lock()
	defer gpuMu.Unlock()
	if d := gpuDevices[ordinal]; d != nil {
		return d, nil
	}
	if ordinal < 0 {
		return nil, errorf("GPU", ErrDevice, "negative GPU ordinal %d", ordinal)
	}
	b, err := gpu.Open(ordinal)
	if err != nil {
		return nil, &Error{Op: "GPU", Kind: ErrDevice, Msg: fmt.Sprintf("cannot open GPU %d", ordinal), Cause: err}
	}
	d := newDevice(b, b)
	gpuDevices[ordinal] = d
	return d, nil
}

// GPUCount returns the number of GPUs the driver sees (0 without a driver).
func GPUCount() int { return gpu.Count() }

// Default returns the device that package-level constructors use: the one
// given to SetDefault, else the one chosen on first use. GOCU_DEVICE
// chooses it ("cpu", "cuda" for GPU 0, "cuda:N" for GPU N; "sim", gocu's
// simulator, means the CPU for arrays); without it Default is the first
// GPU when one can be used (a driver, a device and NVRTC), else the CPU.
// A GOCU_DEVICE that names a GPU that cannot be opened gives a device
// whose every operation fails with the reason.
func Default() *Device {
	if d := defaultDevice.Load(); d != nil {
		return d
	}
	defaultOnce.Do(func() { defaultDevice.CompareAndSwap(nil, chooseDefault()) })
	return defaultDevice.Load()
}

func chooseDefault() *Device {
	env := strings.TrimSpace(os.Getenv("GOCU_DEVICE"))
	switch {
	case env == "":
		if gpu.Available() == nil && gpu.Count() > 0 {
			if d, err := GPU(0); err == nil {
				return d
			}
		}
		return cpuDevice
	case env == "cpu" || env == "sim":
		return cpuDevice
	case env == "cuda" || env == "gpu":
		return openOrFail(0, env)
	case strings.HasPrefix(env, "cuda:"):
		n, err := strconv.Atoi(env[len("cuda:"):])
		if err != nil {
			return failedDevice(errorf("Default", ErrDevice, "GOCU_DEVICE=%q: want cpu, cuda or cuda:N", env))
		}
		return openOrFail(n, env)
	}
	return failedDevice(errorf("Default", ErrDevice, "GOCU_DEVICE=%q: want cpu, cuda or cuda:N", env))
}

func openOrFail(n int, env string) *Device {
	d, err := GPU(n)
	if err != nil {
		return failedDevice(&Error{Op: "Default", Kind: ErrDevice, Msg: fmt.Sprintf("GOCU_DEVICE=%s", env), Cause: err})
	}
	return d
}

func failedDevice(err error) *Device {
	d := &Device{err: err}
	d.precision.Store(-1)
	return d
}

// SetDefault makes d the default device (nil restores the CPU).
func SetDefault(d *Device) {
	defaultOnce.Do(func() {}) // an explicit choice wins over the automatic one
	if d == nil {
		d = cpuDevice
	}
	defaultDevice.Store(d)
}

// String names the device ("cpu", "cuda:0").
func (d *Device) String() string {
	switch {
	case d == nil:
		return "<nil device>"
	case d.err != nil:
		return "<failed device>"
	}
	return d.be.Name()
}

// IsGPU reports whether the device is a GPU.
func (d *Device) IsGPU() bool { return d != nil && d.gpu != nil }

// Err reports why a device could not be opened (see Default), or nil.
func (d *Device) Err() error {
	if d == nil {
		return errorf("Device", ErrDevice, "nil device")
	}
	return d.err
}

// check reports a nil or failed device, which user code can pass by mistake.
func (d *Device) check(op string) error {
	if d == nil || (d.be == nil && d.err == nil) {
		return errorf(op, ErrDevice, "nil device")
	}
	return d.err
}

// Sync waits for every operation queued on the device and returns the
// first asynchronous error. Reading an array to the host syncs by itself.
func (d *Device) Sync() error {
	if err := d.check("Sync"); err != nil {
		return err
	}
	return deviceErr("Sync", d.be.Sync())
}

// SetMatMulPrecision sets the float32 matrix product precision of the
// device, overriding the package-wide one.
func (d *Device) SetMatMulPrecision(p Precision) { d.precision.Store(int32(p)) }

// MatMulPrecision reports the float32 matrix product precision of the
// device: its own if set, else the package-wide one.
func (d *Device) MatMulPrecision() Precision {
	if p := d.precision.Load(); p >= 0 {
		return Precision(p)
	}
	return Precision(precision.Load())
}

// SetMatMulPrecision sets the float32 matrix product precision of every
// device that has not set its own, like torch.set_float32_matmul_precision:
// FP32 (the default) or TF32. TF32 products have a relative error of about
// 1e-3 (10-bit mantissa inputs, float32 accumulation).
func SetMatMulPrecision(p Precision) { precision.Store(int32(p)) }

// MatMulPrecision returns the package-wide float32 matrix product precision.
func MatMulPrecision() Precision { return Precision(precision.Load()) }

// TrimCache releases the memory the device keeps for reuse (the CPU
// backend's pool of freed buffers, a GPU's caching allocator; on a GPU it
// waits for the device).
func (d *Device) TrimCache() {
	if d == nil || d.be == nil {
		return
	}
	if c, ok := d.be.(interface{ Trim() }); ok {
		c.Trim()
	}
}
