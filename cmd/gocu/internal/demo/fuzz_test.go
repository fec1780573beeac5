package demo

import (
	"bytes"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"image"
	"image/gif"
	"image/jpeg"
	"image/png"
	"testing"

	"golang.org/x/image/bmp"
	"golang.org/x/image/tiff"
)

// pngHeader is a PNG signature and IHDR chunk claiming w x h pixels of
// 8-bit RGBA, followed by nothing: what a forged file starts with.
func pngHeader(w, h uint32) []byte {
	ihdr := binary.BigEndian.AppendUint32(nil, w)
	ihdr = binary.BigEndian.AppendUint32(ihdr, h)
	ihdr = append(ihdr, 8, 6, 0, 0, 0)
	chunk := append([]byte("IHDR"), ihdr...)
	out := append([]byte("\x89PNG\r\n\x1a\n"), binary.BigEndian.AppendUint32(nil, uint32(len(ihdr)))...)
	out = append(out, chunk...)
	return binary.BigEndian.AppendUint32(out, crc32.ChecksumIEEE(chunk))
}

// FuzzDecodeImage feeds files to the image reader of gocu gray. It must
// never panic or allocate an image its bytes cannot hold (huge headers are
// among the seeds); every failure must wrap ErrUnknownFormat, ErrCorrupt or
// ErrTooLarge; and an accepted image must convert to planar RGB of its
// size. The corpus is testdata/fuzz/FuzzDecodeImage.
func FuzzDecodeImage(f *testing.F) {
	src := image.NewNRGBA(image.Rect(0, 0, 5, 3))
	for i := range src.Pix {
		src.Pix[i] = uint8(i * 37)
	}
	for _, enc := range []func(*bytes.Buffer) error{
		func(b *bytes.Buffer) error { return png.Encode(b, src) },
		func(b *bytes.Buffer) error { return jpeg.Encode(b, src, nil) },
		func(b *bytes.Buffer) error { return gif.Encode(b, src, nil) },
		func(b *bytes.Buffer) error { return bmp.Encode(b, src) },
		func(b *bytes.Buffer) error { return tiff.Encode(b, src, nil) },
	} {
		var b bytes.Buffer
		if err := enc(&b); err != nil {
			f.Fatal(err)
		}
		f.Add(b.Bytes())
	}
	f.Add(pngHeader(100000, 100000))
	f.Add(pngHeader(1<<31-1, 1<<31-1))
	f.Add(pngHeader(26000, 26000))
	f.Add(pngHeader(0, 7))
	f.Add([]byte("GIF89a\xff\xff\xff\xff\x00\x00\x00"))
	f.Add([]byte("BM\x00\x00\x00\x00\x00\x00\x00\x00\x36\x00\x00\x00\x28\x00\x00\x00\xff\xff\x00\x00\xff\xff\x00\x00\x01\x00\x20\x00"))
	f.Fuzz(func(t *testing.T, data []byte) {
		if cfg, _, err := image.DecodeConfig(bytes.NewReader(data)); err == nil && int64(cfg.Width)*int64(cfg.Height) > 1<<22 {
			// Legitimately large for its bytes, as a blank image is: decoding
			// it is slow and says nothing new; the bounds are tested above.
			if int64(cfg.Width)*int64(cfg.Height) <= maxPixelsPerByte*int64(len(data)) {
				return
			}
		}
		img, _, err := DecodeImage("fuzz", data)
		if err != nil {
			if !errors.Is(err, ErrUnknownFormat) && !errors.Is(err, ErrCorrupt) && !errors.Is(err, ErrTooLarge) {
				t.Fatalf("error %v wraps none of the image errors", err)
			}
			return
		}
		b := img.Bounds()
		if b.Dx() <= 0 || b.Dy() <= 0 || int64(b.Dx())*int64(b.Dy()) > MaxPixels {
			t.Fatalf("accepted an image of %v", b)
		}
		rgb, w, h := Planar(img)
		if w != b.Dx() || h != b.Dy() || len(rgb) != 3*w*h {
			t.Fatalf("Planar of %v: %d bytes, %dx%d", b, len(rgb), w, h)
		}
	})
}

// A forged header is refused before the decoder allocates the image it
// claims: 100 bytes that claim 26000x26000 pixels (2.7 GB as RGBA).
func TestDecodeImageRefusesForgedSize(t *testing.T) {
	_, _, err := DecodeImage("forged.png", pngHeader(26000, 26000))
	if !errors.Is(err, ErrCorrupt) || err.Error() != "forged.png: corrupt or truncated image: its PNG header claims 26000x26000 pixels, which 33 bytes cannot hold" {
		t.Errorf("got %v", err)
	}
}
