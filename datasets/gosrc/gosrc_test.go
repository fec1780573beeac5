package gosrc

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// tree writes files (path -> content) under a new folder.
func tree(t testing.TB, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	for p, s := range files {
		full := filepath.Join(root, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

var sample = map[string]string{
	"a.go":         "package a\n",
	"b/b.go":       "package b\n\nfunc B() {}\n",
	"b/b_test.go":  "package b\n// test\n",
	"b/notes.txt":  "not Go\n",
	"c/d/e.go":     "package e\nvar E = 1\n",
	"c/z.go":       "package c\n",
	"c/d/readme":   "x",
	"f/g/h/i/j.go": "package j\nconst J = \"ü\"\n",
}

func TestPackSplitsByPathHash(t *testing.T) {
	root := tree(t, sample)
	c, err := Pack(root, &Options{ValFraction: 0.5})
	if err != nil {
		t.Fatal(err)
	}
	// Expected: the .go files in lexical walk order, split by IsVal.
	order := []string{"a.go", "b/b.go", "b/b_test.go", "c/d/e.go", "c/z.go", "f/g/h/i/j.go"}
	var train, val []byte
	nt, nv := 0, 0
	for _, p := range order {
		if IsVal(p, 500_000) {
			val = append(val, sample[p]...)
			nv++
		} else {
			train = append(train, sample[p]...)
			nt++
		}
	}
	if nt == 0 || nv == 0 {
		t.Fatalf("the fixture should fill both splits: %d training, %d validation files", nt, nv)
	}
	if !bytes.Equal(c.Train, train) || !bytes.Equal(c.Val, val) || c.TrainFiles != nt || c.ValFiles != nv {
		t.Fatalf("Pack: train %q (%d files), val %q (%d files); want %q (%d), %q (%d)", c.Train, c.TrainFiles, c.Val, c.ValFiles, train, nt, val, nv)
	}
	// The same folder packs to the same bytes.
	c2, err := Pack(root, &Options{ValFraction: 0.5})
	if err != nil {
		t.Fatal(err)
	}
	var b1, b2 bytes.Buffer
	c.WriteTo(&b1)
	c2.WriteTo(&b2)
	if !bytes.Equal(b1.Bytes(), b2.Bytes()) {
		t.Fatal("two packs of one folder differ")
	}
}

func TestIsValFraction(t *testing.T) {
	n, in := 20000, 0
	for i := range n {
		if IsVal("pkg/file"+string(rune('a'+i%26))+strings.Repeat("x", i%7)+itoa(i)+".go", 50_000) {
			in++
		}
	}
	if f := float64(in) / float64(n); f < 0.04 || f > 0.06 {
		t.Fatalf("IsVal at 5%%: %.4f of the paths", f)
	}
	if IsVal("x.go", 0) || !IsVal("x.go", 1_000_000) {
		t.Fatal("IsVal at 0 and 100%")
	}
}

func itoa(i int) string {
	var b []byte
	for {
		b = append([]byte{byte('0' + i%10)}, b...)
		i /= 10
		if i == 0 {
			return string(b)
		}
	}
}

func packed(t testing.TB) []byte {
	t.Helper()
	c, err := Pack(tree(t, sample), &Options{ValFraction: 0.5})
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if _, err := c.WriteTo(&b); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func TestRoundTrip(t *testing.T) {
	b := packed(t)
	path := filepath.Join(t.TempDir(), "go.tok")
	c, err := Parse(b)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.WriteFile(path); err != nil {
		t.Fatal(err)
	}
	d, err := ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(d.Train, c.Train) || !bytes.Equal(d.Val, c.Val) || d.TrainFiles != c.TrainFiles || d.ValFiles != c.ValFiles || d.ValFraction != 500_000 {
		t.Fatalf("round trip: %+v, want %+v", d, c)
	}
	// The documented layout, as NumPy reads it.
	le := binary.LittleEndian
	nt, nv := le.Uint64(b[24:]), le.Uint64(b[32:])
	if string(b[:8]) != "GOSRCTOK" || le.Uint32(b[12:]) != 64 || !bytes.Equal(b[64:64+nt], c.Train) || !bytes.Equal(b[64+nt:64+nt+nv], c.Val) {
		t.Fatal("the file does not follow the documented layout")
	}
}

func TestParseErrors(t *testing.T) {
	good := packed(t)
	mod := func(f func(b []byte) []byte) []byte { return f(append([]byte(nil), good...)) }
	le := binary.LittleEndian
	for _, c := range []struct {
		name, want string
		b          []byte
	}{
		{"empty", "not a corpus", nil},
		{"other file", "not a corpus", []byte("\x89PNG\r\n\x1a\n and more bytes")},
		{"short header", "shorter than the 64-byte header", good[:40]},
		{"version", "version 2", mod(func(b []byte) []byte { le.PutUint32(b[8:], 2); return b })},
		{"header size", "header size 32", mod(func(b []byte) []byte { le.PutUint32(b[12:], 32); return b })},
		{"vocabulary", "vocabulary 512", mod(func(b []byte) []byte { le.PutUint32(b[16:], 512); return b })},
		{"token size", "2 bytes per token", mod(func(b []byte) []byte { le.PutUint32(b[20:], 2); return b })},
		{"reserved", "reserved header byte 60", mod(func(b []byte) []byte { b[60] = 1; return b })},
		{"truncated", "truncated", good[:len(good)-3]},
		{"huge count", "truncated", mod(func(b []byte) []byte { le.PutUint64(b[24:], 1<<63); return b })},
		{"trailing", "bytes after", append(append([]byte(nil), good...), 'x')},
		{"corrupt", "corrupt", mod(func(b []byte) []byte { b[70] ^= 0x20; return b })},
		{"fraction", "more than all", mod(func(b []byte) []byte { le.PutUint32(b[52:], 2_000_000); return b })},
		{"files", "0 training files", mod(func(b []byte) []byte { le.PutUint32(b[40:], 0); return b })},
	} {
		_, err := Parse(c.b)
		if !errors.Is(err, ErrFormat) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want ErrFormat saying %q", c.name, err, c.want)
		}
	}
	if _, err := ReadFile(filepath.Join(t.TempDir(), "missing.tok")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
}

func TestPackErrors(t *testing.T) {
	if _, err := Pack(filepath.Join(t.TempDir(), "none"), nil); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing folder: %v", err)
	}
	if _, err := Pack(tree(t, map[string]string{"a.txt": "x"}), nil); err == nil || !strings.Contains(err.Error(), "no .go files") {
		t.Errorf("no Go files: %v", err)
	}
	if _, err := Pack(t.TempDir(), &Options{ValFraction: 1.5}); err == nil || !strings.Contains(err.Error(), "fraction 1.5") {
		t.Errorf("fraction 1.5: %v", err)
	}
	f := filepath.Join(t.TempDir(), "file")
	os.WriteFile(f, nil, 0o644)
	if _, err := Pack(f, nil); err == nil || !strings.Contains(err.Error(), "not a folder") {
		t.Errorf("a file as root: %v", err)
	}
}

func TestSampler(t *testing.T) {
	c := &Corpus{Train: []byte("0123456789abcdefghij"), Val: []byte("short"), TrainFiles: 1, ValFiles: 1}
	s, err := c.Sampler(Train, 3, 4, 7)
	if err != nil {
		t.Fatal(err)
	}
	s2, _ := c.Sampler(Train, 3, 4, 7)
	s3, _ := c.Sampler(Train, 3, 4, 8)
	differ := false
	for range 20 {
		b, b2, b3 := s.Next(), s2.Next(), s3.Next()
		if len(b) != 15 || !bytes.Equal(b, b2) {
			t.Fatalf("one seed, two batches: %q and %q", b, b2)
		}
		differ = differ || !bytes.Equal(b, b3)
		for i := range 3 {
			w := b[i*5 : (i+1)*5]
			if !bytes.Contains(c.Train, w) {
				t.Fatalf("window %q is not a substring of the split", w)
			}
		}
	}
	if !differ {
		t.Error("seeds 7 and 8 draw the same batches")
	}
	// Every window start is drawn, the last included.
	seen := map[byte]bool{}
	for range 200 {
		b := s.Next()
		for i := range 3 {
			seen[b[i*5]] = true
		}
	}
	if len(seen) != 16 {
		t.Errorf("%d window starts drawn, want 16", len(seen))
	}
	// A saved state continues the same batches.
	st, err := s.State()
	if err != nil {
		t.Fatal(err)
	}
	want := s.Next()
	if err := s3.SetState(st); err != nil {
		t.Fatal(err)
	}
	if got := s3.Next(); !bytes.Equal(got, want) {
		t.Errorf("after SetState: %q, want %q", got, want)
	}
	if err := s3.SetState([]byte("junk")); err == nil || !strings.Contains(err.Error(), "sampler state") {
		t.Errorf("SetState of junk: %v", err)
	}
	if err := s.Fill(make([]byte, 14)); err == nil {
		t.Error("Fill of a short buffer: no error")
	}
	if _, err := c.Sampler(Val, 1, 5, 1); err == nil || !strings.Contains(err.Error(), "validation split has 5 tokens") {
		t.Errorf("windows longer than the split: %v", err)
	}
	if _, err := c.Sampler(Train, 0, 5, 1); err == nil {
		t.Error("batch 0: no error")
	}
}

func FuzzParse(f *testing.F) {
	good := packed(f)
	f.Add(good)
	f.Add(good[:64])
	f.Add(good[:len(good)-1])
	f.Add([]byte(Magic))
	f.Fuzz(func(t *testing.T, b []byte) {
		c, err := Parse(b)
		if err != nil {
			if !errors.Is(err, ErrFormat) {
				t.Fatalf("error without ErrFormat: %v", err)
			}
			return
		}
		// What parses writes back to the same bytes.
		var out bytes.Buffer
		c.WriteTo(&out)
		if !bytes.Equal(out.Bytes(), b) {
			t.Fatalf("parsed and written again: %d bytes differ from the %d read", out.Len(), len(b))
		}
	})
}

func TestGzip(t *testing.T) {
	b := packed(t)
	c, err := Parse(b)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	gz := filepath.Join(dir, "go.tok.gz")
	if err := c.WriteFile(gz); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(gz)
	if err != nil || !isGzip(raw) {
		t.Fatalf("%s is not gzip-compressed (%v)", gz, err)
	}
	d, err := ReadFile(gz)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(d.Train, c.Train) || !bytes.Equal(d.Val, c.Val) || d.TrainFiles != c.TrainFiles {
		t.Fatal("the gzip round trip changed the corpus")
	}
	// Read of the plain stream agrees with Parse.
	e, err := Read(bytes.NewReader(b))
	if err != nil || !bytes.Equal(e.Train, c.Train) || !bytes.Equal(e.Val, c.Val) {
		t.Fatalf("Read of the plain file: %v", err)
	}
	for _, f := range []struct {
		name, want string
		b          []byte
	}{
		{"truncated gzip", "truncated or corrupt", raw[:len(raw)-10]},
		{"gzip header only", "truncated or corrupt", raw[:10]},
		{"corrupt gzip", "", append(append(append([]byte(nil), raw[:30]...), 0xff, 0xff, 0xff), raw[33:]...)},
		{"bad gzip header", "bad gzip stream", []byte{0x1f, 0x8b, 0, 0}},
	} {
		p := filepath.Join(dir, "bad.gz")
		os.WriteFile(p, f.b, 0o644)
		_, err := ReadFile(p)
		if !errors.Is(err, ErrFormat) || !strings.Contains(err.Error(), f.want) {
			t.Errorf("%s: %v, want ErrFormat saying %q", f.name, err, f.want)
		}
	}
}

func FuzzRead(f *testing.F) {
	good := packed(f)
	var z bytes.Buffer
	w := gzip.NewWriter(&z)
	w.Write(good)
	w.Close()
	f.Add(good)
	f.Add(z.Bytes())
	f.Add(z.Bytes()[:20])
	f.Fuzz(func(t *testing.T, b []byte) {
		c, err := Read(bytes.NewReader(b))
		if err != nil {
			if !errors.Is(err, ErrFormat) {
				t.Fatalf("error without ErrFormat: %v", err)
			}
			return
		}
		if !isGzip(b) {
			// A plain stream reads as Parse parses it.
			d, err := Parse(b)
			if err != nil || !bytes.Equal(c.Train, d.Train) || !bytes.Equal(c.Val, d.Val) {
				t.Fatalf("Read and Parse disagree: %v", err)
			}
		}
	})
}
