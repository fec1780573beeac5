package demo

import (
	"image"
	"image/color"
)

// Planar converts an image to what the lecture's grayscale kernels take:
// planar (CHW) uint8 RGB, the red plane first, then green, then blue, each
// width*height bytes in row-major order from the top-left corner of the
// image's bounds. Colours are taken without premultiplied alpha (as
// color.NRGBAModel gives them), so a translucent pixel keeps its colour;
// the alpha channel is dropped. The common decoded types take a fast path;
// others go through img.At.
func Planar(img image.Image) (rgb []uint8, width, height int) {
	b := img.Bounds()
	w, h := b.Dx(), b.Dy()
	n := w * h
	rgb = make([]uint8, 3*n)
	r, g, bl := rgb[:n:n], rgb[n:2*n:2*n], rgb[2*n:]
	switch src := img.(type) {
	case *image.NRGBA:
		for y := range h {
			row := src.Pix[src.PixOffset(b.Min.X, b.Min.Y+y):]
			for x := range w {
				p, i := row[4*x:4*x+3:4*x+3], y*w+x
				r[i], g[i], bl[i] = p[0], p[1], p[2]
			}
		}
	case *image.RGBA:
		for y := range h {
			row := src.Pix[src.PixOffset(b.Min.X, b.Min.Y+y):]
			for x := range w {
				p, i := row[4*x:4*x+4:4*x+4], y*w+x
				if a := p[3]; a == 0xff {
					r[i], g[i], bl[i] = p[0], p[1], p[2]
				} else {
					c := color.NRGBAModel.Convert(color.RGBA{p[0], p[1], p[2], a}).(color.NRGBA)
					r[i], g[i], bl[i] = c.R, c.G, c.B
				}
			}
		}
	case *image.YCbCr:
		for y := range h {
			for x := range w {
				yi, ci := src.YOffset(b.Min.X+x, b.Min.Y+y), src.COffset(b.Min.X+x, b.Min.Y+y)
				i := y*w + x
				r[i], g[i], bl[i] = color.YCbCrToRGB(src.Y[yi], src.Cb[ci], src.Cr[ci])
			}
		}
	case *image.Gray:
		for y := range h {
			row := src.Pix[src.PixOffset(b.Min.X, b.Min.Y+y):]
			copy(r[y*w:(y+1)*w], row[:w])
		}
		copy(g, r)
		copy(bl, r)
	case *image.Paletted:
		pal := make([][3]uint8, len(src.Palette))
		for k, c := range src.Palette {
			nc := color.NRGBAModel.Convert(c).(color.NRGBA)
			pal[k] = [3]uint8{nc.R, nc.G, nc.B}
		}
		for y := range h {
			row := src.Pix[src.PixOffset(b.Min.X, b.Min.Y+y):]
			for x := range w {
				var c [3]uint8 // an index past the palette is black, as At gives it
				if k := int(row[x]); k < len(pal) {
					c = pal[k]
				}
				i := y*w + x
				r[i], g[i], bl[i] = c[0], c[1], c[2]
			}
		}
	default:
		for y := range h {
			for x := range w {
				c := color.NRGBAModel.Convert(img.At(b.Min.X+x, b.Min.Y+y)).(color.NRGBA)
				i := y*w + x
				r[i], g[i], bl[i] = c.R, c.G, c.B
			}
		}
	}
	return rgb, w, h
}

// GrayImage wraps the output of a grayscale kernel, width*height bytes in
// row-major order, as an image (sharing gray).
func GrayImage(gray []uint8, width, height int) *image.Gray {
	return &image.Gray{Pix: gray[:width*height], Stride: width, Rect: image.Rect(0, 0, width, height)}
}
