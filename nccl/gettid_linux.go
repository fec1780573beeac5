package nccl

import "syscall"

// gettid returns the calling OS thread's id; NCCL's group state is per
// thread.
func gettid() int { return syscall.Gettid() }
