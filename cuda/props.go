package cuda

import (
	"fmt"
	"unsafe"

	"github.com/gocu-dev/gocu/internal/dynlib"
)

// DeviceAttribute is a CUdevice_attribute.
type DeviceAttribute int32

// Device attributes read into Props (values from cuda.h).
const (
	AttrMaxThreadsPerBlock           DeviceAttribute = 1
	AttrMaxBlockDimX                 DeviceAttribute = 2
	AttrMaxBlockDimY                 DeviceAttribute = 3
	AttrMaxBlockDimZ                 DeviceAttribute = 4
	AttrMaxGridDimX                  DeviceAttribute = 5
	AttrMaxGridDimY                  DeviceAttribute = 6
	AttrMaxGridDimZ                  DeviceAttribute = 7
	AttrMaxSharedMemoryPerBlock      DeviceAttribute = 8
	AttrTotalConstantMemory          DeviceAttribute = 9
	AttrWarpSize                     DeviceAttribute = 10
	AttrMaxRegistersPerBlock         DeviceAttribute = 12
	AttrClockRate                    DeviceAttribute = 13 // kHz; deprecated in CUDA 13
	AttrMultiprocessorCount          DeviceAttribute = 16
	AttrIntegrated                   DeviceAttribute = 18
	AttrComputeMode                  DeviceAttribute = 20
	AttrConcurrentKernels            DeviceAttribute = 31
	AttrECCEnabled                   DeviceAttribute = 32
	AttrPCIBusID                     DeviceAttribute = 33
	AttrPCIDeviceID                  DeviceAttribute = 34
	AttrMemoryClockRate              DeviceAttribute = 36 // kHz; deprecated in CUDA 13
	AttrGlobalMemoryBusWidth         DeviceAttribute = 37 // bits
	AttrL2CacheSize                  DeviceAttribute = 38
	AttrMaxThreadsPerMultiprocessor  DeviceAttribute = 39
	AttrAsyncEngineCount             DeviceAttribute = 40
	AttrUnifiedAddressing            DeviceAttribute = 41
	AttrPCIDomainID                  DeviceAttribute = 50
	AttrComputeCapabilityMajor       DeviceAttribute = 75
	AttrComputeCapabilityMinor       DeviceAttribute = 76
	AttrMaxSharedMemoryPerSM         DeviceAttribute = 81
	AttrMaxRegistersPerSM            DeviceAttribute = 82
	AttrManagedMemory                DeviceAttribute = 83
	AttrMaxSharedMemoryPerBlockOptin DeviceAttribute = 97
	AttrMaxBlocksPerMultiprocessor   DeviceAttribute = 106
)

// Props describes a device. A value the driver did not report (CUDA 13
// deprecates the clock attributes, for one) is 0 and its attribute is
// listed in Unavailable.
type Props struct {
	Name                        string
	Major, Minor                int   // compute capability
	Multiprocessors             int   // SMs
	TotalMemory                 int64 // bytes
	MaxThreadsPerBlock          int
	MaxBlockDim                 [3]int
	MaxGridDim                  [3]int
	WarpSize                    int
	SharedMemPerBlock           int // bytes a block gets without opting in
	SharedMemPerBlockOptin      int // bytes a block may get after Function.SetMaxDynamicSharedMemory
	SharedMemPerMultiprocessor  int
	RegistersPerBlock           int
	RegistersPerMultiprocessor  int
	MaxThreadsPerMultiprocessor int
	MaxBlocksPerMultiprocessor  int
	L2CacheSize                 int // bytes
	ConstantMemory              int // bytes
	ClockKHz                    int // SM clock
	MemoryClockKHz              int
	MemoryBusWidth              int // bits
	AsyncEngines                int
	ComputeMode                 int
	ECC                         bool
	Integrated                  bool
	UnifiedAddressing           bool
	ManagedMemory               bool
	ConcurrentKernels           bool
	PCIDomain, PCIBus, PCIDev   int
	Unavailable                 []string // attributes the driver did not report
}

// Arch is the compilation target of the device, such as "sm_90".
func (p Props) Arch() string { return fmt.Sprintf("sm_%d%d", p.Major, p.Minor) }

// ComputeCapability is the compute capability as text, such as "9.0".
func (p Props) ComputeCapability() string { return fmt.Sprintf("%d.%d", p.Major, p.Minor) }

// Bandwidth is the theoretical memory bandwidth in bytes per second:
// double data rate times the memory clock times the bus width in bytes
// (2 * clock * width/8). It is 0 when the driver does not report the clock
// or the width.
func (p Props) Bandwidth() float64 {
	return 2 * float64(p.MemoryClockKHz) * 1e3 * float64(p.MemoryBusWidth) / 8
}

// PCIBusID is the device's PCI address, such as "0000:65:00.0".
func (p Props) PCIBusID() string {
	return fmt.Sprintf("%04x:%02x:%02x.0", p.PCIDomain, p.PCIBus, p.PCIDev)
}

