package demo

import (
	"errors"
	"fmt"
	"image"
	"time"

	"github.com/gocu-dev/gocu"
	"github.com/gocu-dev/gocu/internal/lecture"
)

// Stage is one timed stage of a pipeline.
type Stage struct {
	Name string
	Time time.Duration
}

// GrayResult is the output of Gray.
type GrayResult struct {
	Image  *image.Gray
	Kernel string      // "Gray" or "Gray2D"
	Config gocu.Config // the launch shape
	// Stages are the timed stages: planar conversion, compilation (GPU
	// only; from the disk cache after the first run), upload, kernel,
	// download. The kernel's time includes waiting for it.
	Stages []Stage
}

// Gray converts img to grayscale on dev with the lecture's kernel: on a
// 1-D grid of 256-thread blocks (lecture.Gray), or with twoD on a 2-D grid
// of 16x16 blocks (lecture.Gray2D).
func Gray(dev *gocu.Device, img image.Image, twoD bool) (res *GrayResult, err error) {
	if dev == nil {
		return nil, errors.New("gray: nil device")
	}
	if img == nil {
		return nil, errors.New("gray: nil image")
	}
	b := img.Bounds()
	if b.Empty() {
		return nil, fmt.Errorf("gray: empty image (%v)", b)
	}
	if int64(b.Dx())*int64(b.Dy()) > MaxPixels {
		return nil, fmt.Errorf("gray: %w: %dx%d pixels", ErrTooLarge, b.Dx(), b.Dy())
	}
	res = &GrayResult{}
	clock := time.Now()
	stage := func(name string) {
		now := time.Now()
		res.Stages = append(res.Stages, Stage{name, now.Sub(clock)})
		clock = now
	}

	rgb, w, h := Planar(img)
	n := w * h
	stage("to planar RGB")
	if dev.Kind() == gocu.CUDA {
		if err := Compile(dev); err != nil {
			return nil, err
		}
		stage("compile (NVRTC, cached)")
	}
	in, err := gocu.FromSlice(dev, rgb)
	if err != nil {
		return nil, err
	}
	defer freeInto(in, &err)
	out, err := gocu.Alloc[uint8](dev, n)
	if err != nil {
		return nil, err
	}
	defer freeInto(out, &err)
	if err := dev.Synchronize(); err != nil {
		return nil, err
	}
	stage("upload")

	if twoD {
		res.Kernel, res.Config = "Gray2D", gocu.Grid2D(w, h, 16, 16)
		err = lecture.LaunchGray2D(dev, res.Config, in, out, int32(w), int32(h))
	} else {
		res.Kernel, res.Config = "Gray", gocu.Grid1D(n, 256)
		err = lecture.LaunchGray(dev, res.Config, in, out, int32(n))
	}
	if err == nil {
		err = dev.Synchronize()
	}
	if err != nil {
		return nil, err
	}
	stage("kernel " + res.Kernel)

	gray, err := out.ToSlice()
	if err != nil {
		return nil, err
	}
	stage("download")
	res.Image = GrayImage(gray, w, h)
	return res, nil
}

// freeInto frees b and keeps the first error in *err.
func freeInto[T any](b *gocu.Buffer[T], err *error) {
	if ferr := b.Free(); *err == nil && ferr != nil {
		*err = ferr
	}
}
