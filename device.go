package gocu

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"

	"github.com/gocu-dev/gocu/cuda"
	"github.com/gocu-dev/gocu/nvrtc"
)

// Kind says what executes a Device's work.
type Kind uint8

// The kinds of device.
const (
	CUDA Kind = iota + 1 // an NVIDIA GPU, through the driver
	Sim                  // the CPU simulator of package sim, for debugging kernels
	CPU                  // the CPU: arrays on all cores; Go kernels on the simulator
)

func (k Kind) String() string {
	switch k {
	case CUDA:
		return "cuda"
	case Sim:
		return "sim"
	case CPU:
		return "cpu"
	}
	return "Kind(" + strconv.Itoa(int(k)) + ")"
}

// Device is where kernels run, buffers live and arrays compute: a CUDA GPU,
// the CPU simulator or the CPU. Devices are shared: Open returns the same
// *Device for the same name, with one context, one memory allocator and one
// default stream, whoever asks (buffers, kernels and the arrays of package
// array), so that work queued by any of them runs in the order it was
// queued. A Device may be used from any goroutine.
//
// The names, which GOCU_DEVICE also takes:
//
//	cuda, cuda:N  GPU N (cuda is cuda:0), after CUDA_VISIBLE_DEVICES
//	sim           the simulator: Go kernels run with its checks (bounds,
//	              barriers; races with Config.Checked or GOCU_SIM_CHECKED),
//	              new memory is filled with 0xFF bytes so that reading what
//	              nothing wrote shows; arrays compute natively on the CPU
//	cpu           the CPU: arrays compute on all cores, new memory is not
//	              poisoned; Go kernels still run on the simulator, the only
//	              CPU executor of their CUDA semantics
//
// CUDA C (Compile) needs a GPU.
type Device struct {
	kind   Kind
	gpu    *cuda.Device // CUDA only
	stream *Stream      // the default stream

	mu      sync.Mutex
	modules map[nvrtc.Key]*Module // loaded modules by cache key, per context
}

// ErrNoGPU is returned when a GPU was asked for and none can be used.
var ErrNoGPU = errors.New("gocu: no CUDA GPU available")

var (
	devMu   sync.Mutex
	devices = map[string]*Device{}

	defOnce sync.Once
	defDev  *Device
	defErr  error
)

// Default returns the device gocu uses when none is named: the one
// GOCU_DEVICE names if it is set, else the first GPU when a driver, a GPU
// and NVRTC are there, else the CPU. It is decided once per process.
func Default() (*Device, error) {
	defOnce.Do(func() {
		if name := os.Getenv("GOCU_DEVICE"); name != "" {
			defDev, defErr = Open(name)
			if defErr != nil {
				defErr = &envError{name: "GOCU_DEVICE", value: name, err: defErr}
			}
			return
		}
		if GPUUsable() == nil {
			if defDev, defErr = Open("cuda:0"); defErr == nil {
				return
			}
		}
		defDev, defErr = Open("cpu")
	})
	return defDev, defErr
}

// envError is the error of an environment variable's value: "gocu:
// GOCU_DEVICE=bogus: unknown device ...", without the "gocu: " of the
// wrapped error, which would stutter.
type envError struct {
	name, value string
	err         error
}

func (e *envError) Error() string {
	return "gocu: " + e.name + "=" + e.value + ": " + strings.TrimPrefix(e.err.Error(), "gocu: ")
}

func (e *envError) Unwrap() error { return e.err }

// GPUUsable reports why no GPU can be used here: the driver's error, no
// device, or NVRTC's error (gocu compiles every kernel at run time); nil
// when GPUs can be used.
func GPUUsable() error {
	if err := cuda.Init(); err != nil {
		return err
	}
	return nvrtc.Load()
}

// Open returns the device with the given name: "cpu", "sim", "cuda" (the
// first GPU) or "cuda:N".
func Open(name string) (*Device, error) {
	kind, ordinal, err := parseDevice(name)
	if err != nil {
		return nil, err
	}
	key := kind.String()
	if kind == CUDA {
		key += ":" + strconv.Itoa(ordinal)
	}
	devMu.Lock()
	defer devMu.Unlock()
	if d := devices[key]; d != nil {
		return d, nil
	}
	d := &Device{kind: kind, modules: map[nvrtc.Key]*Module{}}
	d.stream = &Stream{dev: d}
	if kind == CUDA {
		if err := cuda.Init(); err != nil {
			return nil, fmt.Errorf("%w: %w", ErrNoGPU, err)
		}
		n, err := cuda.DeviceCount()
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrNoGPU, err)
		}
		if ordinal >= n {
			return nil, fmt.Errorf("%w: cuda:%d asked for, but the driver sees %d GPU(s)", ErrNoGPU, ordinal, n)
		}
		if d.gpu, err = cuda.DeviceAt(ordinal); err != nil {
			return nil, fmt.Errorf("%w: %w", ErrNoGPU, err)
		}
		// The default stream is a stream of its own, not the legacy NULL
		// stream: work on it does not wait for other streams, and it can
		// be captured into a CUDA graph.
		if d.stream.s, err = d.gpu.NewStream(cuda.StreamNonBlocking); err != nil {
			return nil, fmt.Errorf("gocu: cuda:%d: creating the default stream: %w", ordinal, err)
		}
		cuda.MarkHelperPackage(thisPackage)
	}
	devices[key] = d
	return d, nil
}

