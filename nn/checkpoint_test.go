package nn_test

import (
	"bytes"
	"encoding/binary"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gocu-dev/gocu/array"
	"github.com/gocu-dev/gocu/grad"
	"github.com/gocu-dev/gocu/nn"
)

func mlp(seed uint64, sizes ...int) *nn.Sequential {
	rng := array.CPU().NewRNG(seed)
	var ls []nn.Module
	for i := 0; i+1 < len(sizes); i++ {
		if i > 0 {
			ls = append(ls, nn.ReLU{})
		}
		ls = append(ls, nn.NewLinear(rng, sizes[i], sizes[i+1]))
	}
	return nn.NewSequential(ls...)
}

func TestSaveLoad(t *testing.T) {
	a, b := mlp(1, 6, 5, 3), mlp(2, 6, 5, 3)
	path := filepath.Join(t.TempDir(), "m.safetensors")
	if err := nn.SaveFile(path, a, map[string]string{"epoch": "3"}); err != nil {
		t.Fatal(err)
	}
	// Capture b's weight array: Load writes into the same memory.
	w0 := b.Named()[0].Var.Value()
	meta, err := nn.LoadFile(path, b)
	if err != nil {
		t.Fatal(err)
	}
	if meta["epoch"] != "3" || b.Named()[0].Var.Value() != w0 {
		t.Fatalf("metadata %v, or the parameter array was replaced", meta)
	}
	x := grad.Const(array.CPU().NewRNG(3).Normal(array.Float32, 0, 1, 4, 6))
	near(t, "outputs after load", f64(t, b.Forward(x).Value()), f64(t, a.Forward(x).Value()), 0)

	var buf bytes.Buffer
	if err := nn.Save(&buf, a, nil); err != nil {
		t.Fatal(err)
	}
	for name, m := range map[string]nn.Module{
		"wider":      mlp(1, 6, 7, 3),
		"deeper":     mlp(1, 6, 5, 3, 2),
		"shallower":  mlp(1, 6, 3),
		"layer norm": nn.NewSequential(nn.NewLayerNorm(array.CPU(), 6)),
	} {
		_, err := nn.Load(bytes.NewReader(buf.Bytes()), m)
		if err == nil {
			t.Fatalf("%s: Load succeeded", name)
		}
		if !strings.Contains(err.Error(), "shape") && !strings.Contains(err.Error(), "missing") {
			t.Fatalf("%s: %v", name, err)
		}
	}
	if _, err := nn.Load(bytes.NewReader(buf.Bytes()[:40]), mlp(1, 6, 5, 3)); err == nil {
		t.Fatal("Load of a truncated file succeeded")
	}
}

// TestLoadPyTorchNames loads a file written by hand from the format's
// specification, as PyTorch's safetensors.torch.save_file writes a
// state_dict of nn.Sequential(nn.Linear(2, 2)): float64 values into
// float32 parameters.
func TestLoadPyTorchNames(t *testing.T) {
	hdr := `{"0.bias":{"dtype":"F64","shape":[2],"data_offsets":[0,16]},"0.weight":{"dtype":"F64","shape":[2,2],"data_offsets":[16,48]}}`
	for len(hdr)%8 != 0 {
		hdr += " "
	}
	b := binary.LittleEndian.AppendUint64(nil, uint64(len(hdr)))
	b = append(b, hdr...)
	for _, v := range []float64{0.5, -0.5, 1, 2, 3, 4} {
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(v))
	}
	m := mlp(1, 2, 2)
	if _, err := nn.Load(bytes.NewReader(b), m); err != nil {
		t.Fatal(err)
	}
	y := m.Forward(grad.Const(array.FromSlice([]float32{1, 1}, 1, 2)))
	near(t, "x·Wᵀ+b", f64(t, y.Value()), []float64{3.5, 6.5}, 0)
	if m.Named()[0].Var.DType() != array.Float32 {
		t.Fatal("Load changed the parameter's dtype")
	}
}
