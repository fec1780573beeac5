package array

import (
	"math"
	"runtime"
	"runtime/debug"
	"testing"
	"time"
	"unsafe"

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
	z := d.Zeros(Float32, 16).Eval()
	for _, c := range intoCases(t, x, y, z) {
		if n := testing.AllocsPerRun(2000, c.op); n != 0 {
			t.Errorf("%s: %v allocations, want 0", c.name, n)
		}
	}
}

// intoCases are the operations into z that allocate nothing: BinaryInto
// and UnaryInto of evaluated float32 arrays x and y of z's shape, and of
// Go scalars, constant and not (a new value every call).
func intoCases(t *testing.T, x, y, z *Array) []struct {
	name string
	op   func()
} {
	check := func(err error) {
		if err != nil {
			t.Fatal(err)
		}
	}
	lr := float32(0.5)
	return []struct {
		name string
		op   func()
	}{
		{"BinaryInto(z, OpAdd, x, y)", func() { check(BinaryInto(z, OpAdd, x, y)) }},
		{"BinaryInto(z, OpMul, x, 2.5)", func() { check(BinaryInto(z, OpMul, x, 2.5)) }},
		{"BinaryInto(z, OpSub, 1, x)", func() { check(BinaryInto(z, OpSub, 1, x)) }},
		{"BinaryInto(z, OpMul, x, lr), lr changing", func() {
			lr += 0.25
			check(BinaryInto(z, OpMul, x, lr))
		}},
		{"BinaryInto(x, OpMaximum, x, y), in place", func() { check(BinaryInto(x, OpMaximum, x, y)) }},
		{"UnaryInto(z, OpExp, x)", func() { check(UnaryInto(z, OpExp, x)) }},
	}
}

// TestArraySize pins the size of an Array, the one object an operation
// allocates: at most 352 bytes, the size class below 384 (the collector's
// work grows with the bytes allocated).
func TestArraySize(t *testing.T) {
	if n := unsafe.Sizeof(Array{}); n > 352 {
		t.Errorf("an Array takes %d bytes, want at most 352", n)
	}
}

// TestOverheadAllocsGPU pins the same on a GPU: an operation evaluated
// and closed allocates its result array and nothing else (buffer objects
// are recycled; the evaluation memo, the plan and the launch allocate
// nothing), and Into allocates nothing beyond the pending array of the
// expression it is given. (With -tags gocu_fakedriver,
// TestOverheadAllocsFakeGPU checks it without a GPU.)
func TestOverheadAllocsGPU(t *testing.T) {
	checkOverheadAllocsGPU(t, testGPU(t))
}

func checkOverheadAllocsGPU(t *testing.T, g *Maker) {
	if raceEnabled {
		t.Skip("allocation counts are not meaningful under the race detector")
	}
	x, y := g.Ones(Float32, 16).Eval(), g.Ones(Float32, 16).Eval()
	z := g.Zeros(Float32, 16).Eval()
	for _, c := range []struct {
		name string
		op   func()
		want float64
	}{
		{"x.Add(y).Eval()", func() { closing(x.Add(y).Eval()) }, 1},
		{"x.Add(1).Eval()", func() { closing(x.Add(1).Eval()) }, 1},
		{"x.Exp().Eval()", func() { closing(x.Exp().Eval()) }, 1},
		{"x.Add(y).Into(z)", func() {
			if err := x.Add(y).Into(z); err != nil {
				t.Fatal(err)
			}
		}, 1},
		{"x.Mul(2).Into(z)", func() {
			if err := x.Mul(2).Into(z); err != nil {
				t.Fatal(err)
			}
		}, 1},
	} {
		c.op() // compiles and plans
		if n := allocsPerOp(c.op); n != c.want {
			t.Errorf("%s, closed, on %v: %v allocations, want %v", c.name, g, n, c.want)
		}
	}
	for _, c := range intoCases(t, x, y, z) {
		c.op()
		if n := allocsPerOp(c.op); n != 0 {
			t.Errorf("%s, on %v: %v allocations, want 0", c.name, g, n)
		}
	}
	if err := g.Sync(); err != nil {
		t.Fatal(err)
	}
}

// allocsPerOp is testing.AllocsPerRun of op, counted so that other
// goroutines do not add to it: AllocsPerRun counts every goroutine's
// allocations, and the cleanups of an earlier test's garbage allocate on
// their own (seen on H100 and H200 runs). It counts with the collector
// off, after a collection whose cleanups have had their turn, and returns
// the least of three counts.
func allocsPerOp(op func()) float64 {
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	n := math.Inf(1)
	for range 3 {
		done := make(chan struct{})
		runtime.AddCleanup(new([16]byte), func(c chan struct{}) { close(c) }, done)
		runtime.GC()
		select {
		case <-done:
		case <-time.After(time.Second):
		}
		runtime.Gosched()
		n = min(n, testing.AllocsPerRun(2000, op))
	}
	return n
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
