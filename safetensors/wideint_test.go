package safetensors_test

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/gocu-dev/gocu/array"
	"github.com/gocu-dev/gocu/safetensors"
)

// TestWideIntRoundTrip writes I16, U16, U32 and U64 tensors of random bits
// (the high bit of U64 included), checks the header's dtypes and the
// little-endian bytes, and reads back the same values.
func TestWideIntRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(19, 1))
	n := 40
	i16, u16, u32, u64 := make([]int16, n), make([]uint16, n), make([]uint32, n), make([]uint64, n)
	for i := range n {
		x := r.Uint64() | 1<<63
		i16[i], u16[i], u32[i], u64[i] = int16(x), uint16(x>>16), uint32(x>>8), x
	}
	le := func(vals []uint64, size int) []byte {
		out := make([]byte, 0, len(vals)*size)
		for _, v := range vals {
			out = binary.LittleEndian.AppendUint64(out, v)[:len(out)+size]
		}
		return out
	}
	widen := func(f func(i int) uint64) []uint64 {
		v := make([]uint64, n)
		for i := range v {
			v[i] = f(i)
		}
		return v
	}
	cases := []struct {
		name string
		a    *array.Array
		raw  []byte
	}{
		{"I16", array.FromSlice(i16, 4, 10), le(widen(func(i int) uint64 { return uint64(uint16(i16[i])) }), 2)},
		{"U16", array.FromSlice(u16, 4, 10), le(widen(func(i int) uint64 { return uint64(u16[i]) }), 2)},
		{"U32", array.FromSlice(u32, 4, 10), le(widen(func(i int) uint64 { return uint64(u32[i]) }), 4)},
		{"U64", array.FromSlice(u64, 4, 10), le(u64, 8)},
	}
	var in []safetensors.Tensor
	for _, c := range cases {
		in = append(in, safetensors.Tensor{Name: c.name, Array: c.a})
	}
	var buf bytes.Buffer
	if err := safetensors.Write(&buf, in, nil); err != nil {
		t.Fatal(err)
	}
	raw := buf.Bytes()
	hl := binary.LittleEndian.Uint64(raw)
	var hdr map[string]struct {
		DType   string `json:"dtype"`
		Offsets [2]int `json:"data_offsets"`
	}
	if err := json.Unmarshal(raw[8:8+hl], &hdr); err != nil {
		t.Fatal(err)
	}
	f, err := safetensors.Read(bytes.NewReader(raw), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cases {
		h := hdr[c.name]
		if h.DType != c.name {
			t.Errorf("%s: header dtype %q", c.name, h.DType)
		}
		if got := raw[8+int(hl)+h.Offsets[0] : 8+int(hl)+h.Offsets[1]]; !bytes.Equal(got, c.raw) {
			t.Errorf("%s: bytes differ", c.name)
		}
		b := f.Get(c.name)
		if b.DType() != c.a.DType() || !slices.Equal(b.Shape(), []int{4, 10}) {
			t.Fatalf("%s: read %v %v (%v)", c.name, b.DType(), b.Shape(), b.Err())
		}
		got, err := array.ToSlice[uint64](b)
		want, _ := array.ToSlice[uint64](c.a)
		if err != nil || !slices.Equal(got, want) {
			t.Errorf("%s: read back %v (%v), want %v", c.name, got[:3], err, want[:3])
		}
	}
}
