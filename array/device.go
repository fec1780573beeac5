package array

import (
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/gocu-dev/gocu"
	"github.com/gocu-dev/gocu/array/internal/backend"
	"github.com/gocu-dev/gocu/array/internal/cpu"
	"github.com/gocu-dev/gocu/array/internal/gpu"
	"github.com/gocu-dev/gocu/cuda"
)

// Maker is the arrays' side of a gocu.Device: On(dev) returns it, and its
// methods (Zeros, Ones, Full, Arange, NewRNG, ReadNPY, ...) create arrays
// on that device. There is one Maker per device; every array created on
// the device computes with the device's backend: on a GPU, generated
// kernels and cuBLAS queued on the device's default stream (the stream
// that launches of user kernels use too), on the CPU and the simulator the
// pure-Go CPU backend on all cores.
type Maker struct {
	dev       *gocu.Device // nil for a failed Maker and in some tests
	be        backend.Backend
	gpu       *gpu.Backend // the CUDA backend behind be, or nil
	err       error        // a device that could not be opened
	precision atomic.Int32 // -1: the package-wide precision
	poison    bool         // Empty fills new memory with 0xFF bytes (the simulator)
	storages  sync.Pool    // released *storage objects, for reuse
	tokens    sync.Pool    // free *lazyTokens, for reuse

	// young is the pending array made last, while it is not yet listed
	// with the storages it reads (lazy.go); youngMu orders replacing it
	// (and listing the one replaced) with flushes of those lists.
	young   atomic.Pointer[Array]
	youngMu sync.Mutex

	prep backend.Preparer // be, if it keeps handles of planned programs
	memo memoTable        // handles of programs evaluated last (memo.go)

	scalars [1 << scalarCacheBits]atomic.Pointer[expr] // recent scalar nodes (binaryScalar)

	scope   atomic.Pointer[Scope] // the innermost open scope (scope.go)
	scopeMu sync.Mutex            // orders opening and closing scopes
}

// scalarCacheBits sizes a Maker's cache of scalar nodes.
const scalarCacheBits = 4

// Precision selects how float32 matrix products are computed on a GPU, like
// torch.set_float32_matmul_precision: FP32 ("highest") or TF32 ("high",
// tensor cores with 10-bit mantissa inputs). The CPU always computes FP32.
type Precision uint8

// Matrix product precisions.
const (
	FP32 Precision = iota
	TF32
)

// Pool bounds of the CPU backends' caches of freed large buffers.
const (
	cpuPoolBytes = 512 << 20
	simPoolBytes = 64 << 20
)

var (
	makers      sync.Map // *gocu.Device -> *Maker
	makeMu      sync.Mutex
	defaultMu   sync.Mutex
	defaultMake atomic.Pointer[Maker]
	precision   atomic.Int32 // the package-wide float32 matmul precision
)

// On returns the Maker of dev: its methods create arrays on dev. On a GPU
// the first call sets up the array backend (NVRTC must be there); when
// that fails, every array the Maker creates fails with the reason.
func On(dev *gocu.Device) *Maker {
	if dev == nil {
		return failedMaker(errorf("On", ErrDevice, "nil *gocu.Device"))
	}
	if m, ok := makers.Load(dev); ok {
		return m.(*Maker)
	}
	makeMu.Lock()
	defer makeMu.Unlock()
	if m, ok := makers.Load(dev); ok {
		return m.(*Maker)
	}
	m := newMaker(dev)
	makers.Store(dev, m)
	return m
}

func newMaker(dev *gocu.Device) *Maker {
	m := &Maker{dev: dev}
	m.precision.Store(-1)
	switch dev.Kind() {
	case gocu.CUDA:
		b, err := gpu.New(dev.CUDA(), dev.Stream().CUDA())
		if err != nil {
			m.err = &Error{Op: "On", Kind: ErrDevice, Msg: fmt.Sprintf("cannot compute arrays on %v", dev), Cause: err}
			return m
		}
		m.be, m.gpu, m.prep = b, b, b
	case gocu.Sim:
		b := cpu.New(simPoolBytes)
		b.SetName("sim")
		m.be, m.poison = b, true
	default:
		m.be = cpu.New(cpuPoolBytes)
	}
	return m
}

func failedMaker(err error) *Maker {
	m := &Maker{err: err}
	m.precision.Store(-1)
	return m
}

// Default returns the Maker of the device that package-level constructors
// (Zeros, FromSlice, NewRNG, ...) use: SetDefault's, else gocu.Default():
// GOCU_DEVICE if set, else the first GPU, else the CPU. When GOCU_DEVICE
// names a device that cannot be opened, every array it creates fails with
// the reason.
func Default() *Maker {
	if m := defaultMake.Load(); m != nil {
		return m
	}
	defaultMu.Lock()
	defer defaultMu.Unlock()
	if m := defaultMake.Load(); m != nil {
		return m
	}
	var m *Maker
	if dev, err := gocu.Default(); err != nil {
		m = failedMaker(&Error{Op: "Default", Kind: ErrDevice, Msg: "no default device", Cause: err})
	} else {
		m = On(dev)
	}
	defaultMake.Store(m)
	return m
}

