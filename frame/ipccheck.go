package frame

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// arrow-go's IPC reader trusts the lengths in a message: a corrupt vector
// length or body length makes it allocate that much, which ends the
// program rather than failing. checkIPCStream walks the stream's framing
// and the flatbuffer vectors arrow-go sizes allocations by, and refuses
// lengths that the data cannot hold.

var errFB = errors.New("malformed flatbuffer")

type fbuf []byte

func (b fbuf) u32(pos int) (int, error) {
	if pos < 0 || pos+4 > len(b) {
		return 0, errFB
	}
	return int(binary.LittleEndian.Uint32(b[pos:])), nil
}

// field returns the absolute position of a table's field in slot (4, 6,
// ...), or 0 when absent.
func (b fbuf) field(table, slot int) (int, error) {
	soff, err := b.u32(table)
	if err != nil {
		return 0, err
	}
	vt := table - int(int32(soff))
	if vt < 0 || vt+4 > len(b) {
		return 0, errFB
	}
	vlen := int(binary.LittleEndian.Uint16(b[vt:]))
	tlen := int(binary.LittleEndian.Uint16(b[vt+2:]))
	if vlen < 4 || vt+vlen > len(b) || table+tlen > len(b) {
		return 0, errFB
	}
	if slot+2 > vlen {
		return 0, nil
	}
	o := int(binary.LittleEndian.Uint16(b[vt+slot:]))
	if o == 0 {
		return 0, nil
	}
	if o+4 > tlen && table+o+4 > len(b) {
		return 0, errFB
	}
	return table + o, nil
}

// indirect follows the offset stored at pos.
func (b fbuf) indirect(pos int) (int, error) {
	o, err := b.u32(pos)
	if err != nil {
		return 0, err
	}
	p := pos + o
	if p < 0 || p >= len(b) {
		return 0, errFB
	}
	return p, nil
}

// vector returns the start and length of the vector (elements of size
// elem) in a table's slot.
func (b fbuf) vector(table, slot, elem int) (start, n int, err error) {
	f, err := b.field(table, slot)
	if err != nil || f == 0 {
		return 0, 0, err
	}
	v, err := b.indirect(f)
	if err != nil {
		return 0, 0, err
	}
	n, err = b.u32(v)
	if err != nil {
		return 0, 0, err
	}
	if n > (len(b)-v-4)/elem {
		return 0, 0, errFB
	}
	return v + 4, n, nil
}

// table returns the table at the offset stored in a slot, or 0.
func (b fbuf) table(table, slot int) (int, error) {
	f, err := b.field(table, slot)
	if err != nil || f == 0 {
		return 0, err
	}
	return b.indirect(f)
}

func (b fbuf) tables(table, slot int, each func(int) error) error {
	start, n, err := b.vector(table, slot, 4)
	if err != nil {
		return err
	}
	for i := 0; i < n; i++ {
		t, err := b.indirect(start + 4*i)
		if err != nil {
			return err
		}
		if err := each(t); err != nil {
			return err
		}
	}
	return nil
}

func (b fbuf) str(table, slot int) error {
	_, _, err := b.vector(table, slot, 1)
	return err
}

func (b fbuf) keyValues(table, slot int) error {
	return b.tables(table, slot, func(kv int) error {
		if err := b.str(kv, 4); err != nil {
			return err
		}
		return b.str(kv, 6)
	})
}

func (b fbuf) fieldTable(f, depth int) error {
	if depth > 64 {
		return errFB
	}
	if err := b.str(f, 4); err != nil {
		return err
	}
	if _, err := b.table(f, 10); err != nil {
		return err
	}
	if d, err := b.table(f, 12); err != nil {
		return err
	} else if d != 0 {
		if _, err := b.table(d, 6); err != nil {
			return err
		}
	}
	if err := b.keyValues(f, 16); err != nil {
		return err
	}
	return b.tables(f, 14, func(c int) error { return b.fieldTable(c, depth+1) })
}

func (b fbuf) recordBatch(rb int) error {
	if rb == 0 {
		return nil
	}
	if _, _, err := b.vector(rb, 6, 16); err != nil {
		return err
	}
	if _, _, err := b.vector(rb, 8, 16); err != nil {
		return err
	}
	if _, err := b.table(rb, 10); err != nil {
		return err
	}
	_, _, err := b.vector(rb, 12, 8)
	return err
}

// checkIPCStream verifies an Arrow IPC stream's messages.
func checkIPCStream(data []byte) error {
	for pos := 0; pos < len(data); {
		if len(data)-pos < 4 {
			return fmt.Errorf("truncated message at byte %d", pos)
		}
		n := int(int32(binary.LittleEndian.Uint32(data[pos:])))
		pos += 4
		if n == -1 { // continuation marker
			if len(data)-pos < 4 {
				return fmt.Errorf("truncated message at byte %d", pos)
			}
			n = int(int32(binary.LittleEndian.Uint32(data[pos:])))
			pos += 4
		}
		if n == 0 {
			return nil // end of stream
		}
		if n < 0 || n > len(data)-pos {
			return fmt.Errorf("message of %d bytes at byte %d overruns the data", n, pos)
		}
		msg := fbuf(data[pos : pos+n])
		pos += n
		root, err := msg.u32(0)
		if err != nil || root >= len(msg) {
			return fmt.Errorf("message at byte %d: %w", pos-n, errFB)
		}
		body := 0
		if f, err := msg.field(root, 10); err != nil {
			return fmt.Errorf("message at byte %d: %w", pos-n, err)
		} else if f != 0 {
			if f+8 > len(msg) {
				return errFB
			}
			body = int(int64(binary.LittleEndian.Uint64(msg[f:])))
		}
		if body < 0 || body > len(data)-pos {
			return fmt.Errorf("message body of %d bytes at byte %d overruns the data", body, pos)
		}
		if err := msg.message(root); err != nil {
			return fmt.Errorf("message at byte %d: %w", pos-n, err)
		}
		pos += body
	}
	return nil
}

func (b fbuf) message(root int) error {
	if err := b.keyValues(root, 12); err != nil {
		return err
	}
	ht, err := b.field(root, 6)
	if err != nil {
		return err
	}
	h, err := b.table(root, 8)
	if err != nil || h == 0 || ht == 0 {
		return err
	}
	switch b[ht] {
	case 1: // Schema
		if err := b.keyValues(h, 8); err != nil {
			return err
		}
		if _, _, err := b.vector(h, 10, 8); err != nil {
			return err
		}
		return b.tables(h, 6, func(f int) error { return b.fieldTable(f, 0) })
	case 2: // DictionaryBatch
		rb, err := b.table(h, 6)
		if err != nil {
			return err
		}
		return b.recordBatch(rb)
	case 3: // RecordBatch
		return b.recordBatch(h)
	}
	return nil
}
