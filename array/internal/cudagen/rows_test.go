package cudagen

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gocu-dev/gocu/array/internal/backend"
	"github.com/gocu-dev/gocu/array/internal/cpu"
)

// Softmax, log-softmax and quantisation along rows, planned for the row
// kernel (contiguous rows, registers) or the general axis kernel (strided
// input, axis 0), executed on the host against the CPU backend: the
// quantised values and scales bit for bit, softmax to 1e-6.
func TestRowAndQuantizeKernelsOnHost(t *testing.T) {
	clangPath(t)
	be := cpu.New(0)
	r := rand.New(rand.NewPCG(5, 6))
	h := newHostRun(t)
	type check struct {
		name  string
		dt    backend.DType
		out   *cpu.Buffer
		exact bool
		cpu   func()
	}
	var checks []check
	rowPlans := 0
	for _, sh := range [][]int{{3, 50}, {5, 64}, {3, 1000}, {2, 4100}, {2, 16384}, {2, 3, 8}} {
		for _, layout := range []string{"contiguous", "transposed", "bfloat16 input", "axis 0"} {
			for _, kind := range []backend.AxisKind{backend.Softmax, backend.LogSoftmax, backend.Quantize} {
				outs := []backend.DType{backend.Float32}
				if kind == backend.Quantize {
					outs = []backend.DType{backend.Int8, backend.Float8E4M3, backend.Float8E5M2}
				}
				if layout != "contiguous" && layout != "bfloat16 input" && backend.Size(sh) > 4000 {
					continue // the general kernels run a block per row: slow on the host
				}
				for _, outDT := range outs {
					n := backend.Size(sh)
					axis := len(sh) - 1
					if layout == "axis 0" {
						axis = 0
					}
					var p *backend.Program
					switch layout {
					case "bfloat16 input":
						buf := randBuffer(be, r, backend.BFloat16, n)
						p = &backend.Program{Shape: sh, Inputs: []backend.Operand{{Buf: buf, Layout: backend.Contiguous(sh)}},
							Nodes: []backend.Node{{Op: backend.OpInput, DType: backend.BFloat16}, {Op: backend.OpCast, DType: backend.Float32}}}
					default:
						p = randomReduceInput(r, be, backend.Float32, sh, true)
						if layout == "contiguous" || layout == "axis 0" {
							p.Inputs[0].Layout = backend.Contiguous(sh)
						}
						if layout == "transposed" && len(sh) == 2 {
							p.Inputs[0].Layout = backend.Layout{Shape: sh, Strides: []int{1, sh[0]}}
						}
					}
					if err := p.Validate(); err != nil {
						t.Fatal(err)
					}
					gpuOut, _ := be.Alloc(outDT, n)
					cpuOut, _ := be.Alloc(outDT, n)
					rows := n / sh[axis]
					gpuScale, _ := be.Alloc(backend.Float32, rows)
					cpuScale, _ := be.Alloc(backend.Float32, rows)
					req := &backend.AxisOp{Kind: kind, In: p, Axis: axis, Out: backend.Operand{Buf: gpuOut, Layout: backend.Contiguous(sh)}}
					if kind == backend.Quantize {
						req.Scale = backend.Operand{Buf: gpuScale, Layout: backend.Contiguous([]int{rows})}
						req.QMax = QMax(outDT)
					}
					pl, err := PlanAxis(req, hostOpts)
					if err != nil {
						t.Fatal(err)
					}
					if len(pl.Launches) == 1 && pl.Launches[0].Kernel.Grid == GridRows && bytes.HasPrefix([]byte(pl.Launches[0].Kernel.Name), []byte("gocu_rows_")) {
						rowPlans++
					}
					name := fmt.Sprintf("%v into %v %v %s axis %d", kind, outDT, sh, layout, axis)
					cpuReq := *req
					cpuReq.Out.Buf = cpuOut
					cpuReq.Scale.Buf = cpuScale
					if kind != backend.Quantize {
						cpuReq.Scale.Buf = nil
					}
					done := false
					ref := func() {
						if done {
							return
						}
						done = true
						if err := be.AxisOp(&cpuReq); err != nil {
							t.Fatal(err)
						}
					}
					h.add(name, pl, gpuOut.(*cpu.Buffer))
					checks = append(checks, check{name, outDT, cpuOut.(*cpu.Buffer), kind == backend.Quantize, ref})
					if kind == backend.Quantize {
						h.add(name+" scales", pl, gpuScale.(*cpu.Buffer))
						checks = append(checks, check{name + " scales", backend.Float32, cpuScale.(*cpu.Buffer), true, ref})
					}
				}
			}
		}
	}
	if rowPlans < 20 {
		t.Errorf("only %d plans took the row kernel", rowPlans)
	}
	got := h.run()
	bad := 0
	for i, c := range checks {
		c.cpu()
		want := rawOf(c.out)
		ok := bytes.Equal(got[i], want)
		if !ok && !c.exact {
			ok = closeRaw(c.dt, got[i], want)
		}
		if !ok {
			bad++
			t.Errorf("%s: host %s, CPU %s", c.name, decode(c.dt, got[i]), decode(c.dt, want))
		}
	}
	t.Logf("%d operations executed on the host (%d planned for the row kernel), %d differ", len(checks), rowPlans, bad)
}

