package array

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/gocu-dev/gocu/array/internal/cpu"
)

// forgedNPY is a 2x3 float32 .npy file whose header claims the shape.
func forgedNPY(t testing.TB, shape string) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := CPU().Arange(Float32, 6).Reshape(2, 3).WriteNPY(&buf); err != nil {
		t.Fatal(err)
	}
	data := buf.Bytes()[buf.Len()-24:]
	return []byte(npyHeader("{'descr': '<f4', 'fortran_order': False, 'shape': "+shape+", }") + string(data))
}

// stream hides the reader's length, as a pipe or a network connection.
type stream struct{ io.Reader }

// A 150-byte file whose header claims a huge shape fails cleanly, as a
// file, as bytes and as a stream, with an error naming the shape and the
// bytes it promises, and without allocating from the header: before the
// fix (100000, 100000) was a fatal out-of-memory and (9999999999,
// 99999999) a makeslice panic.
func TestNPYForgedHeaders(t *testing.T) {
	dir := t.TempDir()
	// A 37.25 GiB promise from a stream fails at the end of the data where
	// the machine could hold it, and before reading where it could not.
	big, bigKind := []string{"promises 40000000000 bytes (37.25 GiB), the input ended after 24"}, ErrValue
	if lim := cpu.MemoryLimit(); lim > 0 && lim < 40000000000 {
		big, bigKind = []string{"cannot allocate shape (100000,100000) of float32 on the host: 40000000000 bytes (37.25 GiB)"}, ErrOutOfMemory
	}
	cases := []struct {
		shape    string
		file     []string // the error from a file or bytes
		fileKind error
		strm     []string // from a stream of unknown length
		strmKind error
	}{
		{"(100000, 100000)",
			[]string{"the header's shape (100000,100000) of float32 promises 40000000000 bytes (37.25 GiB), but 24 follow the header"}, ErrValue,
			big, bigKind},
		{"(10000, 10000)",
			[]string{"promises 400000000 bytes (381.47 MiB), but 24 follow the header"}, ErrValue,
			[]string{"promises 400000000 bytes (381.47 MiB), the input ended after 24"}, ErrValue},
		{"(9999999999, 99999999)",
			[]string{"promises 3999999959600000004 bytes (3.47 EiB), but 24 follow"}, ErrValue,
			[]string{"cannot allocate shape (9999999999,99999999) of float32 on the host"}, ErrOutOfMemory},
		{"(4611686018427387904, 4)",
			[]string{"array is too big: shape (4611686018427387904,4) of float32"}, ErrValue,
			[]string{"array is too big"}, ErrValue},
		{"(99999999999999999999,)", []string{"bad shape"}, ErrValue, []string{"bad shape"}, ErrValue},
		{"(2, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1)",
			[]string{"more than 64 dimensions"}, ErrValue, []string{"more than 64 dimensions"}, ErrValue},
		{"(7,)", []string{"promises 28 bytes (28 B), but 24 follow"}, ErrValue, []string{"the input ended after 24"}, ErrValue},
	}
	for _, c := range cases {
		b := forgedNPY(t, c.shape)
		path := filepath.Join(dir, "forged.npy")
		if err := os.WriteFile(path, b, 0o600); err != nil {
			t.Fatal(err)
		}
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		_, errFile := LoadNPY(path)
		_, errBytes := CPU().ReadNPY(bytes.NewReader(b))
		_, errStream := CPU().ReadNPY(stream{bytes.NewReader(b)})
		runtime.ReadMemStats(&after)
		for _, r := range []struct {
			name string
			err  error
			kind error
			msg  []string
		}{{"file", errFile, c.fileKind, c.file}, {"bytes", errBytes, c.fileKind, c.file}, {"stream", errStream, c.strmKind, c.strm}} {
			if !errors.Is(r.err, r.kind) {
				t.Errorf("%s, %s: %v, want %v", c.shape, r.name, r.err, r.kind)
				continue
			}
			for _, m := range r.msg {
				if !strings.Contains(r.err.Error(), m) {
					t.Errorf("%s, %s: %q lacks %q", c.shape, r.name, r.err, m)
				}
			}
		}
		if !strings.HasPrefix(errFile.Error(), "array: LoadNPY: ") || !strings.HasPrefix(errStream.Error(), "array: ReadNPY: ") {
			t.Errorf("%s: errors name the wrong operation: %v / %v", c.shape, errFile, errStream)
		}
		// Nothing was allocated from the header: a file's 1 MiB read buffer
		// and a 4 MiB chunk at most.
		if got := after.TotalAlloc - before.TotalAlloc; got > 8<<20 {
			t.Errorf("%s: reading allocated %d bytes", c.shape, got)
		}
	}
	// The reader still works, and a stream of the right length reads.
	a, err := CPU().ReadNPY(stream{bytes.NewReader(forgedNPY(t, "(3, 2)"))})
	if err != nil {
		t.Fatal(err)
	}
	if v, err := a.Float32s(); err != nil || len(v) != 6 || v[5] != 5 {
		t.Errorf("a good stream: %v, %v", v, err)
	}
}

// Data larger than one read chunk arrives whole, from a file, bytes and a
// stream, in both byte orders and for bool.
func TestNPYChunks(t *testing.T) {
	d := CPU()
	for _, dt := range []DType{Bool, Float64} {
		n := npyChunk/dt.Size()*2 + 3
		x := d.Arange(Float64, float64(n)).Mod(251).AsType(dt)
		var buf bytes.Buffer
		if err := x.WriteNPY(&buf); err != nil {
			t.Fatal(err)
		}
		want, _ := x.Float64s()
		for name, r := range map[string]io.Reader{"bytes": bytes.NewReader(buf.Bytes()), "stream": stream{bytes.NewReader(buf.Bytes())}} {
			y, err := d.ReadNPY(r)
			if err != nil {
				t.Fatalf("%v %s: %v", dt, name, err)
			}
			got, _ := y.Float64s()
			if len(got) != n || got[n-1] != want[n-1] || got[npyChunk/dt.Size()] != want[npyChunk/dt.Size()] {
				t.Errorf("%v %s: wrong values", dt, name)
			}
		}
	}
}
