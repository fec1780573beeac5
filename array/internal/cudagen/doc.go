// Package cudagen writes the CUDA C kernels of the array package's GPU
// backend: fused elementwise programs, reductions, the softmax family,
// Philox random fills and integer matrix products.
//
// Every kernel is specialised on what changes its code (the program's
// structure and dtypes, the rank, which operands are contiguous, constant
// or strided, the index width, the vector width) and takes everything else
// (sizes, strides, scalar values) as parameters, so the number of distinct
// kernels stays bounded by the number of distinct expression structures a
// program uses. A Kernel carries its source (a self-contained translation
// unit for NVRTC: no headers), its entry point and its parameter list; the
// GPU backend fills the parameters by Role.
//
// Kernels are written for bandwidth: a contiguous elementwise program has
// each thread load Unroll vectors of up to 16 bytes per operand before it
// computes, with no index arithmetic, one tile per block; strided programs
// unravel indices in a grid-stride loop sized to one wave of resident
// blocks (Options.BlocksPerSM), dividing by each dimension with a
// precomputed multiply-high (DivMagic) rather than a hardware-less integer
// division, and move vectors when every operand's innermost dimension is
// contiguous and aligned. A full reduction is one launch of at most
// one wave in which every block gets the same number of tiles (Unroll
// vectors per thread, loaded before use, combined as a tree, addresses by
// pointer increments); its last block, found with an atomic ticket,
// combines the per-block partials.
//
// The sources compile with clang for sm_90 with a small prelude standing in
// for NVRTC's built-ins (see the package tests), and every planned launch
// is executed on the host (threads as user-level contexts with real
// barriers and warp shuffles) against the CPU backend, under
// AddressSanitizer with every buffer exactly the size the launch is given
// (an empty one bound as address 0, as on the device), so an access out of
// bounds fails the tests instead of faulting on the GPU.
package cudagen
