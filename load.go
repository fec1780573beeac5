package gocu

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"os"

	"github.com/gocu-dev/gocu/cuda"
	"github.com/gocu-dev/gocu/nvrtc"
)

// ErrWrongArch is wrapped by Load's error when the image holds no code
// the GPU can run: a CUBIN built for another architecture, or a fatbinary
// without code or PTX for this one.
var ErrWrongArch = errors.New("gocu: the module was built for another GPU")

// Load loads a module that nvcc (or any CUDA compiler) built ahead of
// time, a CUBIN, a fatbinary or PTX text, on d, and returns the same
// Module as Compile: its kernels launch with gocu's argument checks,
// errors, profiler and launch-blocking mode. A CUBIN runs only on the
// architecture it was built for (nvcc -arch=sm_90), PTX on that one and
// newer ones, compiled by the driver at load; a fatbinary holds several.
// An image with nothing for d's GPU fails with an error wrapping
// ErrWrongArch that names both architectures.
//
//	image, err := os.ReadFile("scale.cubin") // nvcc -cubin -arch=sm_90 scale.cu
//	m, err := gocu.Load(dev, image)
//	k, err := m.Kernel("scale")
func Load(d *Device, image []byte) (*Module, error) {
	if d == nil || d.kind == 0 {
		return nil, errors.New("gocu: Load: no device (a nil or zero *gocu.Device): use gocu.Default or gocu.Open")
	}
	if d.kind != CUDA {
		return nil, ErrSimulatorCUDA
	}
	if len(image) == 0 {
		return nil, errors.New("gocu: Load: the image is empty: pass the bytes of a .cubin, .fatbin or .ptx file")
	}
	cm, err := d.gpu.LoadModule(image)
	if err != nil {
		major, minor := d.gpu.ComputeCapability()
		if errors.Is(err, cuda.ErrNoBinaryForGPU) || errors.Is(err, cuda.ErrInvalidImage) && imageArch(image) != "" {
			return nil, archError(d, major, minor, image, err)
		}
		if errors.Is(err, cuda.ErrUnsupportedPTXVersion) {
			return nil, fmt.Errorf("gocu: Load: the PTX comes from a newer CUDA than the driver of %v understands: build it with the driver's CUDA or older, or load a CUBIN for sm_%d%d: %w", d, major, minor, err)
		}
		return nil, fmt.Errorf("gocu: Load: %w", err)
	}
	format := nvrtc.CUBIN
	if !bytes.HasPrefix(image, []byte("\x7fELF")) && !bytes.HasPrefix(image, fatbinMagic) {
		format = nvrtc.PTX
	}
	return &Module{dev: d, mod: cm, res: &nvrtc.Result{Code: image, Format: format}, kernels: map[string]*Kernel{}}, nil
}

// LoadFile reads a module file (.cubin, .fatbin or .ptx) and loads it on
// d; see Load.
func LoadFile(d *Device, path string) (*Module, error) {
	image, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("gocu: LoadFile: %w", err)
	}
	m, err := Load(d, image)
	if err != nil {
		return nil, fmt.Errorf("%w (%s)", err, path)
	}
	return m, nil
}

var fatbinMagic = []byte{0x50, 0xed, 0x55, 0xba}

// archError says that image has nothing for d's sm_major minor.
func archError(d *Device, major, minor int, image []byte, err error) error {
	built := "another architecture"
	if a := imageArch(image); a != "" {
		built = a
	}
	return &wrongArchError{msg: fmt.Sprintf("gocu: Load: the module was built for %s, and %s is sm_%d%d: build it for this GPU (nvcc -arch=sm_%d%d), or add PTX that the driver compiles for it (-gencode arch=compute_%d%d,code=compute_%d%d)",
		built, d, major, minor, major, minor, major, minor, major, minor), err: err}
}

type wrongArchError struct {
	msg string
	err error
}

func (e *wrongArchError) Error() string { return e.msg + " (" + e.err.Error() + ")" }
func (e *wrongArchError) Unwrap() []error {
	return []error{ErrWrongArch, e.err}
}

// imageArch returns the architecture a CUBIN was built for, as "sm_90",
// or "" when image is not a CUBIN of a known layout.
func imageArch(image []byte) string {
	// A CUDA ELF: 64-bit, little-endian, e_machine EM_CUDA (190); the
	// architecture is in e_flags, in its low byte up to ABI version 7 and
	// in its second byte from version 8.
	if len(image) < 0x34 || !bytes.HasPrefix(image, []byte("\x7fELF\x02\x01")) ||
		binary.LittleEndian.Uint16(image[0x12:]) != 190 {
		return ""
	}
	flags := binary.LittleEndian.Uint32(image[0x30:])
	sm := flags & 0xff
	if image[8] >= 8 {
		sm = flags >> 8 & 0xff
	}
	if sm < 20 || sm > 200 {
		return ""
	}
	return fmt.Sprintf("sm_%d", sm)
}
