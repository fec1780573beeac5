package gocu

// Slice is a slice parameter of the typed launchers that gocu gen writes
// (Launch<Kernel>), for a kernel parameter of type []T: a *Buffer[T], or
// an Arg whose KernelArg gives a *Buffer[T] on the launch's device, such
// as an *array.Array of dtype T. A *Buffer[T] is checked when the program
// is compiled; for an Arg the element type is checked at the launch, which
// names the argument when it differs:
//
//	x := array.Rand(dev, n) // float32
//	err := kernels.LaunchScale(dev, gocu.Auto(n), x, y)
//
// An array must be contiguous and on the launch's device, and stay
// reachable until the kernel has run (see array.Array.KernelArg).
type Slice[T any] interface {
	KernelArg(d *Device) (any, error)
}

// KernelArg implements Arg and Slice[T]: a buffer is its own argument.
func (b *Buffer[T]) KernelArg(*Device) (any, error) { return b, nil }
