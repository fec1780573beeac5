package array

import (
	"errors"
	"testing"

	"github.com/gocu-dev/gocu"
)

// On the CPU and the simulator a graph is its function: Capture runs it
// once, Replay again.
func TestCaptureCPU(t *testing.T) {
	for _, name := range []string{"cpu", "sim"} {
		d := On(gocu.MustOpen(name))
		x := d.Zeros(Float32, 3).Copy()
		runs := 0
		g, err := d.Capture(func() error {
			runs++
			return x.Assign(x.Add(1))
		})
		if err != nil {
			t.Fatal(err)
		}
		if runs != 1 || g.Nodes() != 0 {
			t.Fatalf("%s: %d runs after Capture", name, runs)
		}
		for range 3 {
			if err := g.Replay(); err != nil {
				t.Fatal(err)
			}
		}
		if v, _ := x.Float32s(); v[0] != 4 || runs != 4 {
			t.Fatalf("%s: x = %v after %d runs", name, v, runs)
		}
		if err := g.Close(); err != nil {
			t.Fatal(err)
		}
		if err := g.Replay(); !errors.Is(err, ErrClosed) {
			t.Fatalf("Replay after Close: %v", err)
		}
		boom := errors.New("boom")
		if _, err := d.Capture(func() error { return boom }); !errors.Is(err, boom) {
			t.Fatalf("Capture of a failing function: %v", err)
		}
		if _, err := d.Capture(nil); !errors.Is(err, ErrValue) {
			t.Fatalf("Capture(nil): %v", err)
		}
	}
}
