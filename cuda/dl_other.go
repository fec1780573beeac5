//go:build !linux

package cuda

import (
	"errors"
	"runtime"
)

var libraryPaths = []string{"libcuda.so.1"}

var errUnsupportedOS = errors.New("gocu loads the CUDA driver on Linux only; this is " + runtime.GOOS)

func dlopen(string) (uintptr, error) { return 0, errUnsupportedOS }

func dlsym(uintptr, string) uintptr { return 0 }

func dlclose(uintptr) {}
