//go:build linux

package gen

import (
	"os"
	"sync"
	"syscall"

	"github.com/ebitengine/purego"
)

// libcFflush is fflush of the C library, whose stdout buffer holds what
// the CUDA driver prints for a kernel's printf until it is flushed (a Go
// program exits without flushing it).
var libcFflush = sync.OnceValue(func() uintptr {
	for _, name := range []string{"libc.so.6", "libc.so"} {
		if h, err := purego.Dlopen(name, purego.RTLD_NOW|purego.RTLD_GLOBAL); err == nil {
			if p, err := purego.Dlsym(h, "fflush"); err == nil {
				return p
			}
		}
	}
	return 0
})

// captureStdoutUnflushed runs f with file descriptor 1 redirected to a
// file. It returns what was written, the C library's buffered stdout
// included, and what the file held before those buffers were flushed:
// whether the CUDA driver flushes its printf output itself.
func captureStdoutUnflushed(f func() error) (string, string, error) {
	flush := func() {
		if p := libcFflush(); p != 0 {
			purego.SyscallN(p, 0) // fflush(NULL): every stream
		}
	}
	tmp, err := os.CreateTemp("", "gocu-stdout-*")
	if err != nil {
		return "", "", err
	}
	defer os.Remove(tmp.Name())
	defer tmp.Close()
	flush()
	saved, err := syscall.Dup(1)
	if err != nil {
		return "", "", err
	}
	if err := syscall.Dup3(int(tmp.Fd()), 1, 0); err != nil {
		syscall.Close(saved)
		return "", "", err
	}
	ferr := f()
	before, _ := os.ReadFile(tmp.Name())
	flush()
	syscall.Dup3(saved, 1, 0)
	syscall.Close(saved)
	b, err := os.ReadFile(tmp.Name())
	if err != nil {
		return "", "", err
	}
	return string(b), string(before), ferr
}
