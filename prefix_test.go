package gocu_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/gocu-dev/gocu"
)

// TestErrorPrefixOnce checks that an error wrapping one of the package's
// sentinels says "gocu: " once.
func TestErrorPrefixOnce(t *testing.T) {
	dev, err := gocu.Open("cpu")
	if err != nil {
		t.Fatal(err)
	}
	b, err := gocu.FromSlice(dev, []float32{1, 2, 3})
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Free(); err != nil {
		t.Fatal(err)
	}
	_, err = b.ToSlice()
	if want := "gocu: ToSlice: buffer used after Free"; err == nil || err.Error() != want || !errors.Is(err, gocu.ErrFreed) {
		t.Errorf("ToSlice after Free: %v, want %q matching ErrFreed", err, want)
	}
	err = b.Free()
	if err == nil || strings.Count(err.Error(), "gocu: ") != 1 || !errors.Is(err, gocu.ErrFreed) {
		t.Errorf("a second Free: %v", err)
	}
}
