package kernel_test

import (
	"fmt"

	"github.com/gocu-dev/gocu/kernel"
	"github.com/gocu-dev/gocu/sim"
)

// rowSums multiplies a 64 x 16 matrix A, whose row i is all i, by a 16 x
// 64 matrix of ones with one warpgroup MMA, A from registers: every
// element of row i of the product is 16i. out receives column 0.
func rowSums(t *kernel.Thread, out []float32) {
	sm := kernel.DynamicShared[kernel.BFloat16](t)
	for i := t.ThreadIdx.X; i < 16*64; i += 128 {
		sm[i] = kernel.ToBFloat16(1) // all ones: any layout will do
	}
	kernel.FenceProxyAsync(t) // the tensor cores read through the async proxy
	t.SyncThreads()

	// Warp w holds rows 16w+g and 16w+g+8 of A, g = lane/4, as MMABF16's
	// A fragment: registers 0 and 2 of row 16w+g, 1 and 3 of the other.
	w, lane := t.ThreadIdx.X/32, t.ThreadIdx.X%32
	r0, r1 := float32(16*w+lane/4), float32(16*w+lane/4+8)
	a := kernel.FragA{kernel.PackBFloat16x2(r0, r0), kernel.PackBFloat16x2(r1, r1), kernel.PackBFloat16x2(r0, r0), kernel.PackBFloat16x2(r1, r1)}
	b := kernel.WGDescriptor(t, sm, kernel.WGSwizzle128, 8192, 1024)
	var acc kernel.WGAcc64
	kernel.WGFence(t)
	kernel.WGMMABF16RS(t, &acc, a, b, true, false)
	kernel.WGCommit(t)
	kernel.WGWait(t, 0, &acc)
	if lane%4 == 0 { // the lanes that hold column 0
		out[16*w+lane/4], out[16*w+lane/4+8] = acc[0], acc[2]
	}
}

// A warpgroup MMA takes A from registers in the layout of an accumulator,
// as FlashAttention feeds the softmax P to the product with V.
func ExampleWGMMABF16RS() {
	out := make([]float32, 64)
	cfg := sim.Config{Grid: kernel.Dim3{X: 1}, Block: kernel.Dim3{X: 128}, DynamicSharedBytes: 2048}
	if err := sim.Run(cfg, rowSums, out); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(out[0], out[1], out[17], out[63])
	// Output: 0 16 272 1008
}
