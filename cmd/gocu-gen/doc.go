// Command gocu-gen translates Go kernels (functions marked //gocu:kernel)
// to CUDA C++ and writes their typed launchers, as "gocu gen" does. It
// imports only the translator, so that a module which runs it from go
// generate adds nothing but what the translator needs:
//
//	go get -tool github.com/gocu-dev/gocu/cmd/gocu-gen
//
// and, in the package with the kernels,
//
//	//go:generate go tool gocu-gen
//
// Usage:
//
//	gocu-gen [-tags list] [-cu] [-check] [packages]
//
// Flags are written as for the go command: -tags and --tags are the same.
// With -check it writes nothing and fails when a generated file is out of
// date, for CI.
package main
