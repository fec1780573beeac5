package main

import (
	"bytes"
	"fmt"
	"image"
	"image/jpeg"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"golang.org/x/image/bmp"

	"github.com/gocu-dev/gocu"
	"github.com/gocu-dev/gocu/cmd/gocu/internal/demo"
	"github.com/gocu-dev/gocu/internal/lecture"
	"github.com/gocu-dev/gocu/internal/sample"
)

func TestGray(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "sample.png")
	if err := os.WriteFile(in, sample.PNG(), 0o644); err != nil {
		t.Fatal(err)
	}
	rgb, w, h := sample.Planar()
	want := lecture.GrayReference(rgb, w*h)
	for _, args := range [][]string{
		{"gray", "--device", "sim", in, filepath.Join(dir, "g1.png")},
		{"gray", "--device", "auto", "--2d", "--time", in, filepath.Join(dir, "g2.PNG")},
	} {
		out, err := run(t, args...)
		if err != nil {
			t.Fatalf("gocu %v: %v\n%s", args, err, out)
		}
		img, _, err := demo.ReadImage(args[len(args)-1])
		if err != nil {
			t.Fatal(err)
		}
		g, ok := img.(*image.Gray)
		if !ok {
			t.Fatalf("gocu %v wrote a %T", args, img)
		}
		// The simulator computes exactly what Go does; a GPU may fuse a
		// multiply-add and round a pixel to the neighbouring level.
		tol := 0
		if dev, err := demo.OpenDevice(args[2]); err == nil && dev.Kind() == gocu.CUDA {
			tol = 1
		}
		for i := range want {
			if d := int(g.Pix[i]) - int(want[i]); d < -tol || d > tol {
				t.Fatalf("gocu %v: pixel %d is %d, want %d", args, i, g.Pix[i], want[i])
			}
		}
		b := g.Bounds()
		if want := fmt.Sprintf("wrote %s: %dx%d grayscale PNG, ", args[len(args)-1], b.Dx(), b.Dy()); !strings.HasPrefix(out, want) || !strings.Contains(out, " KiB, from "+in+" on ") {
			t.Errorf("gocu %v printed %q, want it to start %q and name the input and device", args, out, want)
		}
		timed := strings.Contains(out, "kernel Gray2D") && strings.Contains(out, "read and decode png") && strings.Contains(out, "total")
		if slices.Contains(args, "--time") != timed {
			t.Errorf("gocu %v printed:\n%s", args, out)
		}
	}

	// JPEG out, from a BMP in.
	var bm bytes.Buffer
	if err := bmp.Encode(&bm, sample.Image()); err != nil {
		t.Fatal(err)
	}
	bmpIn := filepath.Join(dir, "in.bmp")
	if err := os.WriteFile(bmpIn, bm.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	jpgOut := filepath.Join(dir, "g.jpg")
	if out, err := run(t, "gray", "--quality", "95", bmpIn, jpgOut); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	f, err := os.Open(jpgOut)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if img, err := jpeg.Decode(f); err != nil || img.Bounds().Dx() != w {
		t.Fatalf("the JPEG: %v", err)
	}
}

// TestGrayErrors: every failure is a clear error and leaves no output, no
// temporary file, and an existing OUT untouched.
func TestGrayErrors(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.png")
	if err := os.WriteFile(good, sample.PNG(), 0o644); err != nil {
		t.Fatal(err)
	}
	trunc := filepath.Join(dir, "trunc.png")
	if err := os.WriteFile(trunc, sample.PNG()[:len(sample.PNG())/3], 0o644); err != nil {
		t.Fatal(err)
	}
	text := filepath.Join(dir, "notes.jpg")
	if err := os.WriteFile(text, []byte("not a picture"), 0o644); err != nil {
		t.Fatal(err)
	}
	keep := filepath.Join(dir, "keep.png")
	if err := os.WriteFile(keep, []byte("previous result"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out.png")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"gray", trunc, out}, "trunc.png: corrupt or truncated image"},
		{[]string{"gray", trunc, keep}, "corrupt or truncated image"},
		{[]string{"gray", text, out}, "notes.jpg: not a PNG, JPEG, GIF, BMP, TIFF or WebP image"},
		{[]string{"gray", filepath.Join(dir, "missing.png"), out}, "no such file"},
		{[]string{"gray", good, filepath.Join(dir, "out.bmp")}, "must end in .png, .jpg or .jpeg"},
		{[]string{"gray", good, filepath.Join(dir, "nodir", "out.png")}, "does not exist"},
		{[]string{"gray", good, filepath.Join(good, "out.png")}, "cannot write"},
		{[]string{"gray", "--quality", "0", good, filepath.Join(dir, "q.jpg")}, "quality 0"},
		{[]string{"gray", "--device", "cuda:7", good, out}, "cuda"},
		{[]string{"gray", good}, "gray takes two files, IN and OUT, not 1 argument(s) (usage: gocu gray [flags] IN OUT"},
	} {
		msg, err := run(t, c.args...)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("gocu %v: %v (%s), want %q", c.args[1:], err, msg, c.want)
		}
	}
	if b, _ := os.ReadFile(keep); string(b) != "previous result" {
		t.Errorf("a failed run changed keep.png to %q", b)
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		switch e.Name() {
		case "good.png", "trunc.png", "notes.jpg", "keep.png":
		default:
			t.Errorf("a failed run left %s", e.Name())
		}
	}
}

func TestDemo(t *testing.T) {
	out := filepath.Join(t.TempDir(), "demo.jpg")
	msg, err := run(t, "demo", "--device", "sim", "--size", "32", "-o", out, "--seed", "7")
	if err != nil {
		t.Fatalf("%v\n%s", err, msg)
	}
	for _, s := range []string{"lecture.TiledMatMul", "array.MatMul", "32x32x32", "wrote " + out, "seed 7: GOCU_SIM_SEED=7"} {
		if !strings.Contains(msg, s) {
			t.Errorf("gocu demo output lacks %q:\n%s", s, msg)
		}
	}
	if _, format, err := demo.ReadImage(out); err != nil || format != "jpeg" {
		t.Errorf("the demo's -o file: %v, %s", err, format)
	}
	if _, err := run(t, "demo", "--size", "0x"); err == nil {
		t.Error("--size 0x: no error")
	}
}

// A simulator budget that runs out makes the demo fail with the budget's
// error, not blame a correct kernel for the output it never finished.
func TestDemoTimeout(t *testing.T) {
	t.Setenv("GOCU_SIM_TIMEOUT", "1ms")
	msg, err := run(t, "demo", "--device", "sim", "--size", "1024")
	if err == nil || !strings.Contains(err.Error(), "time budget of 1ms exhausted") || strings.Contains(err.Error(), "want") {
		t.Errorf("gocu demo with GOCU_SIM_TIMEOUT=1ms: %v\n%s", err, msg)
	}
}
