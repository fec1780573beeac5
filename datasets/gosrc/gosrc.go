package gosrc

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"hash/fnv"
	"io"
	"io/fs"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// Header layout constants of the packed file (see the package doc).
const (
	Magic      = "GOSRCTOK"
	Version    = 1
	HeaderSize = 64
	Vocab      = 256
)

// ErrFormat is wrapped by every error about a malformed packed file.
var ErrFormat = errors.New("gosrc: malformed packed corpus")

// Corpus is a packed corpus: the training and validation tokens (bytes of
// Go source) and how many files each holds.
type Corpus struct {
	Train, Val           []byte
	TrainFiles, ValFiles int
	// ValFraction is the share of files the split sent to validation,
	// in parts per million.
	ValFraction uint32
}

// Options say how Pack splits the files.
type Options struct {
	// ValFraction is the share of files that go to validation, in
	// [0, 1]; 0 means the default, 0.05.
	ValFraction float64
}

func (o *Options) fraction() (uint32, error) {
	f := 0.05
	if o != nil && o.ValFraction != 0 {
		f = o.ValFraction
	}
	if !(f >= 0 && f <= 1) {
		return 0, fmt.Errorf("gosrc: validation fraction %v: want a number in [0, 1]", f)
	}
	return uint32(math.Round(f * 1e6)), nil
}

// IsVal reports whether the file at rel, a path relative to the packed
// folder with forward slashes, goes to validation when a share ppm (in
// parts per million) of the files does.
func IsVal(rel string, ppm uint32) bool {
	h := fnv.New64a()
	h.Write([]byte(rel))
	return h.Sum64()%1_000_000 < uint64(ppm)
}

// Pack reads every .go file under root and returns the corpus.
func Pack(root string, opts *Options) (*Corpus, error) {
	ppm, err := opts.fraction()
	if err != nil {
		return nil, err
	}
	st, err := os.Stat(root)
	if err != nil {
		return nil, fmt.Errorf("gosrc: %w", err)
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("gosrc: %s is not a folder", root)
	}
	var train, val bytes.Buffer
	c := &Corpus{ValFraction: ppm}
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.Type().IsRegular() || !strings.HasSuffix(d.Name(), ".go") {
			return nil
		}
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if IsVal(filepath.ToSlash(rel), ppm) {
			val.Write(b)
			c.ValFiles++
		} else {
			train.Write(b)
			c.TrainFiles++
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("gosrc: %w", err)
	}
	if c.TrainFiles == 0 {
		return nil, fmt.Errorf("gosrc: no .go files for training under %s", root)
	}
	c.Train, c.Val = train.Bytes(), val.Bytes()
	return c, nil
}

// GoSrc returns $(go env GOROOT)/src, the Go source tree, or an error that
// says to give the folder when there is no go command.
func GoSrc() (string, error) {
	out, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		return "", fmt.Errorf("gosrc: go env GOROOT: %w (without Go, give the folder of Go sources)", err)
	}
	root := strings.TrimSpace(string(out))
	if root == "" {
		return "", errors.New("gosrc: go env GOROOT is empty (give the folder of Go sources)")
	}
	return filepath.Join(root, "src"), nil
}

// header encodes c's header.
func (c *Corpus) header() []byte {
	h := make([]byte, HeaderSize)
	copy(h, Magic)
	le := binary.LittleEndian
	le.PutUint32(h[8:], Version)
	le.PutUint32(h[12:], HeaderSize)
	le.PutUint32(h[16:], Vocab)
	le.PutUint32(h[20:], 1)
	le.PutUint64(h[24:], uint64(len(c.Train)))
	le.PutUint64(h[32:], uint64(len(c.Val)))
	le.PutUint32(h[40:], uint32(c.TrainFiles))
	le.PutUint32(h[44:], uint32(c.ValFiles))
	crc := crc32.Update(crc32.ChecksumIEEE(c.Train), crc32.IEEETable, c.Val)
	le.PutUint32(h[48:], crc)
	le.PutUint32(h[52:], c.ValFraction)
	return h
}

