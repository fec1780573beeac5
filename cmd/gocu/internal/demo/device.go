package demo

import (
	"errors"
	"fmt"
	"runtime"
	"strings"

	"github.com/gocu-dev/gocu"
	"github.com/gocu-dev/gocu/array"
	"github.com/gocu-dev/gocu/cuda"
	"github.com/gocu-dev/gocu/internal/units"
)

// OpenDevice opens the device a command names: "" or "auto" for
// gocu.Default() (the GPU if there is one, else the simulator;
// $GOCU_DEVICE overrides), else "sim", "cuda" or "cuda:N".
func OpenDevice(name string) (*gocu.Device, error) {
	switch strings.ToLower(name) {
	case "", "auto":
		return gocu.Default()
	case "cpu":
		return nil, errors.New(`--device cpu: the Go kernels run on the simulator ("sim") or a GPU ("cuda", "cuda:N")`)
	}
	return gocu.Open(name)
}

// ArrayDevice returns the array device that goes with dev, where the
// library matmul runs: on a GPU the same GPU (cuBLAS), on the simulator the
// CPU, since whoever chose the simulator asked for no GPU. Without
// --device the demo's device is gocu.Default(), the GPU when there is one,
// and its array device is then array.Default(): both follow GOCU_DEVICE,
// and package array has one *array.Device per GPU.
func ArrayDevice(dev *gocu.Device) (*array.Device, error) {
	g := dev.CUDA()
	if g == nil {
		return array.CPU(), nil
	}
	d, err := array.GPU(g.Ordinal())
	if err != nil {
		return nil, fmt.Errorf("arrays on %v: %w", dev, err)
	}
	return d, nil
}

// Describe says what a device is, for people: "cuda:0 (NVIDIA H100 80GB
// HBM3)", or for the simulator how many cores it runs on and, when no GPU
// was found, why.
func Describe(dev *gocu.Device) string {
	if dev.Kind() == gocu.CUDA {
		return dev.String()
	}
	s := fmt.Sprintf("sim, the CPU simulator on %d cores", runtime.GOMAXPROCS(0))
	if err := cuda.Init(); err != nil {
		s += " (no CUDA GPU: " + units.OneLine(err) + ")"
	}
	return s
}
