//go:build !unix

package nvrtc

import "errors"

func mkfifo(string) error { return errors.New("no FIFOs") }
