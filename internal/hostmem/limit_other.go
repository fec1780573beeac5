//go:build !linux

package hostmem

// readMemoryLimit is unknown outside Linux: allocations are bounded only
// by int overflow there, and a request the machine cannot give ends in Go's
// fatal out-of-memory error.
func readMemoryLimit() int64 { return 0 }
