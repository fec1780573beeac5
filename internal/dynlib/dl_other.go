//go:build !linux

package dynlib

import (
	"errors"
	"runtime"
)

// NVIDIA's libraries are loaded on Linux only: elsewhere every attempt
// fails with this reason.
var errUnsupportedOS = errors.New("gocu loads NVIDIA's libraries on Linux only; this is " + runtime.GOOS)

func open(string, bool) (uintptr, error) { return 0, errUnsupportedOS }

func dlsym(uintptr, string) uintptr { return 0 }

func dlclose(uintptr) {}
