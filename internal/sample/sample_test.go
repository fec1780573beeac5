package sample

import (
	"bytes"
	"flag"
	"image"
	"image/png"
	"os"
	"testing"
)

var update = flag.Bool("update", false, "rewrite sample.png from scene()")

// TestSamplePNG checks that the committed sample.png is what scene draws,
// so the picture is reproducible from the source. Other architectures may
// fuse multiply-adds in the float64 drawing code and round a channel the
// other way; one step of difference is allowed for that.
func TestSamplePNG(t *testing.T) {
	want := scene(Width, Height)
	if *update {
		var buf bytes.Buffer
		enc := png.Encoder{CompressionLevel: png.BestCompression}
		if err := enc.Encode(&buf, want); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile("sample.png", buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("wrote sample.png, %d bytes", buf.Len())
		return
	}
	if len(pngData) > 300<<10 {
		t.Errorf("sample.png is %d bytes; keep it under 300 KB", len(pngData))
	}
	got := Image()
	if got.Rect != image.Rect(0, 0, Width, Height) {
		t.Fatalf("bounds %v, want %dx%d", got.Rect, Width, Height)
	}
	bad := 0
	for i := range got.Pix {
		d := int(got.Pix[i]) - int(want.Pix[i])
		if d < -1 || d > 1 {
			if bad++; bad <= 5 {
				p := i / 4
				t.Errorf("pixel (%d,%d) channel %d is %d, scene draws %d", p%Width, p/Width, i%4, got.Pix[i], want.Pix[i])
			}
		}
	}
	if bad > 0 {
		t.Fatalf("%d channel values differ from scene(); run go test -run TestSamplePNG -update", bad)
	}
}

// TestSampleColourful guards the picture's purpose: grayscale must change
// it, so most pixels must not be gray already, and it must use the range.
func TestSampleColourful(t *testing.T) {
	img := Image()
	colourful, lo, hi := 0, 255, 0
	for i := 0; i < len(img.Pix); i += 4 {
		r, g, b := int(img.Pix[i]), int(img.Pix[i+1]), int(img.Pix[i+2])
		if max(r, g, b)-min(r, g, b) > 40 {
			colourful++
		}
		lo, hi = min(lo, r, g, b), max(hi, r, g, b)
		if img.Pix[i+3] != 255 {
			t.Fatalf("pixel %d is not opaque", i/4)
		}
	}
	if colourful < Width*Height/2 || lo > 40 || hi < 240 {
		t.Errorf("%d of %d pixels colourful, channel range [%d, %d]", colourful, Width*Height, lo, hi)
	}
}

func TestPlanar(t *testing.T) {
	img := Image()
	rgb, w, h := Planar()
	n := w * h
	if w != Width || h != Height || len(rgb) != 3*n {
		t.Fatalf("Planar: %dx%d, %d bytes", w, h, len(rgb))
	}
	for _, p := range []image.Point{{0, 0}, {511, 0}, {0, 511}, {300, 200}, {511, 511}, {77, 401}} {
		c := img.NRGBAAt(p.X, p.Y)
		i := p.Y*w + p.X
		if rgb[i] != c.R || rgb[n+i] != c.G || rgb[2*n+i] != c.B {
			t.Errorf("pixel %v: planar (%d,%d,%d), image %v", p, rgb[i], rgb[n+i], rgb[2*n+i], c)
		}
	}
	// PNG returns a copy: changing it does not change the sample.
	b := PNG()
	b[len(b)-1] ^= 0xff
	if bytes.Equal(b, pngData) {
		t.Error("PNG returned the embedded slice itself")
	}
}
