package gocu

import (
	"encoding/binary"
	"os"
	"testing"
)

// TestImageArch reads the architecture of a CUBIN that NVRTC built for
// sm_90, and of its copy rewritten in the layout of ELF ABI version 8.
func TestImageArch(t *testing.T) {
	cubin, err := os.ReadFile("cmd/gocu/testdata/scale_sm90.cubin")
	if err != nil {
		t.Fatal(err)
	}
	if a := imageArch(cubin); a != "sm_90" {
		t.Errorf("imageArch = %q, want sm_90", a)
	}
	v8 := append([]byte(nil), cubin...)
	v8[8] = 8
	binary.LittleEndian.PutUint32(v8[0x30:], 100<<8|0x2)
	if a := imageArch(v8); a != "sm_100" {
		t.Errorf("imageArch of ABI version 8 = %q, want sm_100", a)
	}
	for _, b := range [][]byte{nil, []byte("\x7fELF"), []byte(".version 8.0\n.target sm_90\n"), fatbinMagic} {
		if a := imageArch(b); a != "" {
			t.Errorf("imageArch(%q) = %q, want none", b, a)
		}
	}
}

func FuzzImageArch(f *testing.F) {
	if cubin, err := os.ReadFile("cmd/gocu/testdata/scale_sm90.cubin"); err == nil {
		f.Add(cubin[:0x40])
	}
	f.Add([]byte("\x7fELF\x02\x01"))
	f.Fuzz(func(t *testing.T, b []byte) {
		if a := imageArch(b); a != "" && (len(a) < 5 || a[:3] != "sm_") {
			t.Errorf("imageArch = %q", a)
		}
	})
}
