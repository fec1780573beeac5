package lecture

import (
	"fmt"

	"github.com/gocu-dev/gocu"
	"github.com/gocu-dev/gocu/kernel"
)

// The host side of the tensor-core kernels: their launch configurations,
// and MatMulBF16 and Attention, which pick the kernel for the device and
// check the shapes, the way a program would call them.

// GemmBF16Config is the launch of GemmBF16 for an m x n product.
func GemmBF16Config(m, n int) gocu.Config {
	return gocu.Config{Grid: gocu.Dim3{X: int32((n + BF16BN - 1) / BF16BN), Y: int32(m / BF16BM)},
		Block: gocu.Dim3{X: BF16Threads}, Shared: BF16Shared}
}

// GemmBF16MMAConfig is the launch of GemmBF16MMA for an m x n product.
func GemmBF16MMAConfig(m, n int) gocu.Config {
	return gocu.Config{Grid: gocu.Dim3{X: int32((n + MMABN - 1) / MMABN), Y: int32(m / MMABM)},
		Block: gocu.Dim3{X: MMAThreads}, Shared: MMAShared}
}

// FlashAttentionConfig is the launch of FlashAttention128 (dim 128) or
// FlashAttention64 (dim 64) for bh = batch*heads sequences of seq rows.
func FlashAttentionConfig(bh, seq, dim int) gocu.Config {
	shared := Flash128Shared
	if dim == 64 {
		shared = Flash64Shared
	}
	return gocu.Config{Grid: gocu.Dim3{X: int32(seq / FlashBR), Y: int32(bh)}, Block: gocu.Dim3{X: FlashThreads}, Shared: shared}
}

// HasWGMMA reports whether d runs the warpgroup MMA of GemmBF16: a GPU of
// compute capability 9.0 (sm_90a: the H100, H200, GH200), or the
// simulator, which runs it on any machine. Other GPUs do not have it,
// Blackwell's included (sm_100 has its own tensor-core instructions).
func HasWGMMA(d *gocu.Device) bool {
	g := d.CUDA()
	if g == nil {
		return true
	}
	major, minor := g.ComputeCapability()
	return major == 9 && minor == 0
}

// MatMulBF16 computes c = a b for row-major bf16 matrices a (m x k), b
// (k x n) and c (m x n) on stream (nil: the default stream) with the
// fastest kernel of this package for d: GemmBF16 where the device has the
// warpgroup MMA (HasWGMMA), GemmBF16MMA elsewhere. m must be a multiple of
// 128, n of 8 and k of 64 (of 32 where GemmBF16MMA runs).
func MatMulBF16(d *gocu.Device, stream *gocu.Stream, a, b, c *gocu.Buffer[kernel.BFloat16], m, n, k int) error {
	wg := HasWGMMA(d)
	bk := MMABK
	if wg {
		bk = BF16BK
	}
	if m <= 0 || n <= 0 || k <= 0 || m%BF16BM != 0 || n%8 != 0 || k%bk != 0 {
		return fmt.Errorf("lecture: MatMulBF16 of %dx%d by %dx%d: m must be a positive multiple of %d, n of 8 and k of %d", m, k, k, n, BF16BM, bk)
	}
	if a.Len() < m*k || b.Len() < k*n || c.Len() < m*n {
		return fmt.Errorf("lecture: MatMulBF16 of %dx%d by %dx%d: buffers of %d, %d and %d elements are too short", m, k, k, n, a.Len(), b.Len(), c.Len())
	}
	if wg {
		cfg := GemmBF16Config(m, n)
		cfg.Stream = stream
		return LaunchGemmBF16(d, cfg, a, b, c, int32(m), int32(n), int32(k))
	}
	cfg := GemmBF16MMAConfig(m, n)
	cfg.Stream = stream
	return LaunchGemmBF16MMA(d, cfg, a, b, c, int32(m), int32(n), int32(k))
}

// Attention computes o = softmax(q kᵀ * scale) v for bh = batch*heads
// sequences of seq rows of dimension dim (64 or 128; seq a multiple of
// 64), causal or not, with FlashAttention128 or FlashAttention64 on
// stream (nil: the default stream).
func Attention(d *gocu.Device, stream *gocu.Stream, q, k, v, o *gocu.Buffer[kernel.BFloat16], bh, seq, dim int, scale float32, causal bool) error {
	if dim != 64 && dim != 128 {
		return fmt.Errorf("lecture: Attention of head dimension %d: the kernels take 64 or 128", dim)
	}
	if bh <= 0 || seq <= 0 || seq%FlashBR != 0 || seq%FlashBC != 0 {
		return fmt.Errorf("lecture: Attention of %d sequences of %d rows: seq must be a positive multiple of %d", bh, seq, max(FlashBR, FlashBC))
	}
	n := bh * seq * dim
	if q.Len() < n || k.Len() < n || v.Len() < n || o.Len() < n {
		return fmt.Errorf("lecture: Attention of %d sequences of %d rows of %d: q, k, v and o need %d elements each", bh, seq, dim, n)
	}
	cfg := FlashAttentionConfig(bh, seq, dim)
	cfg.Stream = stream
	if dim == 64 {
		return LaunchFlashAttention64(d, cfg, q, k, v, o, int32(seq), scale, causal)
	}
	return LaunchFlashAttention128(d, cfg, q, k, v, o, int32(seq), scale, causal)
}
