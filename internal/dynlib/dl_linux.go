//go:build linux

package dynlib

import (
	"errors"
	"runtime"

	"github.com/ebitengine/purego"
)

// open dlopens path (RTLD_NOW; RTLD_GLOBAL with global, else RTLD_LOCAL).
func open(path string, global bool) (h uintptr, err error) {
	mode := purego.RTLD_NOW | purego.RTLD_LOCAL
	if global {
		mode = purego.RTLD_NOW | purego.RTLD_GLOBAL
	}
	// dlerror is per thread: the message must be read on the thread that
	// failed, so the goroutine stays put between dlopen and dlerror.
	withLockedThread(func() { h, err = purego.Dlopen(path, mode) })
	if err == nil && h == 0 {
		err = errors.New("dlopen returned no handle")
	}
	return h, err
}

// dlsym returns the address of name in the library h, or 0.
func dlsym(h uintptr, name string) uintptr {
	var p uintptr
	var err error
	withLockedThread(func() { p, err = purego.Dlsym(h, name) })
	if err != nil {
		return 0
	}
	return p
}

func dlclose(h uintptr) { _ = purego.Dlclose(h) }

func withLockedThread(f func()) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	f()
}
