// Package gray holds grayscale kernels: the lecture's 1-D and 2-D versions
// and a bandwidth-bound version that moves four pixels per thread.
package gray

import "github.com/gocu-dev/gocu/kernel"

// RGBToGray converts a planar RGB image of n pixels to gray.
//
//gocu:kernel
func RGBToGray(t *kernel.Thread, rgb, gray []uint8, n int32) {
	i := t.BlockIdx.X*t.BlockDim.X + t.ThreadIdx.X
	if i < n {
		gray[i] = uint8(0.2989*float32(rgb[i]) + 0.5870*float32(rgb[i+n]) + 0.1140*float32(rgb[i+2*n]))
	}
}

// RGBToGray2D is the same on a 2-D grid over a w x h image.
//
//gocu:kernel
func RGBToGray2D(t *kernel.Thread, rgb, gray []uint8, w, h int32) {
	x, y := t.Index2D()
	if x < w && y < h {
		i := y*w + x
		n := w * h
		gray[i] = luma(rgb[i], rgb[i+n], rgb[i+2*n])
	}
}

func luma(r, g, b uint8) uint8 {
	return uint8(0.2989*float32(r) + 0.5870*float32(g) + 0.1140*float32(b))
}

// RGBToGray4 converts four pixels per thread with 32-bit loads and stores:
// n must be a multiple of 4 and the planes 4-byte aligned.
//
//gocu:kernel
//gocu:noalias
//gocu:launch_bounds 256
func RGBToGray4(t *kernel.Thread, rgb, gray []uint8, n int32) {
	src := kernel.Reinterpret[uint32](rgb)
	dst := kernel.Reinterpret[uint32](gray)
	q := n / 4
	for i := t.Index(); i < q; i += t.Stride() {
		r, g, b := src[i], src[i+q], src[i+2*q]
		var out uint32
		//gocu:unroll
		for k := range 4 {
			s := uint32(k * 8)
			out |= uint32(luma(uint8(r>>s), uint8(g>>s), uint8(b>>s))) << s
		}
		dst[i] = out
	}
}
