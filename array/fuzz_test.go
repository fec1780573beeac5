package array

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// FuzzReadNPY feeds arbitrary bytes to the .npy reader, from a reader of
// known length and from a stream. Neither may panic or allocate from the
// header alone (huge shapes and lengths are in the seeds); both must agree;
// every error is an *Error; and what reads must write and read back the same.
// The corpus is testdata/fuzz/FuzzReadNPY.
func FuzzReadNPY(f *testing.F) {
	for _, name := range []string{"float32_2x3x4_f.npy", "bool_3x4_c.npy", "int64_3x4_v2.npy", "float64_scalar_c.npy", "uint8_0_c.npy",
		"complex64_2x3.npy", "complex128_fortran_3x2.npy", "int16_3x4_be.npy", "uint16_2x3x4_f.npy", "uint32_3x4_v2.npy",
		"uint64_3x4_c.npy"} {
		if b, err := os.ReadFile(filepath.Join("testdata/npy", name)); err == nil {
			f.Add(b)
		}
	}
	for _, shape := range []string{"(100000, 100000)", "(9999999999, 99999999)", "(4611686018427387904, 4)",
		"(1099511627776, 1099511627776)", "(0, 1099511627776, 1099511627776)", "(-1,)", "(2, 3)", "()"} {
		f.Add(forgedNPY(f, shape))
	}
	f.Add([]byte("\x93NUMPY\x02\x00\xff\xff\xff\xff"))
	f.Add([]byte(npyHeader("{'descr': [('a', '<f4', (2,)), ('b', '|u1')], 'fortran_order': False, 'shape': (2,), }") + "\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00"))
	f.Add([]byte("\x93NUMPY\x03\x00\x00\x00\x00\x01{'descr': '<f8', 'fortran_order': True, 'shape': (3, 2), }"))
	d := CPU()
	f.Fuzz(func(t *testing.T, b []byte) {
		a, err := d.ReadNPY(bytes.NewReader(b))
		s, serr := d.ReadNPY(stream{bytes.NewReader(b)})
		if (err == nil) != (serr == nil) {
			t.Fatalf("bytes and stream disagree: %v / %v", err, serr)
		}
		if err != nil {
			var ae *Error
			if !errors.As(err, &ae) || !errors.As(serr, &ae) {
				t.Fatalf("not an *Error: %v / %v", err, serr)
			}
			return
		}
		defer a.Close()
		defer s.Close()
		var out bytes.Buffer
		if err := a.WriteNPY(&out); err != nil {
			t.Fatalf("WriteNPY of what was read: %v", err)
		}
		var out2 bytes.Buffer
		if err := s.WriteNPY(&out2); err != nil || !bytes.Equal(out.Bytes(), out2.Bytes()) {
			t.Fatalf("stream read differs from bytes read (%v)", err)
		}
		c, err := d.ReadNPY(bytes.NewReader(out.Bytes()))
		if err != nil {
			t.Fatalf("reading back what was written: %v", err)
		}
		defer c.Close()
		var out3 bytes.Buffer
		if err := c.WriteNPY(&out3); err != nil || !bytes.Equal(out.Bytes(), out3.Bytes()) {
			t.Fatalf("round trip changed the array (%v)", err)
		}
	})
}
