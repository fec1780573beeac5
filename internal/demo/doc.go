// Package demo is what gocu demo and gocu gray run, and what the tutorial's
// example programs share: image reading and writing, the grayscale
// pipeline, the matrix products checked against a CPU reference, and the
// planted bugs caught by the simulator and by a GPU's debug mode. The
// kernels are the lecture's, in package examples/kernels, launched through
// the typed launchers gocu gen wrote beside them (kernels.LaunchGray and
// the others), on a GPU or on the CPU simulator.
package demo
