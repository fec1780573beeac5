package attn

import (
	"os"

	"github.com/gocu-dev/gocu"
)

// WGMMAEnv is the environment variable that selects fwd128WG, the
// forward kernel on Hopper's warpgroup MMA, and bwdKVWG and bwdQWG for
// the backward pass, for head dimension 128 on GPUs of compute
// capability 9.0: set it to 1. The default stays on mma.sync until the
// warpgroup kernels are measured faster.
const WGMMAEnv = "GOCU_ATTN_WGMMA"

// hasWGMMA reports whether d runs warpgroup MMAs: a GPU of compute
// capability 9.0 (sm_90a), or the simulator.
func hasWGMMA(d *gocu.Device) bool {
	g := d.CUDA()
	if g == nil {
		return true
	}
	major, minor := g.ComputeCapability()
	return major == 9 && minor == 0
}

// useWGMMA reports whether the forward pass of s on d takes fwd128WG.
func useWGMMA(d *gocu.Device, s shape) bool {
	return s.Dim == 128 && os.Getenv(WGMMAEnv) == "1" && hasWGMMA(d)
}

// wgTiles is the launch of fwd128WG: a block per 128 rows of each head.
func wgTiles(s shape, checked bool) gocu.Config {
	return gocu.Config{Grid: gocu.Dim3{X: int32((s.Seq + wgRows - 1) / wgRows), Y: int32(s.bh())}, Block: gocu.Dim3{X: wgThreads},
		Shared: fwdWGMem, Checked: checked}
}

// forwardWG launches fwd128WG for s (checked already, head dimension
// 128) on q, k, v and o laid out by ls.
func forwardWG(d *gocu.Device, q, k, v, o bf16s, lse f32s, ls [4]layout, s shape, scale float32, causal, checked bool) error {
	return launchFwd128WG(d, wgTiles(s, checked), q, k, v, o, lse, ls[0], ls[1], ls[2], ls[3], int32(s.Heads), int32(s.Seq), scale, causal)
}
