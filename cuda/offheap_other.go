//go:build !linux

package cuda

// mapMemory falls back to the Go heap where mmap is not available; Go's
// collector does not move heap objects, and the frame keeps them alive.
// (No driver is loaded on these systems; this only keeps the package
// building and its CPU tests running.)
func mapMemory(n int) ([]byte, error) { return make([]byte, n), nil }

func unmapMemory([]byte) {}
