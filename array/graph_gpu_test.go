package array

import (
	"errors"
	"math"
	"testing"
)

// TestCaptureGPU records a chain of operations (an elementwise program, a
// product, a reduction, an in-place update) and replays it with new inputs
// written into the same arrays.
func TestCaptureGPU(t *testing.T) {
	d := testGPU(t)
	x := d.NewRNG(1).Normal(Float32, 0, 1, 64, 32)
	w := d.NewRNG(2).Normal(Float32, 0, 1, 32, 16)
	y := d.Zeros(Float32, 64, 16).Copy()
	s := d.Zeros(Float64).Copy()
	step := func() error {
		h := x.Mul(2).Add(1).ReLU() // lazy, fuses into the product's input
		if err := y.Assign(h.MatMul(w).Tanh()); err != nil {
			return err
		}
		return s.Assign(s.Add(y.Sum()))
	}
	ref := func(xh []float32) ([]float64, float64) {
		wh, _ := w.Float32s()
		out := make([]float64, 64*16)
		sum := 0.0
		for i := 0; i < 64; i++ {
			for j := 0; j < 16; j++ {
				acc := 0.0
				for k := 0; k < 32; k++ {
					hv := max(float64(xh[i*32+k])*2+1, 0)
					acc += hv * float64(wh[k*16+j])
				}
				out[i*16+j] = math.Tanh(acc)
				sum += out[i*16+j]
			}
		}
		return out, sum
	}
	g, err := d.Capture(step)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	if g.Nodes() < 3 {
		t.Fatalf("the graph has %d nodes", g.Nodes())
	}
	total := 0.0
	xh, _ := x.Float32s()
	_, s0 := ref(xh)
	total += s0 // the warm-up run
	for r := 0; r < 3; r++ {
		nx := d.NewRNG(uint64(10+r)).Normal(Float32, 0, 1, 64, 32)
		if err := x.Assign(nx); err != nil {
			t.Fatal(err)
		}
		if err := g.Replay(); err != nil {
			t.Fatal(err)
		}
		xh, _ := nx.Float32s()
		want, sum := ref(xh)
		total += sum
		got, err := y.Float32s()
		if err != nil {
			t.Fatal(err)
		}
		for i := range want {
			if d := float64(got[i]) - want[i]; d > 1e-4 || d < -1e-4 {
				t.Fatalf("replay %d: y[%d] = %v, want %v", r, i, got[i], want[i])
			}
		}
	}
	if got, _ := s.Item(); got-total > 1e-2 || total-got > 1e-2 {
		t.Fatalf("running sum %v, want %v", got, total)
	}
}

// TestCaptureRules: a read, a Sync or a host copy inside the capture fails
// with ErrCapture and leaves the device usable.
func TestCaptureRules(t *testing.T) {
	d := testGPU(t)
	x := d.Ones(Float32, 8).Copy()
	for name, fn := range map[string]func() error{
		"read": func() error {
			_, err := x.Add(1).Float32s()
			return err
		},
		"item": func() error { _, err := x.Sum().Item(); return err },
		"sync": func() error { return d.Sync() },
		"host copy": func() error {
			return FromSliceOn(d.Device(), []float32{1, 2}).Err()
		},
		"nested capture": func() error {
			g, err := d.Capture(func() error { return nil }) // succeeds in the warm-up run
			if g != nil {
				g.Close()
			}
			return err
		},
	} {
		t.Run(name, func(t *testing.T) {
			g, err := d.Capture(func() error {
				y := x.Mul(3).Eval() // some captured work first
				_ = y
				return fn()
			})
			if err == nil {
				g.Close()
				t.Fatal("Capture succeeded")
			}
			if !errors.Is(err, ErrCapture) {
				t.Fatalf("error %v does not wrap ErrCapture", err)
			}
			// The device works on.
			v, err := x.Add(1).Float32s()
			if err != nil || v[0] != 2 {
				t.Fatalf("after the failed capture: %v, %v", v, err)
			}
		})
	}
}

// TestCaptureKeepsMemory: arrays made during the capture and closed after
// it keep their memory for the graph; arrays allocated afterwards get
// other memory, which replays do not touch.
func TestCaptureKeepsMemory(t *testing.T) {
	d := testGPU(t)
	x := d.Ones(Float32, 1<<16).Copy()
	out := d.Zeros(Float32, 1<<16).Copy()
	var tmp *Array
	g, err := d.Capture(func() error {
		tmp = x.Mul(5).Eval() // an intermediate, allocated in the capture
		return out.Assign(tmp.Add(1))
	})
	if err != nil {
		t.Fatal(err)
	}
	tmp.Close()
	others := make([]*Array, 8)
	for i := range others {
		others[i] = d.Full(Float32, float32(i), 1<<16).Copy()
	}
	for range 5 {
		if err := g.Replay(); err != nil {
			t.Fatal(err)
		}
	}
	for i, o := range others {
		v, err := o.Float32s()
		if err != nil || v[0] != float32(i) || v[len(v)-1] != float32(i) {
			t.Fatalf("array %d allocated after the capture was overwritten: %v %v", i, v[:2], err)
		}
	}
	if v, _ := out.Float32s(); v[0] != 6 {
		t.Fatalf("out = %v", v[0])
	}
	if err := g.Close(); err != nil {
		t.Fatal(err)
	}
	if err := g.Replay(); !errors.Is(err, ErrClosed) {
		t.Fatalf("Replay after Close: %v", err)
	}
}