// WriteTo writes c in the packed format.
func (c *Corpus) WriteTo(w io.Writer) (int64, error) {
	var n int64
	for _, b := range [][]byte{c.header(), c.Train, c.Val} {
		k, err := w.Write(b)
		n += int64(k)
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

// WriteFile writes c to path in the packed format, atomically (a
// temporary file renamed), gzip-compressed when path ends in ".gz" (Go
// source compresses about 5x).
func (c *Corpus) WriteFile(path string) error {
	f, err := os.CreateTemp(filepath.Dir(path), ".gosrc-*")
	if err != nil {
		return fmt.Errorf("gosrc: %w", err)
	}
	if strings.HasSuffix(path, ".gz") {
		z := gzip.NewWriter(f)
		_, err = c.WriteTo(z)
		if cerr := z.Close(); err == nil {
			err = cerr
		}
	} else {
		_, err = c.WriteTo(f)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(f.Name(), 0o644)
	}
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		os.Remove(f.Name())
		return fmt.Errorf("gosrc: %w", err)
	}
	return nil
}

// ReadFile reads a packed corpus, gzip-compressed or not (told by its
// first bytes); errors name the file.
func ReadFile(path string) (*Corpus, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var c *Corpus
	if isGzip(b) {
		c, err = Read(bytes.NewReader(b))
	} else {
		c, err = Parse(b)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return c, nil
}

func isGzip(b []byte) bool { return len(b) >= 2 && b[0] == 0x1f && b[1] == 0x8b }

// maxTokens bounds what a header may count per split: 2⁴⁷ bytes.
const maxTokens = 1 << 47

// Read reads a packed corpus from r, gzip-compressed or not (told by its
// first bytes). It allocates only what the stream holds, whatever the
// header claims.
func Read(r io.Reader) (*Corpus, error) {
	br := bufio.NewReader(r)
	var src io.Reader = br
	if head, _ := br.Peek(2); isGzip(head) {
		z, err := gzip.NewReader(br)
		if err != nil {
			return nil, fmt.Errorf("%w: bad gzip stream: %v", ErrFormat, err)
		}
		defer z.Close()
		src = z
	}
	bad := func(err error) error {
		return fmt.Errorf("%w: the stream is truncated or corrupt (%v)", ErrFormat, err)
	}
	h, err := io.ReadAll(io.LimitReader(src, HeaderSize))
	if err != nil {
		return nil, bad(err)
	}
	if len(h) < HeaderSize {
		return Parse(h) // says what is wrong with so short a file
	}
	if err := checkHeader(h); err != nil {
		return nil, err
	}
	nt, nv := binary.LittleEndian.Uint64(h[24:]), binary.LittleEndian.Uint64(h[32:])
	data, err := io.ReadAll(io.LimitReader(src, int64(nt+nv)+1))
	if err != nil {
		return nil, bad(err)
	}
	return Parse(append(h, data...))
}

// Parse decodes a packed corpus. The splits share b's memory.
func Parse(b []byte) (*Corpus, error) {
	if len(b) < 8 || string(b[:8]) != Magic {
		n := min(len(b), 8)
		return nil, fmt.Errorf("%w: starts with %q, not the magic %q (not a corpus made by gocu gpt prepare)", ErrFormat, b[:n], Magic)
	}
	if len(b) < HeaderSize {
		return nil, fmt.Errorf("%w: %d bytes, shorter than the %d-byte header (truncated)", ErrFormat, len(b), HeaderSize)
	}
	if err := checkHeader(b[:HeaderSize]); err != nil {
		return nil, err
	}
	le := binary.LittleEndian
	nt, nv := le.Uint64(b[24:]), le.Uint64(b[32:])
	have := uint64(len(b) - HeaderSize)
	if nt > have || nv > have-nt {
		return nil, fmt.Errorf("%w: the header counts %d training and %d validation tokens, the file holds %d (truncated)", ErrFormat, nt, nv, have)
	}
	if nt+nv != have {
		return nil, fmt.Errorf("%w: %d bytes after the %d tokens the header counts", ErrFormat, have-nt-nv, nt+nv)
	}
	c := &Corpus{
		Train:       b[HeaderSize : HeaderSize+nt : HeaderSize+nt],
		Val:         b[HeaderSize+nt:],
		TrainFiles:  int(le.Uint32(b[40:])),
		ValFiles:    int(le.Uint32(b[44:])),
		ValFraction: le.Uint32(b[52:]),
	}
	if (c.TrainFiles == 0 && nt > 0) || (c.ValFiles == 0 && nv > 0) {
		return nil, fmt.Errorf("%w: %d training files of %d tokens, %d validation files of %d tokens", ErrFormat, c.TrainFiles, nt, c.ValFiles, nv)
	}
	want := le.Uint32(b[48:])
	if got := crc32.ChecksumIEEE(b[HeaderSize:]); got != want {
		return nil, fmt.Errorf("%w: checksum %08x, the header says %08x (corrupt)", ErrFormat, got, want)
	}
	return c, nil
}

// checkHeader checks what a header says alone: magic, version, sizes,
// the counts' bounds, the validation fraction, the reserved bytes.
func checkHeader(b []byte) error {
	if string(b[:8]) != Magic {
		return fmt.Errorf("%w: starts with %q, not the magic %q (not a corpus made by gocu gpt prepare)", ErrFormat, b[:8], Magic)
	}
	le := binary.LittleEndian
	if v := le.Uint32(b[8:]); v != Version {
		return fmt.Errorf("%w: version %d, this reader knows version %d", ErrFormat, v, Version)
	}
	if h := le.Uint32(b[12:]); h != HeaderSize {
		return fmt.Errorf("%w: header size %d, want %d", ErrFormat, h, HeaderSize)
	}
	if v := le.Uint32(b[16:]); v != Vocab {
		return fmt.Errorf("%w: vocabulary %d, want %d (byte tokens)", ErrFormat, v, Vocab)
	}
	if s := le.Uint32(b[20:]); s != 1 {
		return fmt.Errorf("%w: %d bytes per token, want 1", ErrFormat, s)
	}
	if nt, nv := le.Uint64(b[24:]), le.Uint64(b[32:]); nt > maxTokens || nv > maxTokens {
		return fmt.Errorf("%w: the header counts %d training and %d validation tokens (truncated or corrupt)", ErrFormat, nt, nv)
	}
	if f := le.Uint32(b[52:]); f > 1_000_000 {
		return fmt.Errorf("%w: validation fraction %d parts per million, more than all", ErrFormat, f)
	}
	for i, z := range b[56:64] {
		if z != 0 {
			return fmt.Errorf("%w: reserved header byte %d is %d, want 0", ErrFormat, 56+i, z)
		}
	}
	return nil
}

// Split names a part of the corpus.
type Split int

// The splits.
const (
	Train Split = iota
	Val
)

func (s Split) String() string {
	if s == Val {
		return "validation"
	}
	return "training"
}

// Tokens returns the split's tokens.
func (c *Corpus) Tokens(s Split) []byte {
	if s == Val {
		return c.Val
	}
	return c.Train
}

// Sampler draws batches of random windows of a split.
type Sampler struct {
	data         []byte
	batch, width int
	src          *rand.PCG
	rng          *rand.Rand
}

// Sampler returns a Sampler of batches of batch windows of context+1
// tokens from split s, drawn by a generator seeded with seed.
func (c *Corpus) Sampler(s Split, batch, context int, seed uint64) (*Sampler, error) {
	if batch < 1 || context < 1 {
		return nil, fmt.Errorf("gosrc: batch %d of windows of %d tokens: want both >= 1", batch, context)
	}
	d := c.Tokens(s)
	if len(d) < context+1 {
		return nil, fmt.Errorf("gosrc: the %s split has %d tokens, fewer than a window of %d", s, len(d), context+1)
	}
	src := rand.NewPCG(seed, 0x676f737263)
	return &Sampler{data: d, batch: batch, width: context + 1, src: src, rng: rand.New(src)}, nil
}

// State returns the generator's state, from which SetState continues the
// same sequence of batches (a resumed training run).
func (s *Sampler) State() ([]byte, error) { return s.src.MarshalBinary() }

// SetState restores a state that State returned.
func (s *Sampler) SetState(b []byte) error {
	if err := s.src.UnmarshalBinary(b); err != nil {
		return fmt.Errorf("gosrc: sampler state: %w", err)
	}
	return nil
}

// Next returns the next batch: batch rows of context+1 tokens, row-major.
func (s *Sampler) Next() []byte {
	out := make([]byte, s.batch*s.width)
	s.fill(out)
	return out
}

// Fill writes the next batch into buf, which must hold exactly
// batch·(context+1) tokens.
func (s *Sampler) Fill(buf []byte) error {
	if len(buf) != s.batch*s.width {
		return fmt.Errorf("gosrc: Fill: buffer of %d tokens for %d windows of %d", len(buf), s.batch, s.width)
	}
	s.fill(buf)
	return nil
}

func (s *Sampler) fill(buf []byte) {
	n := len(s.data) - s.width + 1 // window starts
	for i := range s.batch {
		o := s.rng.IntN(n)
		copy(buf[i*s.width:(i+1)*s.width], s.data[o:o+s.width])
	}
}
