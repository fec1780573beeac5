//go:build !linux

package nccl

// gettid is a stand-in where NCCL does not exist (it is Linux only): the
// package builds, and Load reports that no library was found.
func gettid() int { return 0 }