// MustOpen is Open for programs and tests that cannot go on without the
// device: it panics with Open's error.
func MustOpen(name string) *Device {
	d, err := Open(name)
	if err != nil {
		panic(err)
	}
	return d
}

func parseDevice(name string) (Kind, int, error) {
	switch s := strings.ToLower(strings.TrimSpace(name)); {
	case s == "sim":
		return Sim, 0, nil
	case s == "cpu":
		return CPU, 0, nil
	case s == "cuda" || s == "gpu":
		return CUDA, 0, nil
	case strings.HasPrefix(s, "cuda:"):
		n, err := strconv.Atoi(s[len("cuda:"):])
		if err != nil || n < 0 {
			break
		}
		return CUDA, n, nil
	}
	return 0, 0, fmt.Errorf("gocu: unknown device %q: want cpu, sim, cuda or cuda:N", name)
}

// Kind returns what executes the device's work.
func (d *Device) Kind() Kind { return d.kind }

// IsGPU reports whether the device is a GPU.
func (d *Device) IsGPU() bool { return d != nil && d.kind == CUDA }

// CUDA returns the GPU behind d, or nil for the CPU and the simulator.
func (d *Device) CUDA() *cuda.Device { return d.gpu }

// Ordinal returns the GPU's index (cuda:N), or 0 for the CPU and the
// simulator.
func (d *Device) Ordinal() int {
	if d.gpu == nil {
		return 0
	}
	return d.gpu.Ordinal()
}

// Name returns the GPU's name, "simulator" or "cpu".
func (d *Device) Name() string {
	switch d.kind {
	case Sim:
		return "simulator"
	case CPU:
		return "cpu"
	}
	return d.gpu.Name()
}

// ID returns the device's name as Open takes it: "cpu", "sim" or
// "cuda:N".
func (d *Device) ID() string {
	if d.kind == CUDA {
		return "cuda:" + strconv.Itoa(d.gpu.Ordinal())
	}
	return d.kind.String()
}

// String returns "cuda:N (name)", "sim" or "cpu".
func (d *Device) String() string {
	if d == nil {
		return "<nil device>"
	}
	if d.kind != CUDA {
		return d.kind.String()
	}
	return fmt.Sprintf("cuda:%d (%s)", d.gpu.Ordinal(), d.gpu.Name())
}

// Synchronize waits for all work queued on the device, on every stream,
// and returns the first asynchronous error. On the CPU and the simulator
// work runs when it is queued, so it returns at once.
func (d *Device) Synchronize() error {
	if d.kind != CUDA {
		return nil
	}
	return d.gpu.Synchronize()
}

// TrimCache returns the memory the device's caching allocator keeps for
// reuse to the driver, after waiting for the device. It does nothing on
// the CPU and the simulator.
func (d *Device) TrimCache() error {
	if d.kind != CUDA {
		return nil
	}
	_, err := d.gpu.Allocator().Trim()
	return err
}

// Stream is an ordered queue of work on a device. A nil *Stream means the
// device's default stream (Device.Stream). On the CPU and the simulator
// every launch runs to completion before it returns, so streams only keep
// the API the same.
type Stream struct {
	dev *Device
	s   *cuda.Stream
}

// Stream returns the device's default stream: the stream of launches whose
// Config names none, of buffer copies, and of every operation of the
// arrays on the device. Do not close it.
func (d *Device) Stream() *Stream { return d.stream }

// NewStream returns a new stream that does not synchronise with the default
// stream. Close it when done.
func (d *Device) NewStream() (*Stream, error) {
	if d.kind != CUDA {
		return &Stream{dev: d}, nil
	}
	s, err := d.gpu.NewStream(cuda.StreamNonBlocking)
	if err != nil {
		return nil, err
	}
	return &Stream{dev: d, s: s}, nil
}

// Device returns the stream's device.
func (s *Stream) Device() *Device { return s.dev }

// CUDA returns the driver stream, or nil on the CPU and the simulator.
func (s *Stream) CUDA() *cuda.Stream {
	if s == nil {
		return nil
	}
	return s.s
}

// Synchronize waits for the work queued on s.
func (s *Stream) Synchronize() error {
	if s == nil || s.s == nil {
		return nil
	}
	return s.s.Synchronize()
}

// Close releases the stream. Closing the default stream does nothing.
func (s *Stream) Close() error {
	if s == nil || s.s == nil || s == s.dev.stream {
		return nil
	}
	return s.s.Close()
}

// CUDAStream returns the driver stream for work on d: s's, or d's default
// stream for nil. It fails for a stream of another device.
func (d *Device) CUDAStream(s *Stream) (*cuda.Stream, error) {
	if s == nil {
		return d.stream.s, nil
	}
	if s.dev != d {
		return nil, fmt.Errorf("gocu: the stream of %v used for work on %v", s.dev, d)
	}
	return s.s, nil
}
