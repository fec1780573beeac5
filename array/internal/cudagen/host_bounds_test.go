package cudagen

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/gocu-dev/gocu/array/internal/backend"
	"github.com/gocu-dev/gocu/array/internal/cpu"
	"github.com/gocu-dev/gocu/internal/clangtest"
)

// gpuOpts are planning options as the GPU backend sets them on an H100 or
// H200 (132 multiprocessors, no grid cap, alignment from the offsets of
// 256-byte aligned allocations), so that grids and specialisations match
// what the device runs.
var gpuOpts = Options{SMs: 132, Aligned: func(o backend.Operand, n int) bool { return o.Layout.Offset*o.DType().Size()%n == 0 }}

// TestEmptyAxisPlansRunOnHost runs the softmax family over empty axes as
// the GPU backend plans them, with the buffers it binds: an empty array's
// buffer has no element and the device address 0. On an H200,
// LogSumExp over axis 0 of a float32 [0 3] transposed view (strides
// [1 0]: a broadcast, "Const", input) launched the axis kernel with a
// grid of 3 rows, which read the input's one element before its loops and
// faulted with CUDA_ERROR_ILLEGAL_ADDRESS.
func TestEmptyAxisPlansRunOnHost(t *testing.T) {
	t.Parallel()
	clangtest.Need(t, "clang++-16")
	be := cpu.New(0)
	h := newHostRun(t)
	type check struct {
		name string
		dt   backend.DType
		out  *cpu.Buffer
		cpu  func()
	}
	var checks []check
	layouts := []backend.Layout{
		{Shape: []int{0, 3}, Strides: []int{1, 0}}, // the H200 case: a transposed [3 0] array
		{Shape: []int{3, 0}, Strides: []int{0, 2}}, // a stepped view of [6 0]
		{Shape: []int{3, 0}, Strides: []int{0, 1}}, // contiguous [3 0]
		{Shape: []int{0, 3}, Strides: []int{3, 1}}, // contiguous [0 3]
		{Shape: []int{2, 0, 4}, Strides: []int{0, 4, 1}},
	}
	for _, lay := range layouts {
		for axis := range lay.Shape {
			for _, kind := range []backend.AxisKind{backend.LogSumExp, backend.Softmax, backend.LogSoftmax} {
				for _, dt := range []backend.DType{backend.Float32, backend.Float64} {
					buf, _ := be.Alloc(dt, 0)
					p := &backend.Program{Shape: lay.Shape, Inputs: []backend.Operand{{Buf: buf, Layout: lay}},
						Nodes: []backend.Node{{Op: backend.OpInput, DType: dt}}}
					oshape := lay.Shape
					if kind == backend.LogSumExp {
						oshape = append(append([]int{}, lay.Shape[:axis]...), lay.Shape[axis+1:]...)
					}
					n := backend.Size(oshape)
					gpuOut := poisoned(be, dt, n)
					cpuOut := poisoned(be, dt, n)
					req := &backend.AxisOp{Kind: kind, In: p, Axis: axis, Out: backend.Operand{Buf: gpuOut, Layout: backend.Contiguous(oshape)}}
					pl, err := PlanAxis(req, gpuOpts)
					if err != nil {
						t.Fatal(err)
					}
					name := fmt.Sprintf("%v %v %s axis %d", kind, dt, layoutString(lay), axis)
					for _, l := range pl.Launches {
						for i, o := range l.Operands {
							if o.Buf.Len() == 0 && strings.HasPrefix(l.Kernel.Name, "gocu_axis") {
								t.Errorf("%s: the axis kernel %s is launched (grid %v) on empty operand %d", name, l.Kernel.Name, l.Grid, i)
							}
						}
					}
					h.add(name, pl, gpuOut)
					cpuReq := *req
					cpuReq.Out.Buf = cpuOut
					checks = append(checks, check{name, dt, cpuOut, func() {
						if err := be.AxisOp(&cpuReq); err != nil {
							t.Fatal(err)
						}
					}})
				}
			}
		}
	}
	got := h.run()
	for i, c := range checks {
		c.cpu()
		want := rawOf(c.out)
		if !bytes.Equal(got[i], want) {
			t.Errorf("%s: host %s, CPU %s", c.name, decode(c.dt, got[i]), decode(c.dt, want))
		}
	}
}