// SetDefault makes dev the device of the package-level constructors; nil
// returns to gocu.Default().
func SetDefault(dev *gocu.Device) {
	defaultMu.Lock()
	defer defaultMu.Unlock()
	if dev == nil {
		defaultMake.Store(nil)
		return
	}
	defaultMake.Store(On(dev))
}

// CPU returns the Maker of the CPU device (gocu.Open("cpu")).
func CPU() *Maker { return On(gocu.MustOpen("cpu")) }

// GPU returns the Maker of GPU ordinal (gocu.Open("cuda:N")), or an error
// on a machine where that GPU cannot be used.
func GPU(ordinal int) (*Maker, error) {
	if ordinal < 0 {
		return nil, errorf("GPU", ErrDevice, "negative GPU ordinal %d", ordinal)
	}
	dev, err := gocu.Open(fmt.Sprintf("cuda:%d", ordinal))
	if err != nil {
		return nil, &Error{Op: "GPU", Kind: ErrDevice, Msg: fmt.Sprintf("cannot open GPU %d", ordinal), Cause: err}
	}
	m := On(dev)
	if m.err != nil {
		return nil, m.err
	}
	return m, nil
}

// Device returns the gocu device the Maker creates arrays on (nil for a
// Maker that could not be set up).
func (m *Maker) Device() *gocu.Device {
	if m == nil {
		return nil
	}
	return m.dev
}

// String names the device ("cpu", "sim", "cuda:0").
func (m *Maker) String() string {
	switch {
	case m == nil:
		return "<nil device>"
	case m.err != nil:
		return "<failed device>"
	}
	return m.be.Name()
}

// IsGPU reports whether the device is a GPU.
func (m *Maker) IsGPU() bool { return m != nil && m.gpu != nil }

// Err reports why arrays cannot be created on the device (see On and
// Default), or nil.
func (m *Maker) Err() error {
	if m == nil {
		return errorf("Device", ErrDevice, "nil device")
	}
	return m.err
}

// check reports a nil or failed device, which user code can pass by mistake.
func (m *Maker) check(op string) error {
	if m == nil || (m.be == nil && m.err == nil) {
		return errorf(op, ErrDevice, "nil device")
	}
	return m.err
}

// Sync waits for every array operation queued on the device and returns
// the first asynchronous error. Reading an array to the host syncs by
// itself.
func (m *Maker) Sync() error {
	if err := m.check("Sync"); err != nil {
		return err
	}
	return deviceErr("Sync", m.be.Sync())
}

// SetMatMulPrecision sets the float32 matrix product precision of the
// device, overriding the package-wide one.
func (m *Maker) SetMatMulPrecision(p Precision) { m.precision.Store(int32(p)) }

// MatMulPrecision reports the float32 matrix product precision of the
// device: its own if set, else the package-wide one.
func (m *Maker) MatMulPrecision() Precision {
	if p := m.precision.Load(); p >= 0 {
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
func (m *Maker) TrimCache() {
	if m == nil || m.be == nil {
		return
	}
	if c, ok := m.be.(interface{ Trim() }); ok {
		c.Trim()
	}
}

// CUDAStream returns the stream a GPU device queues all its array
// operations on, in the order they are called, or nil for the CPU: the
// gocu device's default stream. Work recorded on it is ordered with the
// arrays' operations: gocu bench times array operations with CUDA events
// recorded on it. The stream belongs to the device: do not close it.
func (m *Maker) CUDAStream() *cuda.Stream {
	if m == nil || m.gpu == nil {
		return nil
	}
	return m.gpu.Stream()
}

// MemoryStats is the device memory a Maker's arrays hold.
type MemoryStats struct {
	InUse int64 // bytes allocated and not yet freed
	Peak  int64 // the most InUse since the last ResetPeakMemory
}

// Memory reports the bytes in use on the device and their peak: on a GPU
// the caching allocator's (its PeakInUse, all the device's allocations),
// on the CPU those of the arrays' buffers, pooled ones not counted. An
// array's bytes count until it is closed, or until the collector frees an
// unreachable one.
func (m *Maker) Memory() MemoryStats {
	if m == nil || m.be == nil {
		return MemoryStats{}
	}
	if m.gpu != nil {
		st := m.gpu.Device().Allocator().Stats()
		return MemoryStats{InUse: st.InUse, Peak: st.PeakInUse}
	}
	if c, ok := m.be.(interface{ Memory() (int64, int64) }); ok {
		in, peak := c.Memory()
		return MemoryStats{InUse: in, Peak: peak}
	}
	return MemoryStats{}
}

// ResetPeakMemory starts Memory's peak over from the bytes in use now.
func (m *Maker) ResetPeakMemory() {
	if m == nil || m.be == nil {
		return
	}
	if m.gpu != nil {
		m.gpu.Device().Allocator().ResetPeak()
		return
	}
	if c, ok := m.be.(interface{ ResetPeak() }); ok {
		c.ResetPeak()
	}
}
