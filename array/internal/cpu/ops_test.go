package cpu

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gocu-dev/gocu/array/internal/backend"
)

// TestEveryOp runs every unary and binary operation of the op table on
// every dtype it is defined on, so an operation without a CPU case fails
// here. Float results are checked against the table's function, and
// inputs include NaN, infinities and signed zeros.
func TestEveryOp(t *testing.T) {
	be := New(0)
	r := rand.New(rand.NewPCG(uint64(rand.Int64()), 7))
	const n = 3000 // several blocks
	for _, op := range append(append([]backend.Op{}, backend.UnaryOps...), backend.BinaryOps...) {
		if op == backend.OpCast {
			continue // TestCasts in package array covers every pair
		}
		for _, dt := range backend.DTypes {
			if !backend.Supports(op, dt) {
				continue
			}
			p := &backend.Program{Shape: []int{n}}
			var xs [2][]float64
			for a := 0; a < op.Arity(); a++ {
				buf, vals := randInput(t, be, r, dt, n)
				xs[a] = vals
				p.Inputs = append(p.Inputs, backend.Operand{Buf: buf, Layout: backend.Contiguous(p.Shape)})
				p.Nodes = append(p.Nodes, backend.Node{Op: backend.OpInput, DType: dt, Args: [3]int32{int32(a)}})
			}
			p.Nodes = append(p.Nodes, backend.Node{Op: op, DType: op.Result(dt), Args: [3]int32{0, int32(op.Arity() - 1)}})
			if err := p.Validate(); err != nil {
				t.Fatalf("%v %v: %v", op, dt, err)
			}
			out, err := be.Alloc(op.Result(dt), n)
			if err != nil {
				t.Fatal(err)
			}
			poison(be, out, op.Result(dt), n)
			if err := be.Eval(p, backend.Operand{Buf: out, Layout: backend.Contiguous(p.Shape)}); err != nil {
				t.Fatalf("%v %v: %v", op, dt, err)
			}
			in := backend.Ops[op]
			if !dt.IsFloat() || in.F == nil && in.F2 == nil {
				continue
			}
			got := readFloats(be, out, dt, n)
			for i := range got {
				var want float64
				if in.F != nil {
					want = in.F(xs[0][i])
				} else {
					want = in.F2(xs[0][i], xs[1][i])
				}
				if dt == backend.Float32 {
					want = float64(float32(want))
				}
				if !(got[i] == want || got[i] != got[i] && want != want) || math.Signbit(got[i]) != math.Signbit(want) && want == want {
					t.Errorf("%v %v (%v, %v) = %v, want %v", op, dt, xs[0][i], xs[1][i], got[i], want)
					break
				}
			}
		}
	}
}

var specials = []float64{math.NaN(), math.Inf(1), math.Inf(-1), 0, math.Copysign(0, -1), 1, -1, 0.5, -0.5, 2}

// randInput returns a buffer of random values (floats as float64 too).
func randInput(t *testing.T, be *Backend, r *rand.Rand, dt backend.DType, n int) (backend.Buffer, []float64) {
	buf, err := be.Alloc(dt, n)
	if err != nil {
		t.Fatal(err)
	}
	vals := make([]float64, n)
	for i := range vals {
		switch {
		case dt.IsFloat() && i%7 == 0:
			vals[i] = specials[r.IntN(len(specials))]
		case dt.IsFloat():
			vals[i] = r.NormFloat64() * 3
		case dt == backend.Bool:
			vals[i] = float64(r.IntN(2))
		case dt == backend.Uint8:
			vals[i] = float64(r.IntN(256))
		default:
			vals[i] = float64(r.IntN(201) - 100)
		}
	}
	var src any
	switch dt {
	case backend.Float32:
		s := make([]float32, n)
		for i, v := range vals {
			s[i] = float32(v)
			vals[i] = float64(s[i])
		}
		src = s
	case backend.Float64:
		src = vals
	case backend.Int32:
		src = conv[int32](vals)
	case backend.Int64:
		src = conv[int64](vals)
	case backend.Uint8:
		src = conv[uint8](vals)
	case backend.Bool:
		s := make([]bool, n)
		for i, v := range vals {
			s[i] = v != 0
		}
		src = s
	}
	if err := be.Write(buf, 0, src); err != nil {
		t.Fatal(err)
	}
	return buf, vals
}

func conv[T int32 | int64 | uint8](vals []float64) []T {
	s := make([]T, len(vals))
	for i, v := range vals {
		s[i] = T(v)
	}
	return s
}

// poison fills an output with values no operation produces everywhere.
func poison(be *Backend, buf backend.Buffer, dt backend.DType, n int) {
	b := asBuffer(buf)
	switch dt {
	case backend.Float32:
		fill(b.f32[:n], 12345.5)
	case backend.Float64:
		fill(b.f64[:n], 12345.5)
	}
}

func readFloats(be *Backend, buf backend.Buffer, dt backend.DType, n int) []float64 {
	got := make([]float64, n)
	if dt == backend.Float64 {
		be.Read(got, buf, 0)
		return got
	}
	f := make([]float32, n)
	be.Read(f, buf, 0)
	for i, v := range f {
		got[i] = float64(v)
	}
	return got
}
