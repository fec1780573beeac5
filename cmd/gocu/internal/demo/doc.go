// Package demo is what gocu demo and gocu gray run: image reading and
// writing, the grayscale pipeline, the matrix products checked against a
// CPU reference, and the planted bugs caught by the simulator and by a
// GPU's debug mode. The kernels are the lecture's, in package
// internal/lecture, launched through the typed launchers gocu gen wrote
// beside them (lecture.LaunchGray and the others), on a GPU or on the CPU
// simulator; the planted bugs are kernels of their own, in package bugs
// below this one, so that only the demo carries them.
package demo
