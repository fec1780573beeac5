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
	Sim                  // the CPU simulator of package sim
)

func (k Kind) String() string {
	switch k {
	case CUDA:
		return "cuda"
	case Sim:
		return "sim"
	}
	return "Kind(" + strconv.Itoa(int(k)) + ")"
}

// Device is where kernels run and buffers live: a CUDA GPU or the CPU
// simulator. Devices are shared: Open returns the same *Device for the same
// name, and a Device may be used from any goroutine.
type Device struct {
	kind Kind
	gpu  *cuda.Device // CUDA only

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

// Default returns the device gocu uses when none is named: the device named
// by $GOCU_DEVICE ("sim", "cuda" or "cuda:N") if set, else the first GPU,
// else the simulator. It is decided once per process.
func Default() (*Device, error) {
	defOnce.Do(func() {
		if name := os.Getenv("GOCU_DEVICE"); name != "" {
			defDev, defErr = Open(name)
			if defErr != nil {
				defErr = &envError{name: "GOCU_DEVICE", value: name, err: defErr}
			}
			return
		}
		if n, err := cuda.DeviceCount(); err == nil && n > 0 {
			if defDev, defErr = Open("cuda:0"); defErr == nil {
				return
			}
		}
		defDev, defErr = Open("sim")
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

// Open returns the device with the given name: "sim" for the simulator,
// "cuda" for the first GPU, "cuda:N" for GPU N.
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
		if d.gpu, err = cuda.GetDevice(ordinal); err != nil {
			return nil, fmt.Errorf("%w: %w", ErrNoGPU, err)
		}
		cuda.MarkHelperPackage(thisPackage)
	}
	devices[key] = d
	return d, nil
}

func parseDevice(name string) (Kind, int, error) {
	switch s := strings.ToLower(strings.TrimSpace(name)); {
	case s == "sim":
		return Sim, 0, nil
	case s == "cuda" || s == "gpu":
		return CUDA, 0, nil
	case strings.HasPrefix(s, "cuda:"):
		n, err := strconv.Atoi(s[len("cuda:"):])
		if err != nil || n < 0 {
			break
		}
		return CUDA, n, nil
	}
	return 0, 0, fmt.Errorf("gocu: unknown device %q: want sim, cuda or cuda:N", name)
}

// Kind returns what executes the device's work.
func (d *Device) Kind() Kind { return d.kind }

// CUDA returns the GPU behind d, or nil for the simulator.
func (d *Device) CUDA() *cuda.Device { return d.gpu }

// Name returns the GPU's name, or "simulator".
func (d *Device) Name() string {
	if d.kind == Sim {
		return "simulator"
	}
	return d.gpu.Name()
}

// String returns "cuda:N (name)" or "sim".
func (d *Device) String() string {
	if d.kind == Sim {
		return "sim"
	}
	return fmt.Sprintf("cuda:%d (%s)", d.gpu.Ordinal(), d.gpu.Name())
}

// Synchronize waits for all work queued on the device. On the simulator,
// work runs at launch, so it returns at once.
func (d *Device) Synchronize() error {
	if d.kind == Sim {
		return nil
	}
	return d.gpu.Synchronize()
}

// Stream is an ordered queue of work on a device. A nil *Stream means the
// device's default stream. On the simulator every launch runs to completion
// before it returns, so streams only keep the API the same.
type Stream struct {
	dev *Device
	s   *cuda.Stream
}

// NewStream returns a new stream that does not synchronise with the default
// stream. Close it when done.
func (d *Device) NewStream() (*Stream, error) {
	if d.kind == Sim {
		return &Stream{dev: d}, nil
	}
	s, err := d.gpu.NewStream(cuda.StreamNonBlocking)
	if err != nil {
		return nil, err
	}
	return &Stream{dev: d, s: s}, nil
}

// CUDA returns the driver stream, or nil on the simulator.
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

// Close releases the stream.
func (s *Stream) Close() error {
	if s == nil || s.s == nil {
		return nil
	}
	return s.s.Close()
}

// cudaStream returns the driver stream for work on d: s's, or d's default.
func (d *Device) cudaStream(s *Stream) (*cuda.Stream, error) {
	if s == nil {
		return nil, nil
	}
	if s.dev != d {
		return nil, fmt.Errorf("gocu: stream of %v used for work on %v", s.dev, d)
	}
	return s.s, nil
}
