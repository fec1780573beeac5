package demo

import (
	"bytes"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"image"
	"image/color"
	"image/color/palette"
	"image/draw"
	"image/gif"
	"image/jpeg"
	"image/png"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"golang.org/x/image/bmp"
	"golang.org/x/image/tiff"

	"github.com/gocu-dev/gocu/internal/sample"
)

// encoded is one test image in one format.
type encoded struct {
	name, format string
	data         []byte
	lossless     bool        // decodes to exactly src (colours; alpha dropped)
	src          image.Image // what was encoded, for lossless formats
}

// testImages encodes a random image with an odd size in every format gocu
// reads; WebP, which Go cannot encode, comes from fixtures made with
// cwebp from testdata/crop.png.
func testImages(t *testing.T) []encoded {
	t.Helper()
	r := newRand(t)
	src := randomImage(r, 37, 23)
	opaque := image.NewNRGBA(src.Rect)
	copy(opaque.Pix, src.Pix)
	for i := 3; i < len(opaque.Pix); i += 4 {
		opaque.Pix[i] = 255
	}
	// Lossy formats get a smooth picture, a piece of the sample image at a
	// random place, as photographs are: random noise does not survive
	// JPEG's chroma subsampling.
	x0, y0 := r.IntN(sample.Width-37), r.IntN(sample.Height-23)
	smooth := sample.Image().SubImage(image.Rect(x0, y0, x0+37, y0+23))
	smoothGray := image.NewGray(smooth.Bounds())
	draw.Draw(smoothGray, smoothGray.Rect, smooth, smooth.Bounds().Min, draw.Src)
	gray := image.NewGray(src.Rect)
	for i := range gray.Pix {
		gray.Pix[i] = uint8(r.UintN(256))
	}
	enc := func(name, format string, lossless bool, img image.Image, f func(*bytes.Buffer, image.Image) error) encoded {
		var buf bytes.Buffer
		if err := f(&buf, img); err != nil {
			t.Fatalf("encoding %s: %v", name, err)
		}
		return encoded{name: name, format: format, data: buf.Bytes(), lossless: lossless, src: img}
	}
	pngEnc := func(b *bytes.Buffer, m image.Image) error { return png.Encode(b, m) }
	images := []encoded{
		enc("png-rgba", "png", true, src, pngEnc),
		enc("png-gray", "png", true, gray, pngEnc),
		enc("jpeg", "jpeg", false, smooth, func(b *bytes.Buffer, m image.Image) error { return jpeg.Encode(b, m, &jpeg.Options{Quality: 90}) }),
		enc("jpeg-gray", "jpeg", false, smoothGray, func(b *bytes.Buffer, m image.Image) error { return jpeg.Encode(b, m, nil) }),
		enc("gif", "gif", false, smooth, func(b *bytes.Buffer, m image.Image) error {
			return gif.Encode(b, m, &gif.Options{NumColors: 256, Quantizer: nil, Drawer: nil})
		}),
		enc("bmp", "bmp", true, opaque, func(b *bytes.Buffer, m image.Image) error { return bmp.Encode(b, m) }),
		enc("tiff", "tiff", true, src, func(b *bytes.Buffer, m image.Image) error { return tiff.Encode(b, m, nil) }),
		enc("tiff-deflate", "tiff", true, opaque, func(b *bytes.Buffer, m image.Image) error {
			return tiff.Encode(b, m, &tiff.Options{Compression: tiff.Deflate, Predictor: true})
		}),
	}
	// A GIF whose palette holds every colour is lossless.
	pal := image.NewPaletted(src.Rect, palette.WebSafe)
	for i := range pal.Pix {
		pal.Pix[i] = uint8(r.UintN(uint(len(palette.WebSafe))))
	}
	images = append(images, enc("gif-websafe", "gif", true, pal, func(b *bytes.Buffer, m image.Image) error { return gif.Encode(b, m, nil) }))

	crop, err := os.ReadFile("testdata/crop.png")
	if err != nil {
		t.Fatal(err)
	}
	cropImg, err := png.Decode(bytes.NewReader(crop))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []struct {
		file     string
		lossless bool
	}{{"crop-lossless.webp", true}, {"crop-lossy.webp", false}} {
		data, err := os.ReadFile(filepath.Join("testdata", f.file))
		if err != nil {
			t.Fatal(err)
		}
		images = append(images, encoded{name: f.file, format: "webp", data: data, lossless: f.lossless, src: cropImg})
	}
	return images
}

