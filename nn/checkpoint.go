package nn

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/gocu-dev/gocu"
	"github.com/gocu-dev/gocu/safetensors"
)

// Save writes m's parameters to w in the safetensors format, named as in
// m.Named() (PyTorch's state_dict names), with optional metadata.
// PyTorch loads the file with safetensors.torch.load_file and
// load_state_dict.
func Save(w io.Writer, m Module, metadata map[string]string) error {
	var ts []safetensors.Tensor
	for _, n := range m.Named() {
		ts = append(ts, safetensors.Tensor{Name: n.Name, Array: n.Var.Value()})
	}
	return safetensors.Write(w, ts, metadata)
}

// SaveFile is Save to a file, written atomically.
func SaveFile(path string, m Module, metadata map[string]string) error {
	var ts []safetensors.Tensor
	for _, n := range m.Named() {
		ts = append(ts, safetensors.Tensor{Name: n.Name, Array: n.Var.Value()})
	}
	return safetensors.WriteFile(path, ts, metadata)
}

// Load reads parameters saved by Save (or by PyTorch's safetensors) into
// m, strictly as load_state_dict: every parameter of m must be in the file
// with its shape, and the file must hold nothing else. Values are
// converted to each parameter's dtype and written into its existing
// memory, so that a captured CUDA graph sees them. It returns the file's
// metadata.
func Load(r io.Reader, m Module) (map[string]string, error) {
	var dev = firstDevice(m)
	f, err := safetensors.Read(r, dev)
	if err != nil {
		return nil, err
	}
	return f.Metadata, apply(f, m)
}

// LoadFile is Load from a file.
func LoadFile(path string, m Module) (map[string]string, error) {
	f, err := safetensors.ReadFile(path, firstDevice(m))
	if err != nil {
		return nil, err
	}
	if err := apply(f, m); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return f.Metadata, nil
}

func firstDevice(m Module) *gocu.Device {
	for _, n := range m.Named() {
		return n.Var.Value().Device()
	}
	return nil
}

func apply(f *safetensors.File, m Module) error {
	named := m.Named()
	have := map[string]bool{}
	var missing, unexpected, errs []string
	for _, t := range f.Tensors {
		have[t.Name] = true
	}
	want := map[string]bool{}
	for _, n := range named {
		want[n.Name] = true
		if !have[n.Name] {
			missing = append(missing, n.Name)
		}
	}
	for _, t := range f.Tensors {
		if !want[t.Name] {
			unexpected = append(unexpected, t.Name)
		}
	}
	if len(missing) > 0 || len(unexpected) > 0 {
		return fmt.Errorf("nn: Load: the checkpoint does not match the model: missing %v, unexpected %v", missing, unexpected)
	}
	for _, n := range named {
		src := f.Get(n.Name)
		dst := n.Var.Value()
		if !slices.Equal(src.Shape(), dst.Shape()) {
			errs = append(errs, fmt.Sprintf("%s has shape %v in the checkpoint, %v in the model", n.Name, src.Shape(), dst.Shape()))
		}
	}
	if len(errs) > 0 {
		return errors.New("nn: Load: " + strings.Join(errs, "; "))
	}
	for _, n := range named {
		if err := n.Var.Value().Assign(f.Get(n.Name)); err != nil {
			return fmt.Errorf("nn: Load %s: %w", n.Name, err)
		}
	}
	return nil
}
