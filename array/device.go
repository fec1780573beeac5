package array

import (
	"sync/atomic"

	"github.com/gocu-dev/gocu/array/internal/backend"
	"github.com/gocu-dev/gocu/array/internal/cpu"
)

// Device is where arrays live and compute: the CPU (all cores, pure Go) or
// a GPU. Arrays of different devices do not mix; move one with To.
type Device struct {
	be        backend.Backend
	precision atomic.Uint32
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
	cpuDevice     = &Device{be: cpuBackend}
	defaultDevice atomic.Pointer[Device]
)

// CPU returns the CPU device.
func CPU() *Device { return cpuDevice }

// Default returns the device that package-level constructors use: the one
// given to SetDefault, else the CPU.
func Default() *Device {
	if d := defaultDevice.Load(); d != nil {
		return d
	}
	return cpuDevice
}

// SetDefault makes d the default device (nil restores the CPU).
func SetDefault(d *Device) { defaultDevice.Store(d) }

// String names the device ("cpu", "cuda:0").
func (d *Device) String() string {
	if d == nil {
		return "<nil device>"
	}
	return d.be.Name()
}

// check reports a nil device, which user code can pass by mistake.
func (d *Device) check(op string) error {
	if d == nil || d.be == nil {
		return errorf(op, ErrDevice, "nil device")
	}
	return nil
}

// Sync waits for every operation queued on the device and returns the
// first asynchronous error. Reading an array to the host syncs by itself.
func (d *Device) Sync() error {
	if err := d.check("Sync"); err != nil {
		return err
	}
	return deviceErr("Sync", d.be.Sync())
}

// SetMatMulPrecision sets the float32 matrix product precision of the device.
func (d *Device) SetMatMulPrecision(p Precision) { d.precision.Store(uint32(p)) }

// MatMulPrecision reports the float32 matrix product precision.
func (d *Device) MatMulPrecision() Precision { return Precision(d.precision.Load()) }

// TrimCache releases the memory the device keeps for reuse (the CPU
// backend's pool of freed buffers).
func (d *Device) TrimCache() {
	if c, ok := d.be.(interface{ Trim() }); ok {
		c.Trim()
	}
}
