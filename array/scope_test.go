package array

import (
	"errors"
	"slices"
	"testing"
)

// TestScope: arrays made in a scope are closed with it, kept ones survive
// (and belong to the scope around), persisted ones leave every scope, and
// a kept pending result still reads the scope's closed arrays correctly.
func TestScope(t *testing.T) { checkScope(t, CPU(), true) }

func TestScopeGPU(t *testing.T) { checkScope(t, testGPU(t), true) }

// checkScope checks the values too where the device computes them (the
// fake driver runs no kernels).
func checkScope(t *testing.T, d *Maker, values bool) {
	r := d.NewRNG(7)
	x := r.Uniform(Float32, -1, 1, 257).Eval()
	defer x.Close()
	xs, err := x.Float32s()
	if err != nil {
		t.Fatal(err)
	}

	outer := d.NewScope()
	s := d.NewScope()
	y := x.Add(1).Eval()   // closed with s
	z := y.Mul(2)          // pending, reads y: closed with s
	k := y.Mul(3).Sub(x)   // pending, reads y: kept
	p := x.Mul(4).Eval()   // persisted
	v := y.Reshape(1, 257) // a view of y: closed with s
	o := x.Neg().Eval()    // kept into outer, closed with it
	s.Keep(k, o)
	p.Persist()
	if n := s.Len(); n != 4 {
		t.Errorf("the scope holds %d arrays, want 4 (y, z, v and k's operand y.Mul(3))", n)
	}
	s.Close()
	for name, a := range map[string]*Array{"y": y, "z": z, "v": v} {
		if err := a.Err(); !errors.Is(err, ErrClosed) {
			t.Errorf("%s after its scope closed: %v, want ErrClosed", name, err)
		}
	}
	ks, err := k.Float32s()
	if err != nil {
		t.Fatalf("kept array: %v", err)
	}
	for i, v := range xs {
		if !values {
			break
		}
		if want := (v+1)*3 - v; ks[i] != want {
			t.Fatalf("kept[%d] = %v, want %v", i, ks[i], want)
		}
	}
	if err := o.Err(); err != nil {
		t.Fatalf("an array kept into the outer scope: %v", err)
	}
	if n := outer.Len(); n != 2 {
		t.Errorf("the outer scope holds %d arrays, want 2 (k, o)", n)
	}
	outer.Close()
	if err := o.Err(); !errors.Is(err, ErrClosed) {
		t.Errorf("o after the outer scope closed: %v, want ErrClosed", err)
	}
	if err := p.Err(); err != nil {
		t.Fatalf("a persisted array: %v", err)
	}
	p.Close()
	if err := x.Err(); err != nil {
		t.Fatalf("an array made before the scopes: %v", err)
	}
	if err := s.Close(); err != nil { // idempotent
		t.Fatal(err)
	}
}

// TestScopeOrder: a scope closed before the one inside it leaves the chain
// intact; arrays made afterwards belong to the scope still open.
func TestScopeOrder(t *testing.T) {
	d := CPU()
	a := d.NewScope()
	b := d.NewScope()
	a.Close() // out of order
	x := d.Ones(Float32, 4).Eval()
	if n := b.Len(); n != 1 {
		t.Fatalf("the inner scope holds %d arrays, want 1", n)
	}
	b.Close()
	if err := x.Err(); !errors.Is(err, ErrClosed) {
		t.Fatalf("x after its scope closed: %v", err)
	}
	y := d.Ones(Float32, 4).Eval() // no scope open
	defer y.Close()
	if err := y.Err(); err != nil {
		t.Fatal(err)
	}
}

// TestWithScope: the arrays the function returns are kept; the rest, and
// everything on an error, is closed.
func TestWithScope(t *testing.T) {
	d := CPU()
	var tmp *Array
	out, err := d.WithScope(func() ([]*Array, error) {
		tmp = d.Arange(Float32, 5).Eval()
		return []*Array{tmp.Mul(tmp)}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	got, err := out[0].Float32s()
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, []float32{0, 1, 4, 9, 16}) {
		t.Fatalf("got %v", got)
	}
	if err := tmp.Err(); !errors.Is(err, ErrClosed) {
		t.Fatalf("a temporary after WithScope: %v", err)
	}
}

// TestScopeFreesGPU: a loop whose body runs in a scope and closes nothing
// itself uses no more device memory after each step than before.
func TestScopeFreesGPU(t *testing.T) { checkScopeFrees(t, testGPU(t)) }

func checkScopeFrees(t *testing.T, d *Maker) {
	x := d.NewRNG(1).Uniform(Float32, -1, 1, 64, 64).Eval()
	defer x.Close()
	if err := d.Sync(); err != nil {
		t.Fatal(err)
	}
	al := d.gpu.Device().Allocator()
	step := func() {
		s := d.NewScope()
		h := x.MatMul(x).Add(1).ReLU()
		_ = h.Sum().Mul(h.Mean()).Eval()
		s.Close()
	}
	step() // the first makes what the device keeps (cuBLAS's workspace)
	if err := d.Sync(); err != nil {
		t.Fatal(err)
	}
	before := al.Stats().InUse
	for range 50 {
		step()
	}
	if err := d.Sync(); err != nil {
		t.Fatal(err)
	}
	if after := al.Stats().InUse; after != before {
		t.Fatalf("device memory in use went from %d to %d bytes over 50 scoped steps", before, after)
	}
}
