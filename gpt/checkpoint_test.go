package gpt

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gocu-dev/gocu/array"
	"github.com/gocu-dev/gocu/grad"
	"github.com/gocu-dev/gocu/nn"
	"github.com/gocu-dev/gocu/safetensors"
)

func logits(t testing.TB, m *Model, ids *array.Array) []float64 {
	t.Helper()
	var l *grad.Var
	grad.NoGrad(func() { l = m.Forward(grad.Const(ids)) })
	v, err := l.Value().AsType(array.Float64).Float64s()
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func TestCheckpointRoundTrip(t *testing.T) {
	cfg := small
	cfg.Bias = false
	cfg.Dropout = 0.1
	m := randomModel(t, cfg)
	m.SetTraining(false)
	path := filepath.Join(t.TempDir(), "m.safetensors")
	if err := m.Save(path, map[string]string{"step": "7"}); err != nil {
		t.Fatal(err)
	}
	got, meta, err := Load(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got.Config != cfg || meta["step"] != "7" {
		t.Fatalf("Load: config %+v, metadata %v; want %+v and step 7", got.Config, meta, cfg)
	}
	got.SetTraining(false)
	ids := tokens(array.CPU(), 1, cfg.Vocab, 2, cfg.Context)
	a, b := logits(t, m, ids), logits(t, got, ids)
	for i := range a {
		if a[i] != b[i] {
			t.Fatalf("logit %d: %g saved, %g loaded", i, a[i], b[i])
		}
	}
	// Into an existing model, and from a file that names the tied weight
	// head.weight, as torch's save_model does.
	other := randomModel(t, cfg)
	other.SetTraining(false)
	var ts []safetensors.Tensor
	for _, n := range m.Named() {
		name := n.Name
		if name == "wte.weight" {
			name = "head.weight"
		}
		ts = append(ts, safetensors.Tensor{Name: name, Array: n.Var.Value().AsType(array.BFloat16)})
	}
	torchPath := filepath.Join(t.TempDir(), "torch.safetensors")
	if err := safetensors.WriteFile(torchPath, ts, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := other.LoadFile(torchPath); err != nil {
		t.Fatal(err)
	}
	c := logits(t, other, ids)
	for i := range a {
		if d := c[i] - a[i]; d > 0.05 || d < -0.05 {
			t.Fatalf("logit %d: %g from the bfloat16 file, %g saved", i, c[i], a[i])
		}
	}
	if _, _, err := Load(torchPath, nil); !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), "lacks") {
		t.Errorf("Load of a file without the configuration: %v", err)
	}
}

func TestCheckpointErrors(t *testing.T) {
	m := randomModel(t, small)
	dir := t.TempDir()
	write := func(name string, ts []safetensors.Tensor, meta map[string]string) string {
		p := filepath.Join(dir, name)
		if err := safetensors.WriteFile(p, ts, meta); err != nil {
			t.Fatal(err)
		}
		return p
	}
	var all []safetensors.Tensor
	for _, n := range m.Named() {
		all = append(all, safetensors.Tensor{Name: n.Name, Array: n.Var.Value()})
	}
	missing := write("missing.safetensors", all[1:], nil)
	extra := write("extra.safetensors", append(all[:len(all):len(all)], safetensors.Tensor{Name: "head.bias", Array: array.Zeros(array.Float32, 3)}), nil)
	shape := append([]safetensors.Tensor(nil), all...)
	shape[1] = safetensors.Tensor{Name: "wpe.weight", Array: array.Zeros(array.Float32, 7, 8)}
	shaped := write("shape.safetensors", shape, nil)
	for _, c := range []struct {
		path, want string
	}{
		{missing, "missing [wte.weight]"},
		{extra, "unexpected [head.bias]"},
		{shaped, "wpe.weight has shape [7 8] in the checkpoint, [6 8] in the model"},
	} {
		_, err := m.LoadFile(c.path)
		if !errors.Is(err, ErrCheckpoint) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want ErrCheckpoint saying %q", filepath.Base(c.path), err, c.want)
		}
	}
	bad := small.metadata()
	bad["gpt.heads"] = "3"
	if _, _, err := Load(write("heads.safetensors", all, bad), nil); !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), "3 heads") {
		t.Errorf("metadata of 3 heads for width 8: %v", err)
	}
	bad["gpt.heads"] = "two"
	if _, _, err := Load(write("nan.safetensors", all, bad), nil); !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), `"two"`) {
		t.Errorf("metadata heads two: %v", err)
	}
	if _, _, err := Load(filepath.Join(dir, "none.safetensors"), nil); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a missing file: %v", err)
	}
	// nn's own Save and Load work too: Model is an nn.Module.
	p := filepath.Join(dir, "nn.safetensors")
	if err := nn.SaveFile(p, m, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := nn.LoadFile(p, m); err != nil {
		t.Error(err)
	}
}
