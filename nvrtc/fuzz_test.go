package nvrtc

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"testing"
)

// FuzzDecodeEntry feeds disk-cache entries to the reader that verifies
// them: whole files as they may be found on disk, and bodies under a valid
// header and checksum (which random bytes never reach otherwise). It must
// never panic or allocate from a length field, every failure must wrap
// errCorrupt, and an accepted entry must encode back to an entry that
// decodes to the same contents. The corpus is testdata/fuzz/FuzzDecodeEntry.
func FuzzDecodeEntry(f *testing.F) {
	key := Key{1, 2, 3}
	good := encodeEntry(&entry{key: key, format: CUBIN, code: []byte("\x7fELF code"), log: "ok",
		lowered: map[string]string{"K": "_Z1Kv", "&V": "_Z1Vv"}})
	f.Add(good, false)
	f.Add(good[headerSize:], true)
	// Huge counts and lengths.
	u32, u64 := binary.LittleEndian.AppendUint32, binary.LittleEndian.AppendUint64
	f.Add(u32(nil, 0xffffffff), true)                                            // lowered names
	f.Add(u64(u32(u32(nil, 0), 0), 1<<63), true)                                 // code length
	f.Add(u64(u32(u32(u32(nil, 0), 0xfffffff0), 0), 8), true)                    // log length
	f.Add(append(u64(u32(u32(nil, 0), 0), 0xffffffffffffffff), "code"...), true) // code length
	hdr := append([]byte(nil), good[:headerSize]...)
	binary.LittleEndian.PutUint64(hdr[48:], 1<<62) // body length
	f.Add(hdr, false)
	f.Fuzz(func(t *testing.T, data []byte, wrap bool) {
		if wrap { // a valid header and checksum around data as the body
			sum := sha256.Sum256(data)
			h := append([]byte(entryMagic), u32(nil, entryVersion)...)
			h = u32(h, uint32(CUBIN))
			h = append(h, key[:]...)
			h = u64(h, uint64(len(data)))
			data = append(append(h, sum[:]...), data...)
		}
		for _, exprs := range [][]string{nil, {"K", "&V"}} {
			e, err := decodeEntry(data, key, CUBIN, exprs)
			if err != nil {
				if !errors.Is(err, errCorrupt) {
					t.Fatalf("error %v does not wrap errCorrupt", err)
				}
				continue
			}
			back, err := decodeEntry(encodeEntry(e), key, CUBIN, exprs)
			if err != nil {
				t.Fatalf("an accepted entry does not survive encoding: %v", err)
			}
			if !bytes.Equal(back.code, e.code) || back.log != e.log || len(back.lowered) != len(e.lowered) {
				t.Fatalf("entry changed through encoding: %+v / %+v", e, back)
			}
		}
	})
}
