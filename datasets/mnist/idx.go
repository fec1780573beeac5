package mnist

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// ErrFormat is wrapped by every error about a malformed IDX file.
var ErrFormat = errors.New("mnist: malformed IDX file")

// The IDX magic numbers of MNIST's files: two zero bytes, the element type
// (0x08, unsigned bytes) and the number of dimensions.
const (
	MagicLabels = 0x00000801
	MagicImages = 0x00000803
)

// MaxElements bounds what an IDX header may declare (MNIST's training
// images are 47,040,000 bytes).
const MaxElements = 1 << 30

// ReadIDX reads an IDX file of unsigned bytes (gzip-compressed or not,
// told by its first bytes): its dimensions and its data, row-major. It
// checks the magic number (two zero bytes, type 0x08, 1 to 8 dimensions),
// that the data has exactly the size the dimensions give, and that the
// file ends there; it allocates only what the file holds.
func ReadIDX(r io.Reader) (dims []int, data []byte, err error) {
	br := bufio.NewReader(r)
	var zt *errTrack
	if head, _ := br.Peek(2); len(head) == 2 && head[0] == 0x1f && head[1] == 0x8b {
		z, err := gzip.NewReader(br)
		if err != nil {
			return nil, nil, fmt.Errorf("%w: bad gzip stream: %v", ErrFormat, err)
		}
		defer z.Close()
		zt = &errTrack{r: z}
		br = bufio.NewReader(zt)
	}
	defer func() {
		// A truncated or corrupt gzip stream is the cause, not the IDX
		// content that it cut short.
		if err != nil && zt != nil && zt.err != nil {
			dims, data, err = nil, nil, fmt.Errorf("%w: the gzip stream is truncated or corrupt (%w)", ErrFormat, zt.err)
		}
	}()
	var magic [4]byte
	if k, err := io.ReadFull(br, magic[:]); err != nil {
		return nil, nil, fmt.Errorf("%w: %d bytes, shorter than the 4-byte magic number", ErrFormat, k)
	}
	if magic[0] != 0 || magic[1] != 0 {
		return nil, nil, fmt.Errorf("%w: magic number %#08x does not start with two zero bytes", ErrFormat, binary.BigEndian.Uint32(magic[:]))
	}
	if magic[2] != 0x08 {
		return nil, nil, fmt.Errorf("%w: element type %#02x, want 0x08 (unsigned bytes)", ErrFormat, magic[2])
	}
	nd := int(magic[3])
	if nd < 1 || nd > 8 {
		return nil, nil, fmt.Errorf("%w: %d dimensions", ErrFormat, nd)
	}
	raw := make([]byte, 4*nd)
	if k, err := io.ReadFull(br, raw); err != nil {
		return nil, nil, fmt.Errorf("%w: truncated header: %d of %d bytes of dimensions", ErrFormat, k, len(raw))
	}
	n := 1
	for i := range nd {
		d := binary.BigEndian.Uint32(raw[4*i:])
		if d > MaxElements || n > MaxElements/max(int(d), 1) {
			return nil, nil, fmt.Errorf("%w: dimensions %v exceed %d elements", ErrFormat, dimsOf(raw), MaxElements)
		}
		n *= int(d)
		dims = append(dims, int(d))
	}
	var buf bytes.Buffer
	k, err := io.Copy(&buf, io.LimitReader(br, int64(n)+1))
	if err != nil {
		return nil, nil, fmt.Errorf("%w: reading the data: %v", ErrFormat, err)
	}
	switch {
	case k < int64(n):
		return nil, nil, fmt.Errorf("%w: truncated data: %d of the %d bytes that dimensions %v give", ErrFormat, k, n, dims)
	case k > int64(n):
		return nil, nil, fmt.Errorf("%w: more data than the %d bytes that dimensions %v give", ErrFormat, n, dims)
	}
	return dims, buf.Bytes(), nil
}

func dimsOf(raw []byte) []uint32 {
	var d []uint32
	for i := 0; i+4 <= len(raw); i += 4 {
		d = append(d, binary.BigEndian.Uint32(raw[i:]))
	}
	return d
}

// errTrack remembers the first error other than io.EOF of the reader r.
type errTrack struct {
	r   io.Reader
	err error
}

func (t *errTrack) Read(p []byte) (int, error) {
	n, err := t.r.Read(p)
	if err != nil && err != io.EOF && t.err == nil {
		t.err = err
	}
	return n, err
}