// TestReadImageFormats decodes every format, checks lossless ones against
// their source, and checks Planar against array.FromImage's independent
// conversion on each decoded type (NRGBA, RGBA, Gray, YCbCr, Paletted,
// NYCbCrA, ...).
func TestReadImageFormats(t *testing.T) {
	dir := t.TempDir()
	for _, e := range testImages(t) {
		t.Run(e.name, func(t *testing.T) {
			path := filepath.Join(dir, e.name+".img") // the name says nothing: contents decide
			if err := os.WriteFile(path, e.data, 0o644); err != nil {
				t.Fatal(err)
			}
			img, format, err := ReadImage(path)
			if err != nil {
				t.Fatal(err)
			}
			if format != e.format {
				t.Errorf("format %q, want %q", format, e.format)
			}
			b := img.Bounds()
			if e.src != nil && b.Size() != e.src.Bounds().Size() {
				t.Fatalf("decoded %v, encoded %v", b, e.src.Bounds())
			}
			rgb, w, h := Planar(img)
			if w != b.Dx() || h != b.Dy() {
				t.Fatalf("Planar size %dx%d for bounds %v", w, h, b)
			}
			if want := referencePlanar(t, img); !bytes.Equal(rgb, want) {
				i := firstDiff(rgb, want)
				t.Fatalf("Planar of a decoded %T differs from array.FromImage at byte %d: %d vs %d", img, i, rgb[i], want[i])
			}
			if e.lossless {
				if want := referencePlanar(t, e.src); !bytes.Equal(rgb, want) {
					i := firstDiff(rgb, want)
					t.Fatalf("lossless %s decoded to other colours: byte %d is %d, encoded %d", e.format, i, rgb[i], want[i])
				}
			} else if e.src != nil {
				// Lossy: close to the source on average.
				want := referencePlanar(t, e.src)
				var sum int
				for i := range want {
					sum += abs(int(rgb[i]) - int(want[i]))
				}
				// JPEG and WebP at quality 90 stay within a few levels;
				// GIF's Floyd-Steinberg dithering to the Plan 9 palette
				// moves single pixels much further.
				tol := map[string]float64{"jpeg": 8, "webp": 10, "gif": 32}[e.format]
				if mean := float64(sum) / float64(len(want)); mean > tol {
					t.Errorf("lossy %s is %.1f levels off on average", e.format, mean)
				}
			}
		})
	}
}

