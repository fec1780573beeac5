package demo

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"image"
	_ "image/gif" // registers GIF with image.Decode
	"image/jpeg"
	"image/png"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/gocu-dev/gocu/internal/hostmem"

	_ "golang.org/x/image/bmp"  // registers BMP with image.Decode
	_ "golang.org/x/image/tiff" // registers TIFF
	_ "golang.org/x/image/webp" // registers WebP
)

// Errors of image reading and writing, for errors.Is.
var (
	// ErrUnknownFormat: the input is not an image in a format gocu reads.
	ErrUnknownFormat = errors.New("not a PNG, JPEG, GIF, BMP, TIFF or WebP image")
	// ErrCorrupt: the input starts as an image but cannot be decoded.
	ErrCorrupt = errors.New("corrupt or truncated image")
	// ErrOutputFormat: the output's extension names no format gocu writes.
	ErrOutputFormat = errors.New("the output must end in .png, .jpg or .jpeg")
	// ErrTooLarge: the image has more pixels than the kernels index.
	ErrTooLarge = errors.New("image too large")
)

// MaxPixels is the largest image the grayscale kernels take: they index
// the three planes with int32, so 3 * pixels must stay below 2^31.
const MaxPixels = (1<<31 - 1) / 3

// maxPixelsPerByte bounds the pixels a file of a given size can hold. The
// densest real images are 1-bit blank ones: 8 pixels a byte, which deflate
// (at most 1032:1) or LZW (at most about 2730:1) shrink to under 22,000
// pixels a byte; anything claiming more than 32,768 is forged.
const maxPixelsPerByte = 1 << 15

// ReadImage reads and decodes an image file in PNG, JPEG, GIF, BMP, TIFF
// or WebP, whatever its name, and returns it with its format's name. The
// error says which file and why, wrapping ErrUnknownFormat, ErrCorrupt or
// ErrTooLarge, or the file system's error.
func ReadImage(path string) (image.Image, string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, "", err
	}
	defer f.Close()
	limit := int64(MaxFileBytes)
	if mem := hostmem.Limit(); mem > 0 {
		limit = min(limit, mem/2)
	}
	if st, err := f.Stat(); err == nil && st.Mode().IsRegular() && st.Size() > limit {
		return nil, "", fmt.Errorf("%s: %w: %d bytes, more than the %d an image may have here", path, ErrTooLarge, st.Size(), limit)
	}
	// The first bytes name the format: a device or a pipe that is no
	// image is refused before more is read, and nothing past limit is.
	br := bufio.NewReader(io.LimitReader(f, limit+1))
	head, _ := br.Peek(512)
	if len(head) > 0 {
		if _, _, err := image.DecodeConfig(bytes.NewReader(head)); errors.Is(err, image.ErrFormat) {
			return nil, "", fmt.Errorf("%s: %w", path, ErrUnknownFormat)
		}
	}
	data, err := io.ReadAll(br)
	if err != nil {
		return nil, "", err
	}
	if int64(len(data)) > limit {
		return nil, "", fmt.Errorf("%s: %w: more than the %d bytes an image may have here", path, ErrTooLarge, limit)
	}
	return DecodeImage(path, data)
}

// MaxFileBytes bounds the file ReadImage reads (and half the machine's
// memory, when lower): MaxPixels of 8-bit RGBA and room for metadata.
const MaxFileBytes = 4*MaxPixels + 64<<20

