// Package launch is the runtime of the launchers that gocu gen writes: the
// generated file zz_gocu_<pkg>.go of a package of Go kernels makes a
// Program of the package's CUDA source, and each Launch<Kernel> function
// runs its kernel through a Call, on a GPU (compiled by NVRTC for the exact
// GPU on first use, cached, launched without allocating) or on the CPU
// simulator (package sim).
//
// Programs do not call this package; they call the generated launchers,
// which take a *gocu.Device, a gocu.Config and the kernel's arguments
// (slices as *gocu.Buffer values). Its API changes with gocu gen: code that
// gocu gen wrote is regenerated with it.
//
// A launch on a GPU goes on the Config's stream, or on the device's default
// stream (gocu.Device.Stream), which the arrays of package array share, so
// a kernel given an array (array.AsBuffer) runs after the operations that
// computed it and before those that read its result, without waiting.
// With Config.Debug (or GOCU_DEBUG=1) the launch uses the debug build of
// the source, where Go's bounds, division and shift checks record a failure
// in a device buffer that the launcher reads after the kernel: the error is
// the simulator's, naming the block, thread, index and Go source line.
package launch