func TestPlanarTypes(t *testing.T) {
	r := newRand(t)
	src := randomImage(r, 19, 11)
	// Premultiplied RGBA with translucent pixels, and a sub-image whose
	// bounds do not start at the origin.
	rgba := image.NewRGBA(image.Rect(-3, 5, 16, 16))
	for y := rgba.Rect.Min.Y; y < rgba.Rect.Max.Y; y++ {
		for x := rgba.Rect.Min.X; x < rgba.Rect.Max.X; x++ {
			rgba.Set(x, y, src.At(x+3, y-5))
		}
	}
	ycc := image.NewYCbCr(image.Rect(0, 0, 19, 11), image.YCbCrSubsampleRatio420)
	for i := range ycc.Y {
		ycc.Y[i] = uint8(r.UintN(256))
	}
	for i := range ycc.Cb {
		ycc.Cb[i], ycc.Cr[i] = uint8(r.UintN(256)), uint8(r.UintN(256))
	}
	pal := image.NewPaletted(image.Rect(0, 0, 19, 11), color.Palette{color.NRGBA{200, 10, 30, 128}, color.Black, color.White})
	for i := range pal.Pix {
		pal.Pix[i] = uint8(r.UintN(3))
	}
	cmyk := image.NewCMYK(image.Rect(0, 0, 19, 11))
	for i := range cmyk.Pix {
		cmyk.Pix[i] = uint8(r.UintN(256))
	}
	for _, img := range []image.Image{
		src, src.SubImage(image.Rect(2, 3, 17, 9)), rgba, rgba.SubImage(image.Rect(0, 6, 9, 15)), ycc,
		ycc.SubImage(image.Rect(1, 1, 18, 10)), pal, cmyk,
	} {
		rgb, w, h := Planar(img)
		if w != img.Bounds().Dx() || h != img.Bounds().Dy() {
			t.Fatalf("%T %v: size %dx%d", img, img.Bounds(), w, h)
		}
		if want := referencePlanar(t, img); !bytes.Equal(rgb, want) {
			i := firstDiff(rgb, want)
			t.Errorf("%T %v: byte %d is %d, array.FromImage gives %d", img, img.Bounds(), i, rgb[i], want[i])
		}
	}
}

// TestReadImageBad covers files that are no image, truncated at every
// kind of place, or corrupted.
func TestReadImageBad(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, data []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	for _, c := range []struct {
		name string
		data []byte
		want error
	}{
		{"empty.png", nil, ErrUnknownFormat},
		{"text.png", []byte("this is not an image\n"), ErrUnknownFormat},
		{"go.jpg", []byte("package main\n\nfunc main() {}\n"), ErrUnknownFormat},
	} {
		_, _, err := ReadImage(write(c.name, c.data))
		if !errors.Is(err, c.want) || !strings.Contains(err.Error(), c.name) {
			t.Errorf("%s: got %v, want %v naming the file", c.name, err, c.want)
		}
	}
	if _, _, err := ReadImage(filepath.Join(dir, "missing.png")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}

	for _, e := range testImages(t) {
		// Truncated after the magic number, in the header, and at half
		// and nine tenths of the file: an error, never a partial image.
		for _, n := range slices.Compact([]int{8, 20, len(e.data) / 2, len(e.data) * 9 / 10}) {
			if n >= len(e.data) {
				continue
			}
			_, _, err := DecodeImage(e.name, e.data[:n])
			if err == nil {
				t.Errorf("%s truncated to %d of %d bytes: no error", e.name, n, len(e.data))
				continue
			}
			if !errors.Is(err, ErrCorrupt) && !errors.Is(err, ErrUnknownFormat) {
				t.Errorf("%s truncated to %d bytes: %v, want ErrCorrupt", e.name, n, err)
			}
			if !strings.Contains(err.Error(), e.name) {
				t.Errorf("%s: the error does not name the file: %v", e.name, err)
			}
		}
	}
	// A damaged PNG fails its zlib stream, a filter or a chunk's CRC.
	for _, e := range testImages(t) {
		if e.name != "png-rgba" {
			continue
		}
		bad := slices.Clone(e.data)
		bad[len(bad)/2] ^= 0x55
		if _, _, err := DecodeImage("bad.png", bad); !errors.Is(err, ErrCorrupt) {
			t.Errorf("corrupted PNG: %v", err)
		}
	}
	// A header that claims more pixels than the kernels index.
	ihdr := []byte("IHDR\x00\x01\x00\x00\x00\x01\x00\x00\x08\x02\x00\x00\x00") // 65536x65536 RGB
	huge := append([]byte("\x89PNG\r\n\x1a\n\x00\x00\x00\x0d"), ihdr...)
	huge = binary.BigEndian.AppendUint32(huge, crc32.ChecksumIEEE(ihdr))
	if _, _, err := DecodeImage("huge.png", huge); !errors.Is(err, ErrTooLarge) {
		t.Errorf("65536x65536 PNG: %v, want ErrTooLarge", err)
	}
}

