package cli

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

func TestCheckPlotPath(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "f")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		path string
		want error
	}{
		{filepath.Join(dir, "loss.png"), nil},
		{filepath.Join(dir, "loss.SVG"), nil},
		{filepath.Join(dir, "loss.txt"), ErrPlotName},
		{filepath.Join(dir, "loss"), ErrPlotName},
		{filepath.Join(dir, "missing", "loss.png"), fs.ErrNotExist},
		{filepath.Join(file, "loss.png"), ErrPlotName},
	} {
		err := CheckPlotPath(c.path)
		if c.want == nil && err != nil || c.want != nil && !errors.Is(err, c.want) {
			t.Errorf("CheckPlotPath(%s) = %v, want %v", c.path, err, c.want)
		}
	}
}

func TestIsTerminal(t *testing.T) {
	f, err := os.CreateTemp(t.TempDir(), "out")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var nilFile *os.File
	if IsTerminal(f) || IsTerminal(&bytes.Buffer{}) || IsTerminal(nilFile) {
		t.Error("a file, a buffer or a nil file taken for a terminal")
	}
}
