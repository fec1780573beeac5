package nn

// OptimSource is the fused optimiser's CUDA C, for the clang-16 test.
var OptimSource = optimSource

// FusedSource is the fused kernels' CUDA C, for the clang-16 test.
var FusedSource = fusedSource
