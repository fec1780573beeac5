package cpu

import (
	"encoding/binary"
	"unsafe"
)

// nzBlock is how many mask bytes a Nonzero writer gathers on its stack.
const nzBlock = 256

// boolBytes views a bool slice as its bytes.
func boolBytes(m []bool) []byte {
	if len(m) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(m))), len(m))
}

// countNonzero counts the nonzero bytes of m, eight at a time.
func countNonzero(m []byte) int {
	const lo7, hi = 0x7f7f7f7f7f7f7f7f, 0x8080808080808080
	k, i := 0, 0
	for ; i+8 <= len(m); i += 8 {
		w := binary.LittleEndian.Uint64(m[i:])
		// The high bit of each byte of t is set where that byte is nonzero.
		t := ((w & lo7) + lo7 | w) & hi
		k += int((t >> 7) * 0x0101010101010101 >> 56)
	}
	for _, v := range m[i:] {
		if v != 0 {
			k++
		}
	}
	return k
}

// writeNonzero writes base+j for each nonzero m[j] to o, at most len(o),
// without a branch per element: each position goes to a stack buffer
// whose fill count grows only at the nonzero ones.
func writeNonzero(o []int64, m []byte, base int) {
	var buf [nzBlock]int64
	p := 0
	for b := 0; b < len(m) && p < len(o); b += nzBlock {
		blk := m[b:min(b+nzBlock, len(m))]
		k := 0
		for j, v := range blk {
			buf[k&(nzBlock-1)] = int64(base + b + j)
			if v != 0 {
				k++
			}
		}
		p += copy(o[p:], buf[:k])
	}
}
