package lecture

import "github.com/gocu-dev/gocu/kernel"

// WGProbeShared is the dynamic shared memory of WGProbe: a's image, then
// b's, 8 KiB each.
const WGProbeShared = 16384

// WGProbe checks the warpgroup MMA's shared-memory layouts against the
// GPU: one warpgroup (a block of 128 threads) copies img, two 8 KiB images
// of operand tiles laid out by the test (a 64 x 32 a, then a 32 x 128 b),
// into shared memory as they are, and computes d = a b (64 x 128, row-major)
// in two k-steps of kernel.WGMMABF16 whose descriptors the arguments give:
// the swizzle, byte offsets and the bytes between the two k-slices of
// each operand. The simulator's answer is the layouts as package kernel
// documents them; the GPU's is the truth.
//
//gocu:kernel
func WGProbe(t *kernel.Thread, img []kernel.BFloat16, d []float32, swA, swB kernel.WGSwizzle, lboA, sboA, kstepA, lboB, sboB, kstepB int32, transB bool) {
	sm := kernel.DynamicShared[kernel.BFloat16](t)
	tid := t.ThreadIdx.X
	for i := tid; i < WGProbeShared/16; i += 128 {
		kernel.Reinterpret[kernel.BFloat16x8](sm)[i] = kernel.Reinterpret[kernel.BFloat16x8](img)[i]
	}
	kernel.FenceProxyAsync(t)
	t.SyncThreads()
	da := kernel.WGDescriptor(t, sm, swA, lboA, sboA)
	db := kernel.WGDescriptor(t, sm[WGProbeShared/4:], swB, lboB, sboB)
	var acc kernel.WGAcc128
	kernel.WGFence(t)
	//gocu:unroll
	for ks := int32(0); ks < 2; ks++ {
		a, b := da+kernel.WGDesc(ks*kstepA/16), db+kernel.WGDesc(ks*kstepB/16)
		if transB {
			kernel.WGMMABF16(t, &acc, a, b, true, ks > 0)
		} else {
			kernel.WGMMABF16(t, &acc, a, b, false, ks > 0)
		}
	}
	kernel.WGCommit(t)
	kernel.WGWait(t, 0, &acc)
	w, l := tid/32, tid%32
	g, q := l/4, l%4
	//gocu:unroll
	for j := int32(0); j < 16; j++ {
		//gocu:unroll
		for r := int32(0); r < 4; r++ {
			d[(16*w+g+8*(r/2))*128+8*j+2*q+r%2] = acc[4*j+r]
		}
	}
}
