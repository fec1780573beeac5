package demo

import (
	"bytes"
	"errors"
	"image"
	"strings"
	"testing"

	"github.com/gocu-dev/gocu"
	"github.com/gocu-dev/gocu/internal/lecture"
	"github.com/gocu-dev/gocu/internal/sample"
)

func simDevice(t *testing.T) *gocu.Device {
	t.Helper()
	dev, err := gocu.Open("sim")
	if err != nil {
		t.Fatal(err)
	}
	return dev
}

// TestGray runs the pipeline with both kernels on random images whose
// sizes are not multiples of the blocks, and on the sample, against the
// plain-Go reference.
func TestGray(t *testing.T) {
	r := newRand(t)
	dev := simDevice(t)
	imgs := []image.Image{sample.Image(), randomImage(r, 1, 1), randomImage(r, 257, 3), randomImage(r, 31, 45)}
	for _, img := range imgs {
		rgb, w, h := Planar(img)
		want := lecture.GrayReference(rgb, w*h)
		for _, twoD := range []bool{false, true} {
			res, err := Gray(dev, img, twoD)
			if err != nil {
				t.Fatalf("%v twoD=%v: %v", img.Bounds(), twoD, err)
			}
			if res.Image.Rect != image.Rect(0, 0, w, h) || !bytes.Equal(res.Image.Pix, want) {
				t.Errorf("%v twoD=%v: gray image differs from the reference", img.Bounds(), twoD)
			}
			wantKernel := map[bool]string{false: "Gray", true: "Gray2D"}[twoD]
			if res.Kernel != wantKernel {
				t.Errorf("kernel %s, want %s", res.Kernel, wantKernel)
			}
			var names []string
			for _, s := range res.Stages {
				names = append(names, s.Name)
			}
			if got := strings.Join(names, ","); got != "to planar RGB,upload,kernel "+wantKernel+",download" {
				t.Errorf("stages %s", got)
			}
		}
	}
	if _, err := Gray(dev, image.NewNRGBA(image.Rect(0, 0, 0, 3)), false); err == nil || !strings.Contains(err.Error(), "empty image") {
		t.Errorf("empty image: %v", err)
	}
	if _, err := Gray(nil, imgs[0], false); err == nil {
		t.Error("nil device: no error")
	}
	huge := image.NewUniform(image.Black) // bounds of a huge image, no pixels
	if _, err := Gray(dev, huge, false); !errors.Is(err, ErrTooLarge) {
		t.Errorf("an image of %v: %v", huge.Bounds(), err)
	}
}
