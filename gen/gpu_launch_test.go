package gen

import (
	"fmt"
	"reflect"
	"slices"
	"unsafe"

	"github.com/gocu-dev/gocu"
	"github.com/gocu-dev/gocu/cuda"
	"github.com/gocu-dev/gocu/internal/units"
	"github.com/gocu-dev/gocu/kernel"
	"github.com/gocu-dev/gocu/meta"
	"github.com/gocu-dev/gocu/nvrtc"
)

// gpuSkip says why the GPU tests skip, when they do.
var gpuSkip = "no GPU runner"

func init() {
	d, err := gocu.Open("cuda")
	if err != nil {
		gpuSkip = "no GPU: " + units.OneLine(err)
		return
	}
	if !nvrtc.Available() {
		gpuSkip = "no NVRTC library"
		return
	}
	gpuLaunch = func(src, entry string, opts []string, grid, block kernel.Dim3, dynShared int, args []any) ([]any, []uint64, error) {
		return runOnGPU(d, src, entry, opts, grid, block, dynShared, args)
	}
}

// runOnGPU is gpuLaunch: see its documentation in gpu_test.go.
func runOnGPU(d *gocu.Device, src, entry string, opts []string, grid, block kernel.Dim3, dynShared int, args []any) ([]any, []uint64, error) {
	m, err := d.Compile(src, gocu.Std("c++17"), gocu.Name("gen_test.cu"), gocu.Flags(opts...))
	if err != nil {
		return nil, nil, err
	}
	fn, err := m.CUDA().Function(entry)
	if err != nil {
		return nil, nil, err
	}
	gpu := d.CUDA()
	var kargs []any
	mems := make([]*cuda.Memory, len(args))
	defer func() {
		for _, mem := range mems {
			if mem != nil {
				mem.Free()
			}
		}
	}()
	for i, a := range args {
		v := reflect.ValueOf(a)
		if v.Kind() == reflect.Slice {
			b := sliceBytes(v)
			mem, err := gpu.Alloc(len(b))
			if err != nil {
				return nil, nil, err
			}
			mems[i] = mem
			if err := cuda.CopyHtoD(mem, b); err != nil {
				return nil, nil, err
			}
			kargs = append(kargs, mem, int64(v.Len()))
			continue
		}
		// A scalar, struct or array: its Go bytes, aligned as Go aligns
		// them (the generated C types have Go's layout).
		p := reflect.New(v.Type())
		p.Elem().Set(v)
		b := unsafe.Slice((*byte)(p.UnsafePointer()), v.Type().Size())
		kargs = append(kargs, cuda.Raw{Bytes: append([]byte(nil), b...), Align: v.Type().Align()})
	}
	debug := slices.Contains(opts, "-DGOCU_DEBUG")
	var take *cuda.Function
	var errMem *cuda.Memory
	one := cuda.Config{Grid: cuda.Dim3{X: 1}, Block: cuda.Dim3{X: meta.ErrorWords}}
	if debug {
		if take, err = m.CUDA().Function("gocu_err_take"); err != nil {
			return nil, nil, err
		}
		if errMem, err = gpu.Alloc(8 * meta.ErrorWords); err != nil {
			return nil, nil, err
		}
		defer errMem.Free()
		if err := take.Launch(one, cuda.DevicePtr(0)); err != nil {
			return nil, nil, err
		}
	}
	if dynShared > 48<<10 {
		if err := fn.SetMaxDynamicSharedMemory(dynShared); err != nil {
			return nil, nil, err
		}
	}
	cfg := cuda.Config{
		Grid:      cuda.Dim3{X: uint32(grid.X), Y: uint32(grid.Y), Z: uint32(grid.Z)},
		Block:     cuda.Dim3{X: uint32(block.X), Y: uint32(block.Y), Z: uint32(block.Z)},
		SharedMem: dynShared,
	}
	if err := fn.Launch(cfg, kargs...); err != nil {
		return nil, nil, err
	}
	var errBuf []uint64
	if debug {
		if err := take.Launch(one, errMem); err != nil {
			return nil, nil, err
		}
		errBuf = make([]uint64, meta.ErrorWords)
		if err := cuda.CopyDtoH(errBuf, errMem); err != nil {
			return nil, nil, err
		}
	}
	if err := d.Synchronize(); err != nil {
		return nil, nil, fmt.Errorf("kernel %s: %w", entry, err)
	}
	out := make([]any, len(args))
	for i, a := range args {
		v := reflect.ValueOf(a)
		if v.Kind() != reflect.Slice {
			continue
		}
		c := reflect.MakeSlice(v.Type(), v.Len(), v.Len())
		if err := cuda.CopyDtoH(sliceBytes(c), mems[i]); err != nil {
			return nil, nil, err
		}
		out[i] = c.Interface()
	}
	return out, errBuf, nil
}

// sliceBytes returns the memory of a slice of plain values as bytes.
func sliceBytes(v reflect.Value) []byte {
	n := v.Len() * int(v.Type().Elem().Size())
	if n == 0 {
		return []byte{}
	}
	return unsafe.Slice((*byte)(v.UnsafePointer()), n)
}