func TestWriteImage(t *testing.T) {
	dir := t.TempDir()
	img := randomImage(newRand(t), 33, 17)
	for _, name := range []string{"out.png", "OUT.PNG", "out.jpg", "out.JPEG"} {
		p := filepath.Join(dir, name)
		if err := WriteImage(p, img, 85); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		got, format, err := ReadImage(p)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		want, _ := OutputFormat(name)
		if format != want || got.Bounds().Size() != img.Bounds().Size() {
			t.Errorf("%s: read back %s %v", name, format, got.Bounds())
		}
		if format == "png" && !bytes.Equal(referencePlanar(t, got), referencePlanar(t, img)) {
			t.Errorf("%s: the PNG does not read back exactly", name)
		}
		if fi, err := os.Stat(p); err != nil || fi.Mode().Perm() != 0o644 {
			t.Errorf("%s: mode %v, %v", name, fi.Mode(), err)
		}
	}

	for _, c := range []struct{ path, want string }{
		{filepath.Join(dir, "out.bmp"), "must end in .png, .jpg or .jpeg"},
		{filepath.Join(dir, "out"), "must end in .png, .jpg or .jpeg"},
		{filepath.Join(dir, "no", "such", "dir", "out.png"), "does not exist"},
		{filepath.Join(dir, "out.png", "x.png"), "cannot write"}, // the parent is a file
		{dir + string(filepath.Separator) + "sub.png", ""},
	} {
		if c.want == "" { // a directory named like an image
			if err := os.Mkdir(c.path, 0o755); err != nil {
				t.Fatal(err)
			}
			c.want = "is a directory"
		}
		err := WriteImage(c.path, img, 90)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("WriteImage(%s): %v, want %q", c.path, err, c.want)
		}
	}
	if err := WriteImage(filepath.Join(dir, "q.jpg"), img, 0); err == nil || !strings.Contains(err.Error(), "quality 0") {
		t.Errorf("quality 0: %v", err)
	}

	// An encoder failure leaves neither the file nor a temporary one, and
	// an existing file is kept as it was.
	keep := filepath.Join(dir, "keep.png")
	if err := os.WriteFile(keep, []byte("old contents"), 0o644); err != nil {
		t.Fatal(err)
	}
	empty := image.NewNRGBA(image.Rect(0, 0, 0, 5)) // png: invalid image size
	if err := WriteImage(keep, empty, 90); err == nil {
		t.Fatal("encoding a 0x5 image as PNG: no error")
	}
	if b, _ := os.ReadFile(keep); string(b) != "old contents" {
		t.Errorf("the failed write changed keep.png: %q", b)
	}
	if err := WriteImage(filepath.Join(dir, "new.png"), empty, 90); err == nil {
		t.Fatal("no error")
	}
	assertNoStray(t, dir, "out.png", "OUT.PNG", "out.jpg", "out.JPEG", "keep.png", "sub.png")

	if os.Geteuid() != 0 { // root writes anywhere
		ro := filepath.Join(dir, "ro")
		if err := os.Mkdir(ro, 0o555); err != nil {
			t.Fatal(err)
		}
		err := WriteImage(filepath.Join(ro, "x.png"), img, 90)
		if err == nil || !errors.Is(err, fs.ErrPermission) {
			t.Errorf("read-only directory: %v", err)
		}
	}
}

// assertNoStray fails if dir holds anything but the named entries.
func assertNoStray(t *testing.T, dir string, names ...string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if !slices.Contains(names, e.Name()) {
			t.Errorf("stray file %s left in %s", e.Name(), dir)
		}
	}
}

func firstDiff(a, b []uint8) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}
