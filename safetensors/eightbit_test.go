package safetensors_test

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"testing"

	"github.com/gocu-dev/gocu/array"
	"github.com/gocu-dev/gocu/lowp"
	"github.com/gocu-dev/gocu/safetensors"
)

// eightBit returns, for each 8-bit dtype, an array of all 256 bit
// patterns (NaNs and infinities included), shape (16, 16), and its
// safetensors name.
func eightBit() []struct {
	name string
	a    *array.Array
} {
	var i8 []int8
	var u8 []uint8
	var e4 []lowp.Float8E4M3
	var e5 []lowp.Float8E5M2
	for b := range 256 {
		i8 = append(i8, int8(uint8(b)))
		u8 = append(u8, uint8(b))
		e4 = append(e4, lowp.Float8E4M3FromBits(uint8(b)))
		e5 = append(e5, lowp.Float8E5M2FromBits(uint8(b)))
	}
	return []struct {
		name string
		a    *array.Array
	}{
		{"I8", array.FromSlice(i8, 16, 16)},
		{"U8", array.FromSlice(u8, 16, 16)},
		{"F8_E4M3", array.FromSlice(e4, 16, 16)},
		{"F8_E5M2", array.FromSlice(e5, 16, 16)},
	}
}

// bits returns an 8-bit array's elements as bytes, in row-major order.
func bits(t *testing.T, a *array.Array) []byte {
	t.Helper()
	var out []byte
	var err error
	switch a.DType() {
	case array.Int8:
		var v []int8
		v, err = array.ToSlice[int8](a)
		for _, x := range v {
			out = append(out, byte(x))
		}
	case array.Uint8:
		out, err = array.ToSlice[uint8](a)
	case array.Float8E4M3:
		var v []lowp.Float8E4M3
		v, err = array.ToSlice[lowp.Float8E4M3](a)
		for _, x := range v {
			out = append(out, byte(x))
		}
	case array.Float8E5M2:
		var v []lowp.Float8E5M2
		v, err = array.ToSlice[lowp.Float8E5M2](a)
		for _, x := range v {
			out = append(out, byte(x))
		}
	default:
		t.Fatalf("dtype %v is not 8-bit", a.DType())
	}
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestEightBitRoundTrip writes every bit pattern of I8, U8, F8_E4M3 and
// F8_E5M2, contiguous and as a transposed view, checks the header's
// dtypes and the raw bytes against the patterns, and reads back the same
// bits.
func TestEightBitRoundTrip(t *testing.T) {
	var in []safetensors.Tensor
	want := map[string][]byte{}
	dtypes := map[string]string{}
	for _, e := range eightBit() {
		in = append(in, safetensors.Tensor{Name: e.name, Array: e.a}, safetensors.Tensor{Name: e.name + ".T", Array: e.a.T()})
		want[e.name], want[e.name+".T"] = bits(t, e.a), bits(t, e.a.T())
		dtypes[e.name], dtypes[e.name+".T"] = e.name, e.name
	}
	var buf bytes.Buffer
	if err := safetensors.Write(&buf, in, nil); err != nil {
		t.Fatal(err)
	}
	raw := buf.Bytes()
	n := binary.LittleEndian.Uint64(raw)
	var hdr map[string]struct {
		DType   string `json:"dtype"`
		Shape   []int  `json:"shape"`
		Offsets [2]int `json:"data_offsets"`
	}
	if err := json.Unmarshal(raw[8:8+n], &hdr); err != nil {
		t.Fatal(err)
	}
	data := raw[8+n:]
	for name, w := range want {
		h, ok := hdr[name]
		if !ok || h.DType != dtypes[name] {
			t.Fatalf("%s: header entry %+v, want dtype %s", name, h, dtypes[name])
		}
		if got := data[h.Offsets[0]:h.Offsets[1]]; !bytes.Equal(got, w) {
			t.Fatalf("%s: stored bytes %v, want %v", name, got, w)
		}
	}
	f, err := safetensors.Read(bytes.NewReader(raw), cpu())
	if err != nil {
		t.Fatal(err)
	}
	for i, x := range in {
		got := f.Get(x.Name)
		if got == nil || got.DType() != x.Array.DType() || f.Tensors[i].Name != x.Name {
			t.Fatalf("%s: read %v, want dtype %v", x.Name, got, x.Array.DType())
		}
		if b := bits(t, got); !bytes.Equal(b, want[x.Name]) {
			t.Fatalf("%s: read bits %v, want %v", x.Name, b, want[x.Name])
		}
	}
}
