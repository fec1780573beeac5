package demo

import (
	"fmt"
	"runtime"
	"strings"

	"github.com/gocu-dev/gocu"
	"github.com/gocu-dev/gocu/array"
	"github.com/gocu-dev/gocu/cuda"
	"github.com/gocu-dev/gocu/internal/units"
)

// OpenDevice opens the device a command names: "" or "auto" for
// gocu.Default() (the GPU if there is one, else the CPU; $GOCU_DEVICE
// overrides), else "cpu", "sim", "cuda" or "cuda:N". On the CPU and the
// simulator the Go kernels run on the simulator.
func OpenDevice(name string) (*gocu.Device, error) {
	switch strings.ToLower(name) {
	case "", "auto":
		return gocu.Default()
	}
	return gocu.Open(name)
}

// ArrayDevice returns the arrays of dev, where the library matmul runs:
// cuBLAS on a GPU, the CPU backend on the CPU and the simulator. They share
// dev's memory and default stream.
func ArrayDevice(dev *gocu.Device) (*array.Maker, error) {
	m := array.On(dev)
	if err := m.Err(); err != nil {
		return nil, fmt.Errorf("arrays on %v: %w", dev, err)
	}
	return m, nil
}

// Describe says what a device is, for people: "cuda:0 (NVIDIA H100 80GB
// HBM3)", or for the simulator how many cores it runs on and, when no GPU
// was found, why.
func Describe(dev *gocu.Device) string {
	if dev.Kind() == gocu.CUDA {
		return dev.String()
	}
	s := fmt.Sprintf("sim, the CPU simulator on %d cores", runtime.GOMAXPROCS(0))
	if dev.Kind() == gocu.CPU {
		s = fmt.Sprintf("cpu, %d cores (Go kernels on the simulator)", runtime.GOMAXPROCS(0))
	}
	if err := cuda.Init(); err != nil {
		s += " (no CUDA GPU: " + units.OneLine(err) + ")"
	}
	return s
}
