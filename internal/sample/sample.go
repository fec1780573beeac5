package sample

import (
	"bytes"
	_ "embed"
	"image"
	"image/draw"
	"image/png"
)

// Width and Height are the size of the sample image.
const (
	Width  = 512
	Height = 512
)

//go:embed sample.png
var pngData []byte

// PNG returns the sample image as PNG-encoded bytes (a copy).
func PNG() []byte { return bytes.Clone(pngData) }

// Image decodes the embedded PNG and returns it as a fresh *image.NRGBA
// (opaque, Width x Height, origin 0,0) that the caller may modify.
func Image() *image.NRGBA {
	img, err := png.Decode(bytes.NewReader(pngData))
	if err != nil {
		// The file is compiled in and checked by the tests: this cannot
		// happen in a binary built from this module.
		panic("sample: the embedded PNG does not decode: " + err.Error())
	}
	if n, ok := img.(*image.NRGBA); ok {
		return n
	}
	n := image.NewNRGBA(img.Bounds())
	draw.Draw(n, n.Rect, img, img.Bounds().Min, draw.Src)
	return n
}

// Planar returns the sample image as the lecture's kernels take it: planar
// (CHW) uint8 RGB, the red plane rgb[0:n], then green rgb[n:2n], then blue
// rgb[2n:3n], for n = width*height pixels in row-major order.
func Planar() (rgb []uint8, width, height int) {
	img := Image()
	n := Width * Height
	rgb = make([]uint8, 3*n)
	for i := range n {
		p := img.Pix[4*i : 4*i+3 : 4*i+3]
		rgb[i], rgb[n+i], rgb[2*n+i] = p[0], p[1], p[2]
	}
	return rgb, Width, Height
}
