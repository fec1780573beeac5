package array

import "github.com/gocu-dev/gocu/cuda"

// CUDAStream returns the stream a GPU device queues all its operations on,
// in the order they are called, or nil for the CPU. Work recorded on it
// is ordered with the arrays' operations: gocu bench times array
// operations with CUDA events recorded on this stream, as the package's
// own GPU benchmarks do. The stream belongs to the device: do not close
// it.
func (d *Device) CUDAStream() *cuda.Stream {
	if d == nil || d.gpu == nil {
		return nil
	}
	return d.gpu.Stream()
}
