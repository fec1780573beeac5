package mnist_test

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gocu-dev/gocu"
	"github.com/gocu-dev/gocu/array"
	"github.com/gocu-dev/gocu/datasets/mnist"
)

// load returns the real data, or skips where the module cache does not
// have it (a machine that only runs test binaries: set GOCU_MNIST_DIR).
func load(t *testing.T) (*mnist.Set, *mnist.Set) {
	t.Helper()
	train, test, err := mnist.Load("")
	if errors.Is(err, mnist.ErrNotFound) {
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	return train, test
}

func TestRealData(t *testing.T) {
	train, test := load(t)
	if train.N != 60000 || test.N != 10000 {
		t.Fatalf("%d training and %d test images", train.N, test.N)
	}
	count := func(s *mnist.Set) string {
		var c [10]int
		for _, l := range s.Labels {
			c[l]++
		}
		return fmt.Sprint(c)
	}
	// The class counts every copy of MNIST has.
	if got := count(train); got != "[5923 6742 5958 6131 5842 5421 5918 6265 5851 5949]" {
		t.Fatalf("training labels %s", got)
	}
	if got := count(test); got != "[980 1135 1032 1010 982 892 958 1028 974 1009]" {
		t.Fatalf("test labels %s", got)
	}
	if train.Labels[0] != 5 || test.Labels[0] != 7 {
		t.Fatalf("first labels %d, %d, want 5, 7", train.Labels[0], test.Labels[0])
	}
	sum := 0.0
	for _, p := range train.Images {
		sum += float64(p)
	}
	if mean := sum / float64(len(train.Images)) / 255; math.Abs(mean-0.1307) > 5e-4 {
		t.Fatalf("mean pixel %.4f, want 0.1307", mean)
	}
	x, y := test.Arrays(array.On(gocu.MustOpen("cpu")))
	if fmt.Sprint(x.Shape(), y.Shape(), x.DType(), y.DType()) != "[10000 784] [10000] float32 int64" {
		t.Fatalf("arrays %v %v %v %v", x.Shape(), y.Shape(), x.DType(), y.DType())
	}
	if mx, _ := x.Max().Item(); mx != 1 {
		t.Fatalf("max pixel %v, want 1", mx)
	}
}

func idx(magic uint32, dims []uint32, data []byte) []byte {
	b := binary.BigEndian.AppendUint32(nil, magic)
	for _, d := range dims {
		b = binary.BigEndian.AppendUint32(b, d)
	}
	return append(b, data...)
}

func gz(b []byte) []byte {
	var buf bytes.Buffer
	w := gzip.NewWriter(&buf)
	w.Write(b)
	w.Close()
	return buf.Bytes()
}

// badCRC flips a bit of a gzip stream's CRC-32.
func badCRC(z []byte) []byte {
	z = bytes.Clone(z)
	z[len(z)-8] ^= 1
	return z
}

func TestReadIDX(t *testing.T) {
	good := idx(mnist.MagicImages, []uint32{2, 2, 3}, []byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12})
	for name, in := range map[string][]byte{"raw": good, "gzip": gz(good)} {
		dims, data, err := mnist.ReadIDX(bytes.NewReader(in))
		if err != nil || fmt.Sprint(dims) != "[2 2 3]" || len(data) != 12 || data[11] != 12 {
			t.Fatalf("%s: %v %v %v", name, dims, data, err)
		}
	}
	cases := map[string]struct {
		in   []byte
		want string
	}{
		"empty":                   {nil, "shorter than the 4-byte magic"},
		"bad magic":               {idx(0x01000801, []uint32{1}, []byte{0}), "two zero bytes"},
		"float type":              {idx(0x00000D01, []uint32{1}, []byte{0, 0, 0, 0}), "element type 0x0d"},
		"no dims":                 {idx(0x00000800, nil, nil), "0 dimensions"},
		"short dims":              {idx(mnist.MagicImages, []uint32{2}, nil), "truncated header"},
		"short data":              {idx(mnist.MagicLabels, []uint32{5}, []byte{1, 2}), "truncated data: 2 of the 5"},
		"extra data":              {idx(mnist.MagicLabels, []uint32{1}, []byte{1, 2}), "more data"},
		"huge":                    {idx(mnist.MagicImages, []uint32{1 << 20, 1 << 20, 28}, nil), "exceed"},
		"corrupt gzip":            {gz(good)[:20], "truncated"},
		"gzip header":             {[]byte{0x1f, 0x8b, 0}, "bad gzip"},
		"gzip of junk":            {gz([]byte{9, 9, 9, 9}), "two zero bytes"},
		"gzip cut in the header":  {gz(good)[:len(gz(good))-30], "the gzip stream is truncated or corrupt (unexpected EOF)"},
		"gzip cut in the trailer": {gz(good)[:len(gz(good))-4], "the gzip stream is truncated or corrupt (unexpected EOF)"},
		"gzip bad checksum":       {badCRC(gz(good)), "the gzip stream is truncated or corrupt (gzip: invalid checksum)"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			_, _, err := mnist.ReadIDX(bytes.NewReader(c.in))
			if err == nil || !strings.Contains(err.Error(), c.want) || !errors.Is(err, mnist.ErrFormat) {
				t.Fatalf("error %v, want ErrFormat containing %q", err, c.want)
			}
		})
	}
}

