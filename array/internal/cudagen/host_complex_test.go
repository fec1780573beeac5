package cudagen

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/gocu-dev/gocu/array/internal/backend"
	"github.com/gocu-dev/gocu/array/internal/cpu"
	"github.com/gocu-dev/gocu/internal/clangtest"
)

// complexProduct appends the nodes of a·b over inputs 0-3 (the real and
// imaginary parts of a, then of b) and returns the nodes of its parts.
func complexProduct(p *backend.Program, dt backend.DType) (re, im int32) {
	add := func(op backend.Op, a, b int32) int32 {
		p.Nodes = append(p.Nodes, backend.Node{Op: op, DType: dt, Args: [3]int32{a, b}})
		return int32(len(p.Nodes) - 1)
	}
	for i := range 4 {
		p.Nodes = append(p.Nodes, backend.Node{Op: backend.OpInput, DType: dt, Args: [3]int32{int32(i)}})
	}
	re = add(backend.OpSub, add(backend.OpMul, 0, 2), add(backend.OpMul, 1, 3))
	im = add(backend.OpAdd, add(backend.OpMul, 0, 3), add(backend.OpMul, 1, 2))
	return re, im
}

// TestComplexPartPlansRunOnHost runs the programs package array makes of
// complex operations, on the host against the CPU backend: abs(a·b) over
// the stride-2 part views of two complex buffers, and a·b written as a
// complex result through its float view (each part broadcast along a
// trailing axis of 2 and chosen by the parity of the flat index), into a
// contiguous output and into a strided one.
func TestComplexPartPlansRunOnHost(t *testing.T) {
	t.Parallel()
	clangtest.Need(t, "clang++-16")
	be := cpu.New(0)
	r := rand.New(rand.NewPCG(31, 32))
	h := newHostRun(t)
	type check struct {
		name string
		dt   backend.DType
		out  *cpu.Buffer
		cpu  func()
	}
	var checks []check
	run := func(name string, p *backend.Program, out backend.Operand) {
		if err := p.Validate(); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		cpuOut := ixClone(be, out.Buf.(*cpu.Buffer))
		pl, err := PlanEval(p, out, hostOpts)
		if err != nil {
			t.Fatal(err)
		}
		h.add(name, pl, out.Buf.(*cpu.Buffer))
		co := backend.Operand{Buf: cpuOut, Layout: out.Layout}
		checks = append(checks, check{name, out.Buf.DType(), cpuOut, func() {
			if err := be.Eval(p, co); err != nil {
				t.Fatal(err)
			}
		}})
	}
	for _, dt := range []backend.DType{backend.Float32, backend.Float64} {
		for _, n := range []int{5, 3001} {
			a, b := randBuffer(be, r, dt, 2*n), randBuffer(be, r, dt, 2*n)
			part := func(buf *cpu.Buffer, k int, unit bool) backend.Operand {
				if unit {
					return backend.Operand{Buf: buf, Layout: backend.Layout{Shape: []int{n, 2}, Strides: []int{2, 0}, Offset: k}}
				}
				return backend.Operand{Buf: buf, Layout: backend.Layout{Shape: []int{n}, Strides: []int{2}, Offset: k}}
			}

			p := &backend.Program{Shape: []int{n}, Inputs: []backend.Operand{part(a, 0, false), part(a, 1, false), part(b, 0, false), part(b, 1, false)}}
			re, im := complexProduct(p, dt)
			p.Nodes = append(p.Nodes, backend.Node{Op: backend.OpHypot, DType: dt, Args: [3]int32{re, im}})
			out := randBuffer(be, r, dt, n)
			run(fmt.Sprintf("abs(a*b) %v n=%d", dt, n), p, backend.Operand{Buf: out, Layout: backend.Contiguous([]int{n})})

			for _, strided := range []bool{false, true} {
				shape := []int{n, 2}
				p := &backend.Program{Shape: shape, Inputs: []backend.Operand{part(a, 0, true), part(a, 1, true), part(b, 0, true), part(b, 1, true)},
					Scalars: []backend.Scalar{{DType: backend.Int64, I: 1}, {DType: backend.Int64, I: 0}}}
				re, im := complexProduct(p, dt)
				p.Nodes = append(p.Nodes,
					backend.Node{Op: backend.OpIota, DType: backend.Int64},
					backend.Node{Op: backend.OpScalar, DType: backend.Int64, Args: [3]int32{0}},
					backend.Node{Op: backend.OpScalar, DType: backend.Int64, Args: [3]int32{1}})
				k := int32(len(p.Nodes))
				p.Nodes = append(p.Nodes,
					backend.Node{Op: backend.OpBitAnd, DType: backend.Int64, Args: [3]int32{k - 3, k - 2}},
					backend.Node{Op: backend.OpEq, DType: backend.Bool, Args: [3]int32{k, k - 1}},
					backend.Node{Op: backend.OpWhere, DType: dt, Args: [3]int32{k + 1, re, im}})
				lay := backend.Contiguous(shape)
				size := 2 * n
				if strided {
					// Every other complex element of a larger array.
					lay = backend.Layout{Shape: shape, Strides: []int{4, 1}, Offset: 2}
					size = 4*n + 2
				}
				out := randBuffer(be, r, dt, size)
				run(fmt.Sprintf("pack a*b %v n=%d strided=%v", dt, n, strided), p, backend.Operand{Buf: out, Layout: lay})
			}
		}
	}
	got := h.run()
	for i, c := range checks {
		c.cpu()
		if want := rawOf(c.out); !closeRaw(c.dt, got[i], want) {
			t.Errorf("%s: the kernel and the CPU backend differ", c.name)
		}
	}
}
