package cpu

import (
	"encoding/binary"
	"math/bits"
	"unsafe"
)

// nzBlock is how many mask bytes a Nonzero writer gathers on its stack.
const nzBlock = 256

// nzLanes holds, for each 8-bit pattern, the positions of its set bits
// (lowest first).
var nzLanes = func() (t [256][8]uint8) {
	for m := range t {
		k := 0
		for i := range 8 {
			if m>>i&1 != 0 {
				t[m][k] = uint8(i)
				k++
			}
		}
	}
	return t
}()

// boolBytes views a bool slice as its bytes.
func boolBytes(m []bool) []byte {
	if len(m) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(m))), len(m))
}

// nonzeroBits returns a bit per byte of w, set where that byte is nonzero.
func nonzeroBits(w uint64) uint8 {
	const lo7, hi = 0x7f7f7f7f7f7f7f7f, 0x8080808080808080
	t := ((w & lo7) + lo7 | w) & hi // the high bit of each nonzero byte
	return uint8((t >> 7) * 0x0102040810204080 >> 56)
}

// countNonzero counts the nonzero bytes of m, eight at a time.
func countNonzero(m []byte) int {
	k, i := 0, 0
	for ; i+8 <= len(m); i += 8 {
		k += bits.OnesCount8(nonzeroBits(binary.LittleEndian.Uint64(m[i:])))
	}
	for _, v := range m[i:] {
		if v != 0 {
			k++
		}
	}
	return k
}

// writeNonzero writes base+j for each nonzero m[j] to o, at most len(o),
// without a branch per element: eight bytes at a time give an 8-bit
// pattern whose positions a table holds, written whole to a stack buffer
// whose fill then grows by the pattern's count.
func writeNonzero(o []int64, m []byte, base int) {
	var buf [nzBlock + 8]int64
	p := 0
	for b := 0; b < len(m) && p < len(o); b += nzBlock {
		blk := m[b:min(b+nzBlock, len(m))]
		k, j := 0, 0
		for ; j+8 <= len(blk); j += 8 {
			nb := nonzeroBits(binary.LittleEndian.Uint64(blk[j:]))
			at := int64(base + b + j)
			l := &nzLanes[nb]
			d := buf[k : k+8 : k+8]
			d[0], d[1], d[2], d[3] = at+int64(l[0]), at+int64(l[1]), at+int64(l[2]), at+int64(l[3])
			d[4], d[5], d[6], d[7] = at+int64(l[4]), at+int64(l[5]), at+int64(l[6]), at+int64(l[7])
			k += bits.OnesCount8(nb)
		}
		for ; j < len(blk); j++ {
			buf[k] = int64(base + b + j)
			if blk[j] != 0 {
				k++
			}
		}
		p += copy(o[p:], buf[:k])
	}
}