// The int8 product's fallback kernel (int8 operands, int32 result) on the
// host against the CPU backend.
func TestInt8FallbackMatMulOnHost(t *testing.T) {
	clangPath(t)
	be := cpu.New(0)
	r := rand.New(rand.NewPCG(7, 8))
	h := newHostRun(t)
	M, N, K := 19, 21, 35
	a := randBuffer(be, r, backend.Int8, 3*M*K)
	b := randBuffer(be, r, backend.Int8, 2*K*N+7)
	gpuOut, _ := be.Alloc(backend.Int32, 6*M*N)
	cpuOut, _ := be.Alloc(backend.Int32, 6*M*N)
	mm := &backend.MatMul{M: M, N: N, K: K, Batch: []int{2, 3},
		A: backend.Matrix{Buf: a, BatchStrides: []int{0, M * K}, RowStride: 1, ColStride: M},
		B: backend.Matrix{Buf: b, Offset: 7, BatchStrides: []int{K * N, 0}, RowStride: N, ColStride: 1},
		C: backend.Matrix{Buf: gpuOut, RowStride: N, ColStride: 1}}
	pl, err := PlanIntMatMul(mm, hostOpts)
	if err != nil {
		t.Fatal(err)
	}
	h.add("int8 matmul", pl, gpuOut.(*cpu.Buffer))
	got := h.run()
	cpuReq := *mm
	cpuReq.C.Buf = cpuOut
	if err := be.MatMul(&cpuReq); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got[0], rawOf(cpuOut.(*cpu.Buffer))) {
		t.Errorf("int8 matmul: host %s, CPU %s", decode(backend.Int32, got[0]), decode(backend.Int32, rawOf(cpuOut.(*cpu.Buffer))))
	}
}

