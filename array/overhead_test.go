package array

import (
	"math"
	"runtime"
	"testing"

	"github.com/gocu-dev/gocu/array/internal/backend"
)

// TestOverheadAllocs pins the allocations of a tiny elementwise operation,
// evaluated and closed, on a backend that does nothing (the array layer's
// own): the result array, which holds its expression's root node, and the
// backend's buffer. Storage objects, dependency tokens and evaluation
// scratch are recycled, operands' leaf expressions and recent scalars'
// nodes cached. A new allocation here is a cost on every operation
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
		{"x.Add(1)", func() *Array { return x.Add(1) }, 2},
		{"x.Exp()", func() *Array { return x.Exp() }, 2},
		// x.Mul(y)'s node is copied into the expression that uses it, the
		// general path makes the scalar's node;
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
		{"x.Add(1)", func() *Array { return x.Add(1) }, 2},
	} {
		closing(c.op().Eval()) // compiles and plans
		// The least of three counts: the cleanups of an earlier test's
		// garbage allocate too, on their own goroutine, when a collection
		// falls inside the count (seen once on an H100 run of two tests).
		n := math.Inf(1)
		for range 3 {
			runtime.GC()
			n = min(n, testing.AllocsPerRun(2000, func() {
				z := c.op().Eval()
				z.Close()
			}))
		}
		if n > c.max {
			t.Errorf("%s, evaluated and closed, on %v: %v allocations, want at most %v", c.name, g, n, c.max)
		}
	}
	if err := g.Sync(); err != nil {
		t.Fatal(err)
	}
}

// binaryArrays and binaryScalar, binaryOp's short paths for two evaluated
// arrays of one dtype and shape and for an array and a Go scalar, build
// what the general path builds (the same node over the same leaves and
// scalar) or leave the case to it: every binary operation, every dtype,
// the same array twice, scalars that change the dtype or do not fit, and
// arrays that do not qualify (pending, other shapes or dtypes).
func TestBinaryShortPathBuildsTheGeneralExpression(t *testing.T) {
	d := newDevice(nullBackend{}, nil)
	dts := []DType{Bool, Uint8, Int8, Int32, Int64, Float16, BFloat16, Float32, Float64, Float8E4M3, Float8E5M2}
	for op := backend.OpAdd; op <= backend.OpXor; op++ {
		for _, dt := range dts {
			x, y := d.Zeros(dt, 2, 3).Eval(), d.Zeros(dt, 2, 3).Eval()
			_ = x.Add(x).Close() // makes the leaves the short path reads
			_ = y.Add(y).Close()
			for _, pair := range [][2]*Array{{x, y}, {x, x}} {
				a, b := pair[0], pair[1]
				short := binaryArrays(op, a, b)
				general := binaryOperands("Op", op, operand{arr: a}, operand{arr: b})
				if short == nil {
					if general.err == nil && !dt.IsStorage() && !op.IsCompare() && !op.IsLogical() &&
						(op != backend.OpDiv || dt.IsFloating()) {
						t.Errorf("%v %v: not taken", op, dt)
					}
					general.Close()
					continue
				}
				if general.err != nil {
					t.Errorf("%v %v: the short path built what the general one refuses: %v", op, dt, general.err)
				} else if !sameExpr(short.ex, general.ex) || short.dt != general.dt || !sameShape(short.shape, general.shape) {
					t.Errorf("%v %v: the short path's expression differs from the general one's", op, dt)
				}
				short.Close()
				general.Close()
			}
			for _, v := range []any{1.5, 3, 300, -1, float32(2.5), 0.0} {
				sv, _, _ := scalarOf(v)
				short := binaryScalar(op, x, sv)
				general := binaryOperands("Op", op, operand{arr: x}, operand{sc: sv})
				if short == nil {
					if general.err == nil && !dt.IsStorage() && !op.IsCompare() && !op.IsLogical() &&
						(op != backend.OpDiv || dt.IsFloating()) && withWeak(dt, sv) == dt && sv.fits(dt) {
						t.Errorf("%v %v %v: not taken", op, dt, v)
					}
					general.Close()
					continue
				}
				if general.err != nil {
					t.Errorf("%v %v %v: the short path built what the general one refuses: %v", op, dt, v, general.err)
				} else if !sameExpr(short.ex, general.ex) || short.dt != general.dt || !sameShape(short.shape, general.shape) {
					t.Errorf("%v %v %v: the short path's expression differs from the general one's", op, dt, v)
				}
				short.Close()
				general.Close()
			}
			for _, pair := range [][2]*Array{{x, x.Add(x)}, {x, d.Zeros(dt, 3).Eval()}, {x, d.Zeros(Float64, 2, 3).Eval()}} {
				if dt != Float64 || pair[1].dt != Float64 {
					if z := binaryArrays(op, pair[0], pair[1]); z != nil {
						t.Errorf("%v %v: taken for operands it does not serve", op, dt)
					}
				}
			}
		}
	}
}

// sameExpr compares expression trees by structure and leaves.
func sameExpr(a, b *expr) bool {
	if a.op != b.op || a.dt != b.dt || a.nargs != b.nargs || a.st != b.st || a.sc != b.sc || !sameShape(a.shape, b.shape) {
		return false
	}
	for i := range a.args() {
		if !sameExpr(a.argv[i], b.argv[i]) {
			return false
		}
	}
	return true
}
