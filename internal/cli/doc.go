// Package cli holds what the gocu command's long-running subcommands share:
// telling a terminal from a file or a pipe, for progress bars, and checking
// a plot's file name before hours of training write to it.
package cli