// Elementwise programs over storage types, planned as the GPU plans them
// (8-wide vectors for 1- and 2-byte operands), on the host against the
// CPU backend, bit for bit.
func TestStorageElementwiseOnHost(t *testing.T) {
	clangPath(t)
	be := cpu.New(0)
	r := rand.New(rand.NewPCG(9, 10))
	h := newHostRun(t)
	type check struct {
		name string
		out  *cpu.Buffer
		cpu  func()
	}
	var checks []check
	const n = 5003
	for _, dt := range []backend.DType{backend.Float16, backend.BFloat16, backend.Float8E4M3, backend.Float8E5M2, backend.Int8,
		backend.Int16, backend.Uint16, backend.Uint32, backend.Uint64} {
		for _, prog := range []string{"add", "narrow", "widen", "narrow64", "fill"} {
			var p *backend.Program
			outDT := dt
			switch prog {
			case "add": // x + y, computed in the compute type
				x, y := randBuffer(be, r, dt, n), randBuffer(be, r, dt, n)
				c := dt.Compute()
				p = &backend.Program{Shape: []int{n},
					Inputs: []backend.Operand{{Buf: x, Layout: backend.Contiguous([]int{n})}, {Buf: y, Layout: backend.Contiguous([]int{n})}},
					Nodes: []backend.Node{{Op: backend.OpInput, DType: dt}, {Op: backend.OpCast, DType: c, Args: [3]int32{0}},
						{Op: backend.OpInput, DType: dt, Args: [3]int32{1}}, {Op: backend.OpCast, DType: c, Args: [3]int32{2}},
						{Op: backend.OpAdd, DType: c, Args: [3]int32{1, 3}}, {Op: backend.OpCast, DType: dt, Args: [3]int32{4}}}}
			case "fill": // a scalar parameter of dt (Full), its top bit set
				if !dt.IsStorageInt() {
					continue
				}
				p = &backend.Program{Shape: []int{n}, Scalars: []backend.Scalar{{DType: dt, I: -0x5a5a5a5a5a5a5a5b}},
					Nodes: []backend.Node{{Op: backend.OpScalar, DType: dt}}}
			case "narrow64": // float64 of every magnitude (NaN, Inf, beyond 2^63) to dt
				if !dt.IsStorageInt() {
					continue
				}
				x := randBuffer(be, r, backend.Float64, n)
				f := x.Slice().([]float64)
				for i := range f {
					f[i] *= math.Ldexp(1, r.IntN(70))
				}
				p = &backend.Program{Shape: []int{n}, Inputs: []backend.Operand{{Buf: x, Layout: backend.Contiguous([]int{n})}},
					Nodes: []backend.Node{{Op: backend.OpInput, DType: backend.Float64}, {Op: backend.OpCast, DType: dt}}}
			case "narrow": // float32 (a wide range, NaN, Inf) to dt
				x := randBuffer(be, r, backend.Float32, n)
				f := x.Slice().([]float32)
				for i := range f {
					f[i] *= float32(math.Ldexp(1, r.IntN(40)-20))
				}
				p = &backend.Program{Shape: []int{n}, Inputs: []backend.Operand{{Buf: x, Layout: backend.Contiguous([]int{n})}},
					Nodes: []backend.Node{{Op: backend.OpInput, DType: backend.Float32}, {Op: backend.OpCast, DType: dt}}}
			case "widen": // dt times a float32 scalar (dequantisation)
				x := randBuffer(be, r, dt, n)
				outDT = backend.Float32
				p = &backend.Program{Shape: []int{n}, Inputs: []backend.Operand{{Buf: x, Layout: backend.Contiguous([]int{n})}},
					Scalars: []backend.Scalar{{DType: backend.Float32, F: 0.0078125}},
					Nodes: []backend.Node{{Op: backend.OpInput, DType: dt}, {Op: backend.OpCast, DType: backend.Float32},
						{Op: backend.OpScalar, DType: backend.Float32}, {Op: backend.OpMul, DType: backend.Float32, Args: [3]int32{1, 2}}}}
			}
			if err := p.Validate(); err != nil {
				t.Fatalf("%v %s: %v", dt, prog, err)
			}
			gpuOut, _ := be.Alloc(outDT, n)
			cpuOut, _ := be.Alloc(outDT, n)
			out := backend.Operand{Buf: gpuOut, Layout: backend.Contiguous([]int{n})}
			pl, err := PlanEval(p, out, hostOpts)
			if err != nil {
				t.Fatal(err)
			}
			if s := SpecFor(p, out, hostOpts.Aligned); prog == "add" && dt.Size() <= 2 && s.Vec != 8 {
				t.Errorf("%v add: vectors of %d, want 8", dt, s.Vec)
			}
			name := fmt.Sprintf("%s %v", prog, dt)
			h.add(name, pl, gpuOut.(*cpu.Buffer))
			checks = append(checks, check{name, cpuOut.(*cpu.Buffer), func() {
				if err := be.Eval(p, backend.Operand{Buf: cpuOut, Layout: backend.Contiguous([]int{n})}); err != nil {
					t.Fatal(err)
				}
			}})
		}
	}
	got := h.run()
	for i, c := range checks {
		c.cpu()
		if want := rawOf(c.out); !bytes.Equal(got[i], want) {
			t.Errorf("%s: host and CPU differ", c.name)
		}
	}
}