// poisoned returns a buffer of n NaNs, so that an output the plan leaves
// unwritten differs from the CPU backend's -Inf.
func poisoned(be *cpu.Backend, dt backend.DType, n int) *cpu.Buffer {
	b, _ := be.Alloc(dt, n)
	switch s := b.(*cpu.Buffer).Slice().(type) {
	case []float32:
		for i := range s {
			s[i] = float32(math.NaN())
		}
	case []float64:
		for i := range s {
			s[i] = math.NaN()
		}
	}
	return b.(*cpu.Buffer)
}

// TestHostHarnessCatchesOutOfBounds checks the harness itself: a launch
// bound to a buffer one element shorter than its layout addresses (row
// reductions, the vectorised full reduction, a softmax) or to an empty
// buffer must fail the run with the sanitizer's report naming the plan.
func TestHostHarnessCatchesOutOfBounds(t *testing.T) {
	t.Parallel()
	clangtest.Need(t, "clang++-16")
	be := cpu.New(0)
	r := rand.New(rand.NewPCG(5, 6))
	cases := []struct {
		name   string
		short  int // elements missing from the buffer
		plan   func(in backend.Operand, out backend.Buffer) (*Plan, error)
		shape  []int
		outLen int
	}{
		{"sum rows", 1, func(in backend.Operand, out backend.Buffer) (*Plan, error) {
			return PlanReduce(&backend.Reduction{Op: backend.Sum, In: inputProgram(in), Axes: []int{1}, Out: backend.Operand{Buf: out, Layout: backend.Contiguous([]int{3})}}, gpuOpts)
		}, []int{3, 50}, 3},
		{"sum all, float4 loads", 1, func(in backend.Operand, out backend.Buffer) (*Plan, error) {
			return PlanReduce(&backend.Reduction{Op: backend.Sum, In: inputProgram(in), Axes: []int{0}, Out: backend.Operand{Buf: out, Layout: backend.Contiguous(nil)}}, gpuOpts)
		}, []int{4096}, 1},
		{"softmax", 1, func(in backend.Operand, out backend.Buffer) (*Plan, error) {
			return PlanAxis(&backend.AxisOp{Kind: backend.Softmax, In: inputProgram(in), Axis: 1, Out: backend.Operand{Buf: out, Layout: backend.Contiguous([]int{4, 7})}}, gpuOpts)
		}, []int{4, 7}, 28},
		{"broadcast input, empty buffer", 0, func(in backend.Operand, out backend.Buffer) (*Plan, error) {
			in.Buf, _ = be.Alloc(backend.Float32, 0)
			in.Layout = backend.Layout{Shape: []int{3, 5}, Strides: []int{0, 0}}
			return PlanReduce(&backend.Reduction{Op: backend.Max, In: inputProgram(in), Axes: []int{1}, Out: backend.Operand{Buf: out, Layout: backend.Contiguous([]int{3})}}, gpuOpts)
		}, []int{3, 5}, 3},
	}
	for _, c := range cases {
		t.Run(strings.ReplaceAll(c.name, " ", "_"), func(t *testing.T) {
			t.Parallel()
			n := backend.Size(c.shape)
			in := backend.Operand{Buf: randBuffer(be, r, backend.Float32, n-c.short), Layout: backend.Contiguous(c.shape)}
			out, _ := be.Alloc(backend.Float32, c.outLen)
			pl, err := c.plan(in, out)
			if err != nil {
				t.Fatal(err)
			}
			h := newHostRun(t)
			h.add(c.name, pl, out.(*cpu.Buffer))
			_, err = h.runErr()
			if err == nil {
				t.Fatalf("%s: a launch reading past its buffer ran without a report", c.name)
			}
			msg := err.Error()
			if !strings.Contains(msg, "AddressSanitizer") || !strings.Contains(msg, "the fault is in the plan for: "+c.name) {
				t.Errorf("%s: the report does not name the fault and the plan:\n%s", c.name, msg)
			}
		})
	}
}

func inputProgram(in backend.Operand) *backend.Program {
	return &backend.Program{Shape: in.Layout.Shape, Inputs: []backend.Operand{in},
		Nodes: []backend.Node{{Op: backend.OpInput, DType: in.DType()}}}
}
