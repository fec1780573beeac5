//go:build !linux

package gen

import "errors"

// captureStdoutUnflushed is implemented on Linux only.
func captureStdoutUnflushed(f func() error) (string, string, error) {
	return "", "", errors.New("capturing standard output is implemented on Linux only")
}
