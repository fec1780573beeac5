package attn

import (
	"os"

	"github.com/gocu-dev/gocu"
)

// WGMMAEnv is the environment variable that selects the kernels on
// Hopper's warpgroup MMA for head dimension 128 on GPUs of compute
// capability 9.0: 1 selects fwd128WG for the forward pass, 2 fwd128WS
// (warp-specialised, with ping-pong scheduling); both select bwdKVWG and
// bwdQWG for the backward pass. The default stays on mma.sync until the
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

// useWGMMA reports whether s on d takes the warpgroup-MMA kernels.
func useWGMMA(d *gocu.Device, s shape) bool {
	e := os.Getenv(WGMMAEnv)
	return s.Dim == 128 && (e == "1" || e == "2") && hasWGMMA(d)
}

// forwardWGMMA launches the warpgroup-MMA forward kernel WGMMAEnv
// selects.
func forwardWGMMA(d *gocu.Device, q, k, v, o bf16s, lse f32s, ls [4]layout, s shape, scale float32, causal, checked bool) error {
	if os.Getenv(WGMMAEnv) == "2" {
		return forwardWS(d, q, k, v, o, lse, ls, s, scale, causal, checked)
	}
	return forwardWG(d, q, k, v, o, lse, ls, s, scale, causal, checked)
}

// forwardWS launches fwd128WS for s (checked already, head dimension
// 128) on q, k, v and o laid out by ls.
func forwardWS(d *gocu.Device, q, k, v, o bf16s, lse f32s, ls [4]layout, s shape, scale float32, causal, checked bool) error {
	c := wgTiles(s, checked)
	c.Block.X = wsThreads
	return launchFwd128WS(d, c, q, k, v, o, lse, ls[0], ls[1], ls[2], ls[3], int32(s.Heads), int32(s.Seq), scale, causal)
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
