// Package hostmem says how much memory the machine can give the process,
// so that the CPU allocators of gocu and array refuse a request that Go's
// runtime would meet with a fatal out-of-memory error, which no recover
// catches.
package hostmem
