package lecture

import "github.com/gocu-dev/gocu/kernel"

// GrayVec4 is Gray moving four pixels per thread with 32-bit loads and
// stores: each thread reads one uint32 of each plane and writes one uint32
// of gray, in a grid-stride loop. n must be a multiple of 4, so that every
// plane starts on a 4-byte boundary.
//
//gocu:kernel
//gocu:noalias
func GrayVec4(t *kernel.Thread, rgb, gray []uint8, n int32) {
	src := kernel.Reinterpret[uint32](rgb)
	dst := kernel.Reinterpret[uint32](gray)
	q := n / 4
	for i := t.Index(); i < q; i += t.Stride() {
		dst[i] = gray4(src[i], src[i+q], src[i+2*q])
	}
}

// GrayFast is the bandwidth-bound grayscale: 16 pixels per thread, moved
// with 128-bit loads and stores (kernel.Uint4), in a grid-stride loop.
// Every byte of the image is read once and every byte of gray written once,
// in the widest accesses the GPU has. n must be a multiple of 16, so that
// every plane starts on a 16-byte boundary.
//
//gocu:kernel
//gocu:noalias
//gocu:launch_bounds 256
func GrayFast(t *kernel.Thread, rgb, gray []uint8, n int32) {
	src := kernel.Reinterpret[kernel.Uint4](rgb)
	dst := kernel.Reinterpret[kernel.Uint4](gray)
	q := n / 16
	for i := t.Index(); i < q; i += t.Stride() {
		r, g, b := src[i], src[i+q], src[i+2*q]
		dst[i] = kernel.Uint4{
			X: gray4(r.X, g.X, b.X),
			Y: gray4(r.Y, g.Y, b.Y),
			Z: gray4(r.Z, g.Z, b.Z),
			W: gray4(r.W, g.W, b.W),
		}
	}
}

// gray4 converts four pixels whose red, green and blue bytes are packed in
// r, g and b (the first pixel in the low byte) and packs the four grays
// the same way.
func gray4(r, g, b uint32) uint32 {
	var out uint32
	//gocu:unroll
	for k := range 4 {
		s := uint32(8 * k)
		out |= uint32(luma(uint8(r>>s), uint8(g>>s), uint8(b>>s))) << s
	}
	return out
}

// luma is the lecture's grayscale of one pixel, as Gray computes it.
func luma(r, g, b uint8) uint8 {
	return uint8(0.2989*float32(r) + 0.5870*float32(g) + 0.1140*float32(b))
}
