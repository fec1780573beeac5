package cli

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// ErrPlotName marks a plot file name that cannot be written: an image
// format the plotter does not write, or a folder that is not one.
var ErrPlotName = errors.New("bad plot file name")

// IsTerminal reports whether w is a terminal (a character device), so
// that a progress bar does not end up in a file or a pipe.
func IsTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok || f == nil {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// CheckPlotPath reports whether gonum/plot can write path: a name ending
// in an image format it writes, in a folder that exists.
func CheckPlotPath(path string) error {
	switch strings.ToLower(strings.TrimPrefix(filepath.Ext(path), ".")) {
	case "png", "svg", "pdf", "jpg", "jpeg", "eps", "tif", "tiff":
	default:
		return fmt.Errorf("plot file %s: want a name ending in .png or .svg (or .pdf, .jpg, .eps, .tif): %w", path, ErrPlotName)
	}
	dir := filepath.Dir(path)
	if st, err := os.Stat(dir); err != nil {
		return fmt.Errorf("plot file %s: %w", path, err)
	} else if !st.IsDir() {
		return fmt.Errorf("plot file %s: %s is not a folder: %w", path, dir, ErrPlotName)
	}
	return nil
}
