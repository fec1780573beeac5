//go:build !linux

package gen

import "errors"

// captureStdout is implemented on Linux only.
func captureStdout(f func() error) (string, error) {
	return "", errors.New("capturing standard output is implemented on Linux only")
}

// captureStdoutUnflushed is implemented on Linux only.
func captureStdoutUnflushed(f func() error) (string, string, error) {
	return "", "", errors.New("capturing standard output is implemented on Linux only")
}
