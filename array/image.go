package array

import (
	"github.com/gocu-dev/gocu"
	"image"
	"image/color"
	"runtime"
)

// ImageLayout orders the axes of an image array.
type ImageLayout uint8

// HWC is height × width × channels (interleaved pixels, the layout of Go's
// image types and of PIL/OpenCV arrays); CHW is channels × height × width
// (planar, the layout of PyTorch and of the lecture's grayscale kernel).
const (
	HWC ImageLayout = iota
	CHW
)

// FromImageOn converts an image to a uint8 array on device d with 1 (gray,
// by Go's color.GrayModel: 0.299 R + 0.587 G + 0.114 B), 3 (RGB) or 4 (RGBA,
// not premultiplied) channels, in the given layout. Pixel (x, y) of the
// image's bounds becomes row y - Min.Y, column x - Min.X.
func FromImageOn(dev *gocu.Device, img image.Image, layout ImageLayout, channels int) *Array {
	return fromImageOn(On(dev), img, layout, channels)
}

func fromImageOn(d *Maker, img image.Image, layout ImageLayout, channels int) *Array {
	const op = "FromImage"
	if channels != 1 && channels != 3 && channels != 4 {
		return failed(errorf(op, ErrValue, "channels must be 1, 3 or 4, not %d", channels))
	}
	if layout != HWC && layout != CHW {
		return failed(errorf(op, ErrValue, "unknown layout %d", layout))
	}
	if img == nil {
		return failed(errorf(op, ErrValue, "nil image"))
	}
	b := img.Bounds()
	h, w := b.Dy(), b.Dx()
	shape := []int{h, w, channels}
	if layout == CHW {
		shape = []int{channels, h, w}
	}
	if err := checkShape(op, Uint8, shape); err != nil {
		return failed(err)
	}
	if err := checkHostAlloc(op, Uint8, shape); err != nil {
		return failed(err)
	}
	data := make([]uint8, h*w*channels)
	put := func(y, x, c int, v uint8) {
		if layout == HWC {
			data[(y*w+x)*channels+c] = v
		} else {
			data[(c*h+y)*w+x] = v
		}
	}
	if src, ok := img.(*image.Gray); ok && channels == 1 {
		for y := 0; y < h; y++ {
			o := (y+b.Min.Y-src.Rect.Min.Y)*src.Stride + (b.Min.X - src.Rect.Min.X)
			copy(data[y*w:(y+1)*w], src.Pix[o:o+w])
		}
	} else {
		for y := 0; y < h; y++ {
			for x := 0; x < w; x++ {
				c := img.At(b.Min.X+x, b.Min.Y+y)
				if channels == 1 {
					put(y, x, 0, color.GrayModel.Convert(c).(color.Gray).Y)
					continue
				}
				n := color.NRGBAModel.Convert(c).(color.NRGBA)
				put(y, x, 0, n.R)
				put(y, x, 1, n.G)
				put(y, x, 2, n.B)
				if channels == 4 {
					put(y, x, 3, n.A)
				}
			}
		}
	}
	return fromSliceOn(d, data, shape...)
}

// FromImage is FromImageOn on the default device.
func FromImage(img image.Image, layout ImageLayout, channels int) *Array {
	return fromImageOn(Default(), img, layout, channels)
}

// Image converts a uint8 array to an image: shape (H, W) or, in the given
// layout, 1 channel give *image.Gray, 3 channels *image.RGBA (opaque), 4
// channels *image.NRGBA. Convert other dtypes first, e.g.
// x.Clip(0, 255).AsType(array.Uint8).
func (a *Array) Image(layout ImageLayout) (image.Image, error) {
	const op = "Image"
	defer runtime.KeepAlive(a)
	if _, err := a.use(op); err != nil {
		return nil, err
	}
	if a.dt != Uint8 {
		return nil, errorf(op, ErrDType, "image arrays must be uint8, not %v", a.dt)
	}
	var h, w, c int
	switch {
	case len(a.shape) == 2:
		h, w, c = a.shape[0], a.shape[1], 1
	case len(a.shape) == 3 && layout == HWC:
		h, w, c = a.shape[0], a.shape[1], a.shape[2]
	case len(a.shape) == 3 && layout == CHW:
		c, h, w = a.shape[0], a.shape[1], a.shape[2]
	default:
		return nil, errorf(op, ErrShape, "shape %s is not an image (H,W), (H,W,C) or (C,H,W)", shapeString(a.shape))
	}
	if c != 1 && c != 3 && c != 4 {
		return nil, errorf(op, ErrShape, "shape %s has %d channels; want 1, 3 or 4", shapeString(a.shape), c)
	}
	src := a
	if len(a.shape) == 3 && layout == CHW && c > 1 {
		src = a.Transpose(1, 2, 0) // to HWC
		defer src.Close()
	}
	hd, err := src.hostData(op)
	if err != nil {
		return nil, err
	}
	pix := hd.([]uint8)
	r := image.Rect(0, 0, w, h)
	switch c {
	case 1:
		return &image.Gray{Pix: pix, Stride: w, Rect: r}, nil
	case 4:
		return &image.NRGBA{Pix: pix, Stride: 4 * w, Rect: r}, nil
	}
	out := image.NewRGBA(r)
	for i := 0; i < h*w; i++ {
		copy(out.Pix[4*i:4*i+3], pix[3*i:3*i+3])
		out.Pix[4*i+3] = 255
	}
	return out, nil
}