// DecodeImage is ReadImage for an image already in memory; name is what
// errors call it.
func DecodeImage(name string, data []byte) (image.Image, string, error) {
	// The header gives the format and the size before any pixel is
	// decoded, so a huge image is refused before it is allocated and a
	// truncated file is told apart from one that is no image at all.
	if len(data) == 0 {
		return nil, "", fmt.Errorf("%s: %w: the file is empty", name, ErrUnknownFormat)
	}
	cfg, format, err := image.DecodeConfig(bytes.NewReader(data))
	if errors.Is(err, image.ErrFormat) {
		return nil, "", fmt.Errorf("%s: %w", name, ErrUnknownFormat)
	}
	if err != nil {
		return nil, "", fmt.Errorf("%s: %w: %s header: %v", name, ErrCorrupt, formatName(format), eofText(err))
	}
	if cfg.Width <= 0 || cfg.Height <= 0 {
		return nil, "", fmt.Errorf("%s: %w: %s of %dx%d pixels", name, ErrCorrupt, strings.ToUpper(format), cfg.Width, cfg.Height)
	}
	if int64(cfg.Width)*int64(cfg.Height) > MaxPixels {
		return nil, "", fmt.Errorf("%s: %w: %dx%d pixels, more than %d", name, ErrTooLarge, cfg.Width, cfg.Height, MaxPixels)
	}
	// The decoders allocate the whole image from the header: a forged
	// 100-byte file must not make them allocate gigabytes first.
	if px := int64(cfg.Width) * int64(cfg.Height); px > maxPixelsPerByte*int64(len(data)) {
		return nil, "", fmt.Errorf("%s: %w: its %s header claims %dx%d pixels, which %d bytes cannot hold", name, ErrCorrupt, strings.ToUpper(format), cfg.Width, cfg.Height, len(data))
	}
	img, format, err := image.Decode(bytes.NewReader(data))
	if err != nil {
		return nil, "", fmt.Errorf("%s: %w: %v", name, ErrCorrupt, eofText(err))
	}
	return img, format, nil
}

// formatName names the format of a header that failed to decode.
func formatName(format string) string {
	switch format {
	case "":
		return "image"
	case "webp":
		return "WebP"
	}
	return strings.ToUpper(format)
}

// eofText says "the file ends too early" for the decoders' EOF errors,
// which by themselves read as if nothing went wrong.
func eofText(err error) string {
	if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
		return "the file ends too early (" + err.Error() + ")"
	}
	return err.Error()
}

// OutputFormat returns "png" or "jpeg" from the extension of path
// (case-insensitive), or an error wrapping ErrOutputFormat.
func OutputFormat(path string) (string, error) {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".png":
		return "png", nil
	case ".jpg", ".jpeg":
		return "jpeg", nil
	}
	return "", fmt.Errorf("%s: %w", path, ErrOutputFormat)
}

// createError says why a file could not be created in dir: the directory
// is missing, is not a directory, or exists but refuses new files (as
// /proc does, with the same "no such file" error as a missing directory).
func createError(dir string, err error) error {
	st, serr := os.Stat(dir)
	switch {
	case errors.Is(serr, fs.ErrNotExist):
		return fmt.Errorf("the directory %s does not exist", dir)
	case serr == nil && !st.IsDir():
		return fmt.Errorf("%s is not a directory", dir)
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err // the temporary file's name would only confuse
	}
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("cannot create a file in %s: %w (the directory exists, but its file system refuses new files)", dir, err)
	}
	return fmt.Errorf("cannot create a file in %s: %w", dir, err)
}

// WriteImage encodes img as PNG or JPEG, chosen by the extension of path
// (quality 1-100 for JPEG), into a temporary file in path's directory and
// renames it to path when everything is written: a failure never leaves a
// partial file, and never replaces an existing file with one.
func WriteImage(path string, img image.Image, quality int) error {
	format, err := OutputFormat(path)
	if err != nil {
		return err
	}
	if format == "jpeg" && (quality < 1 || quality > 100) {
		return fmt.Errorf("JPEG quality %d: must be 1 to 100", quality)
	}
	if fi, err := os.Stat(path); err == nil && fi.IsDir() {
		return fmt.Errorf("%s: is a directory", path)
	}
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return fmt.Errorf("cannot write %s: %w", path, createError(dir, err))
	}
	done := false
	defer func() {
		if !done {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	switch format {
	case "png":
		err = png.Encode(tmp, img)
	case "jpeg":
		err = jpeg.Encode(tmp, img, &jpeg.Options{Quality: quality})
	}
	if err == nil {
		err = tmp.Chmod(0o644) // CreateTemp makes 0600; an image is for sharing
	}
	if err == nil {
		err = tmp.Close()
	}
	if err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	done = true
	return nil
}
