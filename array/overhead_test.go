package array

import "testing"

// TestOverheadAllocs pins the allocations of a tiny elementwise operation,
// evaluated and closed, on a backend that does nothing (the array layer's
// own): the result array, which holds its expression's root node, and the
// backend's buffer; a scalar operand adds its node. Storage objects,
// dependency tokens and evaluation scratch are recycled, operands' leaf
// expressions cached. A new allocation here is a cost on every operation
// on every device (BenchmarkOverheadGPU reports allocs/op on the device).
func TestOverheadAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts are not meaningful under the race detector")
	}
	d := newDevice(nullBackend{}, nil)
	x, y := d.Zeros(Float32, 16).Eval(), d.Zeros(Float32, 16).Eval()
	for _, c := range []struct {
		name string
		op   func() *Array
		max  float64
	}{
		{"x.Add(y)", func() *Array { return x.Add(y) }, 2},
		{"x.Add(1)", func() *Array { return x.Add(1) }, 3},
		{"x.Exp()", func() *Array { return x.Exp() }, 2},
		// x.Mul(y)'s node is copied into the expression that uses it;
		// x.Mul(y) is listed with x and y when x.Mul(y).Add(1) replaces it
		// as the young array, and dropped with its dependency token, which
		// is not recycled: a token and its weak pointer more.
		{"x.Mul(y).Add(1)", func() *Array { return x.Mul(y).Add(1) }, 7},
	} {
		n := testing.AllocsPerRun(2000, func() {
			z := c.op().Eval()
			z.Close()
		})
		if n > c.max {
			t.Errorf("%s, evaluated and closed: %v allocations, want at most %v", c.name, n, c.max)
		}
	}
}

// TestOverheadAllocsGPU pins the same on a GPU: the array layer's
// allocations, the backend's buffer object holding cuda's Memory; the
// evaluation memo, the plan and the launch allocate nothing. (With -tags
// gocu_fakedriver, TestOverheadAllocsFakeGPU checks it without a GPU.)
func TestOverheadAllocsGPU(t *testing.T) {
	checkOverheadAllocsGPU(t, testGPU(t))
}

func checkOverheadAllocsGPU(t *testing.T, g *Maker) {
	if raceEnabled {
		t.Skip("allocation counts are not meaningful under the race detector")
	}
	x, y := g.Ones(Float32, 16).Eval(), g.Ones(Float32, 16).Eval()
	for _, c := range []struct {
		name string
		op   func() *Array
		max  float64
	}{
		{"x.Add(y)", func() *Array { return x.Add(y) }, 2},
		{"x.Add(1)", func() *Array { return x.Add(1) }, 3},
	} {
		closing(c.op().Eval()) // compiles and plans
		n := testing.AllocsPerRun(2000, func() {
			z := c.op().Eval()
			z.Close()
		})
		if n > c.max {
			t.Errorf("%s, evaluated and closed, on %v: %v allocations, want at most %v", c.name, g, n, c.max)
		}
	}
	if err := g.Sync(); err != nil {
		t.Fatal(err)
	}
}
