//go:build linux

package cuda

import "syscall"

// mapMemory returns n bytes outside the Go heap: the garbage collector
// neither moves nor frees them, so the driver may hold their addresses.
func mapMemory(n int) ([]byte, error) {
	return syscall.Mmap(-1, 0, n, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
}

func unmapMemory(b []byte) { _ = syscall.Munmap(b) }
