//go:build unix

package dist_test

import (
	"os"
	"syscall"
)

const canStop = true

// stopSelf stops the process as SIGSTOP from outside would.
func stopSelf() { _ = syscall.Kill(os.Getpid(), syscall.SIGSTOP) }

// killSelf ends the process as kill -9 from outside would.
func killSelf() { _ = syscall.Kill(os.Getpid(), syscall.SIGKILL) }
