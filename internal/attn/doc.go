// Package attn is flash attention in Go, forward and backward, for
// training: bf16 q, k and v of layout (B, H, S, D) with D 64 or 128,
// causal or not, any S. Forward returns o and the per-row logsumexp that
// Backward needs; Backward returns dq, dk and dv.
//
// The operands may be strided views (CheckView says which): the kernels
// take batch, head and row strides for each, so the heads of a (B, S,
// H·D) projection are read in place, and the outputs come back as views
// of (B, S, H, D) arrays, which merge back to (B, S, H·D) without a copy.
//
// The kernels are FlashAttention-2's algorithm on the tensor cores
// (mma.sync), written in Go with package kernel and translated by gocu gen:
// they run on a GPU and, from the same source, on the simulator. The
// backward pass computes D = rowsum(dO∘O) first, then dk and dv in one
// kernel (a block per 64 keys, recomputing P from q, k and the logsumexp)
// and dq in another (a block per 64 queries), so that no float32 atomics
// are needed and the result is deterministic.
//
// On Hopper (sm_90a), WGMMAEnv selects kernels for head dimension 128 on
// the warpgroup MMA, after FlashAttention-3: fwd128WG, and bwdKVWG and
// bwdQWG, the same deterministic split of the backward pass; with
// WGMMAAtomicEnv too, bwdAllWG computes dk, dv and dq in one kernel,
// adding dq's parts with float32 atomics as FlashAttention-3 does.
//
// Reference is the same maths in float64 on the CPU, naive and exact,
// with its exact gradients, for tests.
//
// The files for head dimension 64 are made from those for 128 by
// gen64.sh; edit the 128 files and run go generate.
package attn

//go:generate bash gen64.sh
//go:generate go tool gocu-gen
