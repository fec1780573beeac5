//go:build !linux

package cuda

// libraryPaths is where libcuda.so.1 would be looked for; package dynlib
// refuses every attempt off Linux, saying so.
var libraryPaths = []string{"libcuda.so.1"}