func TestReadSetErrors(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, gz(b), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	img := write("img", idx(mnist.MagicImages, []uint32{2, 28, 28}, make([]byte, 2*784)))
	lab := write("lab", idx(mnist.MagicLabels, []uint32{2}, []byte{3, 9}))
	s, err := mnist.ReadSet(img, lab)
	if err != nil || s.N != 2 || s.Labels[1] != 9 || len(s.Image(1)) != 784 {
		t.Fatalf("ReadSet: %v", err)
	}
	cases := map[string]struct {
		img, lab, want string
	}{
		"missing":       {filepath.Join(dir, "nope"), lab, "no such file"},
		"swapped":       {lab, img, "want (N, 28, 28) images"},
		"count":         {img, write("lab3", idx(mnist.MagicLabels, []uint32{3}, []byte{1, 2, 3})), "2 images but"},
		"not a digit":   {img, write("lab10", idx(mnist.MagicLabels, []uint32{2}, []byte{1, 10})), "not a digit"},
		"wrong size":    {write("img27", idx(mnist.MagicImages, []uint32{1, 27, 28}, make([]byte, 27*28))), lab, "want (N, 28, 28)"},
		"labels as 2-D": {img, write("lab2d", idx(0x00000802, []uint32{2, 1}, []byte{1, 2})), "want (N) labels"},
	}
	for name, c := range cases {
		if _, err := mnist.ReadSet(c.img, c.lab); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Fatalf("%s: error %v, want %q", name, err, c.want)
		}
	}
	t.Setenv("GOCU_MNIST_DIR", dir)
	if _, err := mnist.Dir(); !errors.Is(err, mnist.ErrNotFound) || !strings.Contains(err.Error(), dir) {
		t.Fatalf("Dir with an incomplete GOCU_MNIST_DIR: %v", err)
	}
	if _, _, err := mnist.Load(""); !errors.Is(err, mnist.ErrNotFound) {
		t.Fatalf("Load: %v", err)
	}
}

// FuzzReadIDX: any input gives data whose size the dimensions give, or an
// error; never a panic or an allocation a forged header asks for.
func FuzzReadIDX(f *testing.F) {
	f.Add(idx(mnist.MagicImages, []uint32{1, 2, 2}, []byte{1, 2, 3, 4}))
	f.Add(gz(idx(mnist.MagicLabels, []uint32{3}, []byte{1, 2, 3})))
	f.Add(idx(mnist.MagicLabels, []uint32{0}, nil))
	z := gz(idx(mnist.MagicImages, []uint32{1, 2, 2}, []byte{1, 2, 3, 4}))
	f.Add(z[:len(z)-6])
	f.Fuzz(func(t *testing.T, in []byte) {
		dims, data, err := mnist.ReadIDX(bytes.NewReader(in))
		if err != nil {
			if !errors.Is(err, mnist.ErrFormat) {
				t.Fatalf("error %v does not wrap ErrFormat", err)
			}
			return
		}
		n := 1
		for _, d := range dims {
			n *= d
		}
		if n != len(data) {
			t.Fatalf("dimensions %v but %d bytes", dims, len(data))
		}
	})
}
