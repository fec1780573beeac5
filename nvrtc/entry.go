package nvrtc

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
)

// A cache entry is one file:
//
//	magic    [8]byte  "GOCUNVRT"
//	version  uint32   entryVersion
//	format   uint32   CUBIN or PTX
//	key      [32]byte the Key it answers
//	bodyLen  uint64   bytes after the header
//	bodySum  [32]byte SHA-256 of the body
//	body:
//	  uint32 count, then count × (uint32 len, name expression, uint32 len, lowered name)
//	  uint32 len, log
//	  uint64 len, code
//
// Integers are little-endian. Every byte is checked on read: the header
// field by field, the body by its SHA-256 and by parsing it to its exact end.
const (
	entryMagic   = "GOCUNVRT"
	entryVersion = 1
	headerSize   = 8 + 4 + 4 + 32 + 8 + 32
)

// entry is what the cache stores for one compilation.
type entry struct {
	key     Key
	format  Format
	code    []byte
	log     string
	lowered map[string]string
}

func encodeEntry(e *entry) []byte {
	var body bytes.Buffer
	exprs := sortedKeys(e.lowered)
	body.Write(binary.LittleEndian.AppendUint32(nil, uint32(len(exprs))))
	for _, x := range exprs {
		putString32(&body, x)
		putString32(&body, e.lowered[x])
	}
	putString32(&body, e.log)
	body.Write(binary.LittleEndian.AppendUint64(nil, uint64(len(e.code))))
	body.Write(e.code)

	out := make([]byte, 0, headerSize+body.Len())
	out = append(out, entryMagic...)
	out = binary.LittleEndian.AppendUint32(out, entryVersion)
	out = binary.LittleEndian.AppendUint32(out, uint32(e.format))
	out = append(out, e.key[:]...)
	out = binary.LittleEndian.AppendUint64(out, uint64(body.Len()))
	sum := sha256.Sum256(body.Bytes())
	out = append(out, sum[:]...)
	return append(out, body.Bytes()...)
}

func putString32(b *bytes.Buffer, s string) {
	b.Write(binary.LittleEndian.AppendUint32(nil, uint32(len(s))))
	b.WriteString(s)
}

// errCorrupt is what every verification failure wraps.
var errCorrupt = errors.New("corrupt cache entry")

func corrupt(format string, args ...any) error {
	return fmt.Errorf("%w: %s", errCorrupt, fmt.Sprintf(format, args...))
}

// decodeEntry verifies data as the entry for key and format and returns it.
// exprs are the name expressions the caller asked for: each must have its
// lowered name.
func decodeEntry(data []byte, key Key, format Format, exprs []string) (*entry, error) {
	if len(data) < headerSize {
		return nil, corrupt("%d bytes, shorter than the %d-byte header", len(data), headerSize)
	}
	if string(data[:8]) != entryMagic {
		return nil, corrupt("bad magic %q", data[:8])
	}
	if v := binary.LittleEndian.Uint32(data[8:]); v != entryVersion {
		return nil, corrupt("format version %d, want %d", v, entryVersion)
	}
	if f := Format(binary.LittleEndian.Uint32(data[12:])); f != format {
		return nil, corrupt("holds %v, want %v", f, format)
	}
	if !bytes.Equal(data[16:48], key[:]) {
		return nil, corrupt("stored key %x is not the requested %x", data[16:48], key[:])
	}
	body := data[headerSize:]
	if n := binary.LittleEndian.Uint64(data[48:]); n != uint64(len(body)) {
		return nil, corrupt("body is %d bytes, header says %d", len(body), n)
	}
	if sum := sha256.Sum256(body); !bytes.Equal(sum[:], data[56:88]) {
		return nil, corrupt("body checksum mismatch")
	}

	r := reader{b: body}
	e := &entry{key: key, format: format}
	n := r.u32()
	if n > uint32(len(body)) {
		return nil, corrupt("%d lowered names in %d bytes", n, len(body))
	}
	if n > 0 {
		e.lowered = make(map[string]string, n)
	}
	for i := uint32(0); i < n && r.err == nil; i++ {
		x := r.str32()
		e.lowered[x] = r.str32()
	}
	e.log = r.str32()
	codeLen := r.u64()
	e.code = r.bytes(codeLen)
	if r.err != nil {
		return nil, r.err
	}
	if len(r.b) != 0 {
		return nil, corrupt("%d bytes after the code", len(r.b))
	}
	if len(e.code) == 0 {
		return nil, corrupt("no code")
	}
	if len(e.lowered) != len(exprs) {
		return nil, corrupt("%d lowered names, want %d", len(e.lowered), len(exprs))
	}
	for _, x := range exprs {
		if e.lowered[x] == "" {
			return nil, corrupt("no lowered name for %q", x)
		}
	}
	return e, nil
}

type reader struct {
	b   []byte
	err error
}

func (r *reader) take(n uint64) []byte {
	if r.err != nil {
		return nil
	}
	if n > uint64(len(r.b)) {
		r.err = corrupt("field of %d bytes overruns the entry (%d left)", n, len(r.b))
		return nil
	}
	out := r.b[:n]
	r.b = r.b[n:]
	return out
}

func (r *reader) u32() uint32 {
	if b := r.take(4); b != nil {
		return binary.LittleEndian.Uint32(b)
	}
	return 0
}

func (r *reader) u64() uint64 {
	if b := r.take(8); b != nil {
		return binary.LittleEndian.Uint64(b)
	}
	return 0
}

func (r *reader) str32() string { return string(r.take(uint64(r.u32()))) }

// bytes returns the next n bytes without copying: the entry's buffer was
// read for this call alone.
func (r *reader) bytes(n uint64) []byte { return r.take(n) }
