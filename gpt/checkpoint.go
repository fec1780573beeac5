package gpt

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/gocu-dev/gocu"
	"github.com/gocu-dev/gocu/array"
	"github.com/gocu-dev/gocu/nn"
	"github.com/gocu-dev/gocu/safetensors"
)

// Save writes m's parameters to a safetensors file (atomically), named as
// train_gpt.py's state_dict, with the configuration and meta in the
// header's metadata. PyTorch reads it with
// safetensors.torch.load_model(model, path), which fills the tied
// head.weight from wte.weight.
func (m *Model) Save(path string, meta map[string]string) error {
	md := m.Config.metadata()
	maps.Copy(md, meta)
	return nn.SaveFile(path, m, md)
}

// Load reads a checkpoint written by Save into a new model on dev (nil:
// the CPU) of the configuration its metadata records, and returns the
// metadata too.
func Load(path string, dev *gocu.Device) (*Model, map[string]string, error) {
	if dev == nil {
		dev = gocu.MustOpen("cpu")
	}
	f, err := safetensors.ReadFile(path, dev)
	if err != nil {
		return nil, nil, err
	}
	cfg, err := configFrom(f.Metadata)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	m, err := New(array.On(dev).NewRNG(0), cfg)
	if err != nil {
		return nil, nil, err
	}
	if err := m.assign(f); err != nil {
		return nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	return m, f.Metadata, nil
}

// LoadFile reads parameters saved by Save, or by PyTorch from
// train_gpt.py's model (safetensors.torch.save_model, which may keep the
// tied weight as head.weight), into m, strictly: every parameter of m must
// be in the file with its shape, and the file must hold nothing else.
// Values are converted to each parameter's dtype (a bfloat16 checkpoint
// loads into float32 weights) and written into its memory. It returns
// the file's metadata.
func (m *Model) LoadFile(path string) (map[string]string, error) {
	f, err := safetensors.ReadFile(path, m.WTE.Weight.Value().Device())
	if err != nil {
		return nil, err
	}
	if err := m.assign(f); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return f.Metadata, nil
}

// ErrCheckpoint is wrapped by the error of a checkpoint that does not fit
// the model.
var ErrCheckpoint = errors.New("the checkpoint does not fit the model")

func (m *Model) assign(f *safetensors.File) error {
	ts := map[string]*array.Array{}
	for _, t := range f.Tensors {
		ts[t.Name] = t.Array
	}
	// The tied head: torch's save_model keeps one of the two names.
	if h, ok := ts["head.weight"]; ok {
		if _, ok := ts["wte.weight"]; !ok {
			ts["wte.weight"] = h
		}
		delete(ts, "head.weight")
	}
	var missing, shapes []string
	named := m.Named()
	for _, n := range named {
		a, ok := ts[n.Name]
		switch {
		case !ok:
			missing = append(missing, n.Name)
		case !sameShape(a.Shape(), n.Var.Shape()):
			shapes = append(shapes, fmt.Sprintf("%s has shape %v in the checkpoint, %v in the model", n.Name, a.Shape(), n.Var.Shape()))
		}
		delete(ts, n.Name)
	}
	extra := slices.Sorted(maps.Keys(ts))
	if len(missing) > 0 || len(extra) > 0 {
		return fmt.Errorf("gpt: missing %v, unexpected %v: %w", missing, extra, ErrCheckpoint)
	}
	if len(shapes) > 0 {
		return fmt.Errorf("gpt: %s: %w", strings.Join(shapes, "; "), ErrCheckpoint)
	}
	for _, n := range named {
		if err := n.Var.Value().Assign(f.Get(alias(f, n.Name))); err != nil {
			return fmt.Errorf("gpt: %s: %w", n.Name, err)
		}
	}
	return nil
}

// alias returns the file's name for parameter name: head.weight for the
// tied embedding when the file has only that.
func alias(f *safetensors.File, name string) string {
	if name == "wte.weight" && f.Get(name) == nil {
		return "head.weight"
	}
	return name
}