func (d *Device) readProps() error {
	p := &d.props
	var name [256]byte
	if r := Result(dynlib.Call(d.api.cuDeviceGetName, uintptr(unsafe.Pointer(&name[0])), uintptr(len(name)), uintptr(d.handle))); r != 0 {
		return d.err("cuDeviceGetName", r)
	}
	for i, c := range name {
		if c == 0 {
			p.Name = string(name[:i])
			break
		}
	}
	var total uint64
	if r := Result(dynlib.Call(d.api.cuDeviceTotalMem, uintptr(unsafe.Pointer(&total)), uintptr(d.handle))); r != 0 {
		return d.err("cuDeviceTotalMem_v2", r)
	}
	p.TotalMemory = int64(total)
	ints := []struct {
		attr DeviceAttribute
		name string
		dst  *int
		must bool // the launch checks need it
	}{
		{AttrComputeCapabilityMajor, "compute capability major", &p.Major, true},
		{AttrComputeCapabilityMinor, "compute capability minor", &p.Minor, true},
		{AttrMultiprocessorCount, "multiprocessor count", &p.Multiprocessors, true},
		{AttrMaxThreadsPerBlock, "max threads per block", &p.MaxThreadsPerBlock, true},
		{AttrMaxBlockDimX, "max block dim x", &p.MaxBlockDim[0], true},
		{AttrMaxBlockDimY, "max block dim y", &p.MaxBlockDim[1], true},
		{AttrMaxBlockDimZ, "max block dim z", &p.MaxBlockDim[2], true},
		{AttrMaxGridDimX, "max grid dim x", &p.MaxGridDim[0], true},
		{AttrMaxGridDimY, "max grid dim y", &p.MaxGridDim[1], true},
		{AttrMaxGridDimZ, "max grid dim z", &p.MaxGridDim[2], true},
		{AttrMaxSharedMemoryPerBlock, "shared memory per block", &p.SharedMemPerBlock, true},
		{AttrMaxSharedMemoryPerBlockOptin, "shared memory per block (opt-in)", &p.SharedMemPerBlockOptin, false},
		{AttrMaxSharedMemoryPerSM, "shared memory per multiprocessor", &p.SharedMemPerMultiprocessor, false},
		{AttrWarpSize, "warp size", &p.WarpSize, false},
		{AttrMaxRegistersPerBlock, "registers per block", &p.RegistersPerBlock, false},
		{AttrMaxRegistersPerSM, "registers per multiprocessor", &p.RegistersPerMultiprocessor, false},
		{AttrMaxThreadsPerMultiprocessor, "max threads per multiprocessor", &p.MaxThreadsPerMultiprocessor, false},
		{AttrMaxBlocksPerMultiprocessor, "max blocks per multiprocessor", &p.MaxBlocksPerMultiprocessor, false},
		{AttrL2CacheSize, "L2 cache size", &p.L2CacheSize, false},
		{AttrTotalConstantMemory, "constant memory", &p.ConstantMemory, false},
		{AttrClockRate, "clock rate", &p.ClockKHz, false},
		{AttrMemoryClockRate, "memory clock rate", &p.MemoryClockKHz, false},
		{AttrGlobalMemoryBusWidth, "memory bus width", &p.MemoryBusWidth, false},
		{AttrAsyncEngineCount, "async engine count", &p.AsyncEngines, false},
		{AttrComputeMode, "compute mode", &p.ComputeMode, false},
		{AttrPCIDomainID, "PCI domain", &p.PCIDomain, false},
		{AttrPCIBusID, "PCI bus", &p.PCIBus, false},
		{AttrPCIDeviceID, "PCI device", &p.PCIDev, false},
	}
	for _, a := range ints {
		v, err := d.Attribute(a.attr)
		if err != nil {
			if a.must {
				return err
			}
			p.Unavailable = append(p.Unavailable, a.name)
			continue
		}
		*a.dst = v
	}
	if p.SharedMemPerBlockOptin < p.SharedMemPerBlock {
		p.SharedMemPerBlockOptin = p.SharedMemPerBlock
	}
	bools := []struct {
		attr DeviceAttribute
		name string
		dst  *bool
	}{
		{AttrECCEnabled, "ECC", &p.ECC},
		{AttrIntegrated, "integrated", &p.Integrated},
		{AttrUnifiedAddressing, "unified addressing", &p.UnifiedAddressing},
		{AttrManagedMemory, "managed memory", &p.ManagedMemory},
		{AttrConcurrentKernels, "concurrent kernels", &p.ConcurrentKernels},
	}
	for _, a := range bools {
		v, err := d.Attribute(a.attr)
		if err != nil {
			p.Unavailable = append(p.Unavailable, a.name)
			continue
		}
		*a.dst = v != 0
	}
	return nil
}
