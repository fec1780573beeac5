package lecture

import "github.com/gocu-dev/gocu/kernel"

// Gray converts a planar (CHW) RGB image of n pixels, rgb[0:n] red,
// rgb[n:2n] green and rgb[2n:3n] blue, to grayscale, one thread per pixel on
// a 1-D grid of at least n threads.
//
//gocu:kernel
func Gray(t *kernel.Thread, rgb, gray []uint8, n int32) {
	i := t.Index()
	if i < n {
		r, g, b := float32(rgb[i]), float32(rgb[i+n]), float32(rgb[i+2*n])
		gray[i] = uint8(0.2989*r + 0.5870*g + 0.1140*b)
	}
}

// Gray2D is Gray on a 2-D grid covering a width x height image: x indexes
// columns and y rows.
//
//gocu:kernel
func Gray2D(t *kernel.Thread, rgb, gray []uint8, width, height int32) {
	x, y := t.Index2D()
	if x < width && y < height {
		n := width * height
		i := y*width + x
		r, g, b := float32(rgb[i]), float32(rgb[i+n]), float32(rgb[i+2*n])
		gray[i] = uint8(0.2989*r + 0.5870*g + 0.1140*b)
	}
}
