package nn_test

import (
	"bytes"
	"testing"

	"github.com/gocu-dev/gocu/array"
	"github.com/gocu-dev/gocu/grad"
	"github.com/gocu-dev/gocu/lowp"
	"github.com/gocu-dev/gocu/nn"
)

// state is a module of named arrays only, as a quantised checkpoint
// holds them.
type state []nn.Named

func (s state) Forward(x *grad.Var) *grad.Var { return x }
func (s state) Named() []nn.Named             { return s }

// bytesOf returns the bit patterns of an int8 or 8-bit float array.
func bytesOf(t *testing.T, a *array.Array) []byte {
	t.Helper()
	var out []byte
	var err error
	switch a.DType() {
	case array.Int8:
		out, err = eightBits[int8](a)
	case array.Float8E4M3:
		out, err = eightBits[lowp.Float8E4M3](a)
	case array.Float8E5M2:
		out, err = eightBits[lowp.Float8E5M2](a)
	default:
		t.Fatalf("dtype %v", a.DType())
	}
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func eightBits[T int8 | lowp.Float8E4M3 | lowp.Float8E5M2](a *array.Array) ([]byte, error) {
	v, err := array.ToSlice[T](a)
	out := make([]byte, len(v))
	for i, x := range v {
		out[i] = byte(x)
	}
	return out, err
}

// TestSaveLoadEightBit saves int8, float8 e4m3 and e5m2 tensors (every
// bit pattern) through Save and Load, and loads the float8 tensors into
// float32 parameters, which get their exact values.
func TestSaveLoadEightBit(t *testing.T) {
	var i8 []int8
	var e4 []lowp.Float8E4M3
	var e5 []lowp.Float8E5M2
	for b := range 256 {
		i8 = append(i8, int8(uint8(b)))
		e4 = append(e4, lowp.Float8E4M3FromBits(uint8(b)))
		e5 = append(e5, lowp.Float8E5M2FromBits(uint8(b)))
	}
	src := state{
		{Name: "q.weight", Var: grad.Const(array.FromSlice(i8, 16, 16))},
		{Name: "q.scale", Var: grad.Param(array.CPU().NewRNG(5).Uniform(array.Float32, 0.01, 0.1, 16))},
		{Name: "e4", Var: grad.Const(array.FromSlice(e4, 256))},
		{Name: "e5", Var: grad.Const(array.FromSlice(e5, 4, 64))},
	}
	var buf bytes.Buffer
	if err := nn.Save(&buf, src, map[string]string{"quant": "int8"}); err != nil {
		t.Fatal(err)
	}
	dst := state{}
	for _, n := range src {
		v := n.Var.Value()
		dst = append(dst, nn.Named{Name: n.Name, Var: grad.Const(array.Zeros(v.DType(), v.Shape()...).Copy())})
	}
	meta, err := nn.Load(bytes.NewReader(buf.Bytes()), dst)
	if err != nil || meta["quant"] != "int8" {
		t.Fatalf("Load: %v, metadata %v", err, meta)
	}
	for i, n := range src {
		got := dst[i].Var.Value()
		if got.DType() != n.Var.DType() {
			t.Fatalf("%s: dtype %v, want %v", n.Name, got.DType(), n.Var.DType())
		}
		if n.Name == "q.scale" {
			near(t, n.Name, f64(t, got), f64(t, n.Var.Value()), 0)
			continue
		}
		if !bytes.Equal(bytesOf(t, got), bytesOf(t, n.Var.Value())) {
			t.Fatalf("%s: bits changed through Save and Load", n.Name)
		}
	}
	// Into float32: the decoded values (NaN patterns stay NaN).
	wide := state{}
	for _, n := range src {
		wide = append(wide, nn.Named{Name: n.Name, Var: grad.Param(array.Zeros(array.Float32, n.Var.Shape()...).Copy())})
	}
	if _, err := nn.Load(bytes.NewReader(buf.Bytes()), wide); err != nil {
		t.Fatal(err)
	}
	for i, n := range src {
		want := f64(t, n.Var.Value())
		got := f64(t, wide[i].Var.Value())
		for j := range want {
			if got[j] != want[j] && !(got[j] != got[j] && want[j] != want[j]) {
				t.Fatalf("%s[%d] = %v in float32, want %v", n.Name, j, got[j], want[j])
			}
		}
	}
}
