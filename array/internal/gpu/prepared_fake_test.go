//go:build gocu_fakedriver

package gpu

import (
	"errors"
	"testing"

	"github.com/gocu-dev/gocu/array/internal/backend"
	"github.com/gocu-dev/gocu/cuda"
)

// EvalPrepared serves only buffers that the plan's key would describe as
// it did the buffers the handle was made with: the same dtypes, alignment
// classes and aliasing; anything else is left to Eval (ok false, nothing
// launched). A freed buffer is an error, as for Eval.
func TestEvalPreparedChecksBuffers(t *testing.T) {
	b, alloc := fakeBackend(t)
	x, y, z := alloc(backend.Float32, 16), alloc(backend.Float32, 16), alloc(backend.Float32, 16)
	p := &backend.Program{Shape: []int{16},
		Inputs: []backend.Operand{contiguousOperand(x, 16), contiguousOperand(y, 16)},
		Nodes: []backend.Node{{Op: backend.OpInput, DType: backend.Float32},
			{Op: backend.OpInput, DType: backend.Float32, Args: [3]int32{1}},
			{Op: backend.OpAdd, DType: backend.Float32, Args: [3]int32{0, 1}}}}
	h, err := b.EvalPrepare(p, contiguousOperand(z, 16))
	if err != nil || h == nil {
		t.Fatalf("EvalPrepare: %v, %v", h, err)
	}
	if h2, err := b.EvalPrepare(p, contiguousOperand(z, 16)); err != nil || h2 != h {
		t.Errorf("a second EvalPrepare of the key made another handle")
	}
	u, v, w := alloc(backend.Float32, 16), alloc(backend.Float32, 16), alloc(backend.Float32, 16)
	mem, err := b.dev.AllocOn(b.stream, 1024)
	if err != nil {
		t.Fatal(err)
	}
	view, err := mem.View(4, 64) // 4-byte aligned
	if err != nil {
		t.Fatal(err)
	}
	odd, err := b.Wrap(view, backend.Float32, 16)
	if err != nil {
		t.Fatal(err)
	}
	i32 := alloc(backend.Int32, 16)
	for _, c := range []struct {
		name    string
		ins     []backend.Buffer
		out     backend.Buffer
		ok      bool
		wantErr bool
	}{
		{"other buffers", []backend.Buffer{u, v}, w, true, false},
		{"same buffers", []backend.Buffer{x, y}, z, true, false},
		{"aliased inputs", []backend.Buffer{u, u}, w, false, false},
		{"misaligned input", []backend.Buffer{odd, v}, w, false, false},
		{"misaligned output", []backend.Buffer{u, v}, odd, false, false},
		{"other dtype", []backend.Buffer{i32, v}, w, false, false},
		{"one input", []backend.Buffer{u}, w, false, false},
	} {
		ok, err := b.EvalPrepared(h, c.ins, nil, c.out)
		if ok != c.ok || (err != nil) != c.wantErr {
			t.Errorf("%s: ok %v, error %v; want ok %v", c.name, ok, err, c.ok)
		}
	}
	b.Free(u)
	if ok, err := b.EvalPrepared(h, []backend.Buffer{u, v}, nil, w); !ok || !errors.Is(err, cuda.ErrFreed) {
		t.Errorf("a freed input: ok %v, error %v; want ErrFreed", ok, err)
	}
}
