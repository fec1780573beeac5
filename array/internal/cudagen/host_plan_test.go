package cudagen

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/gocu-dev/gocu/array/internal/backend"
	"github.com/gocu-dev/gocu/array/internal/cpu"
	"github.com/gocu-dev/gocu/internal/clangtest"
)

// hostRun executes plans on the host (threads for barriers and shuffles)
// and returns, per plan, the bytes of the buffers its launches wrote.
type hostRun struct {
	t       *testing.T
	src     bytes.Buffer
	data    bytes.Buffer
	bufs    map[*cpu.Buffer]int
	order   []*cpu.Buffer
	kernels map[string]bool
	body    bytes.Buffer
	outputs []*cpu.Buffer // buffers to write back, in order
}

func newHostRun(t *testing.T) *hostRun {
	h := &hostRun{t: t, bufs: map[*cpu.Buffer]int{}, kernels: map[string]bool{}}
	h.src.WriteString(threadedPrelude + hostVectorTypes() + helpersSource + reduceHelpers + philoxSource() + whatSource)
	return h
}

func (h *hostRun) buf(b *cpu.Buffer) string {
	if i, ok := h.bufs[b]; ok {
		return fmt.Sprintf("g%d", i)
	}
	i := len(h.order)
	h.bufs[b] = i
	h.order = append(h.order, b)
	raw := rawOf(b)
	h.data.Write(raw)
	ct := ctype(b.DType())
	fmt.Fprintf(&h.src, "static %s *g%d;\n", ct, i)
	if len(raw) == 0 {
		// The GPU backend binds address 0 for an empty buffer.
		fmt.Fprintf(&h.body, "\tg%d = nullptr;\n", i)
		return fmt.Sprintf("g%d", i)
	}
	// Exactly the buffer's bytes (aligned like device memory): the
	// sanitizer reports any access past them.
	fmt.Fprintf(&h.body, "\tif (posix_memalign((void**)&g%d, 256, %d)) return 4;\n\tif (fread(g%d, 1, %d, in) != %d) return 3;\n", i, len(raw), i, len(raw), len(raw))
	return fmt.Sprintf("g%d", i)
}

// whatSource names the plan that was running when the sanitizer stops
// the harness.
const whatSource = `
extern "C" void __sanitizer_set_death_callback(void (*)(void));
static const char *gocu_what = "(none)";
static void gocu_report() { fprintf(stderr, "gocu harness: the fault is in the plan for: %s (block %u, thread %u)\n", gocu_what, blockIdx.x, threadIdx.x); }
`

// add queues a plan; out is the buffer to read back afterwards. what
// names the request in the sanitizer's report if a launch of the plan
// faults.
func (h *hostRun) add(what string, pl *Plan, out *cpu.Buffer) {
	for _, l := range pl.Launches {
		src := l.Kernel.Source
		for _, pre := range sharedSources {
			src = strings.Replace(src, pre, "", 1)
		}
		if !h.kernels[src] {
			h.kernels[src] = true
			h.src.WriteString(src)
		}
	}
	fmt.Fprintf(&h.body, "\t{\n\t\tgocu_what = %s;\n", strconv.Quote(what))
	for i, s := range pl.Scratch {
		fmt.Fprintf(&h.body, "\t\t%s *s%d = (%s*)calloc(%d, sizeof(%s));\n", ctype(s.DType), i, ctype(s.DType), s.Len, ctype(s.DType))
	}
	for _, l := range pl.Launches {
		var args []string
		for _, a := range l.Args {
			switch a.Type {
			case Ptr:
				if a.Operand < 0 {
					args = append(args, fmt.Sprintf("s%d + %d", -1-a.Operand, a.Offset))
				} else {
					args = append(args, fmt.Sprintf("%s + %d", h.buf(l.Operands[a.Operand].Buf.(*cpu.Buffer)), a.Offset))
				}
			case I64:
				args = append(args, fmt.Sprintf("%dll", int64(a.Bits)))
			case I32:
				args = append(args, fmt.Sprintf("%d", int32(a.Bits)))
			case U64:
				args = append(args, fmt.Sprintf("%dull", a.Bits))
			case F64:
				args = append(args, fmt.Sprintf("__longlong_as_double(%dll)", int64(a.Bits)))
			}
		}
		if l.Block != 256 {
			h.t.Fatalf("block of %d threads", l.Block)
		}
		fmt.Fprintf(&h.body, "\t\tfor (unsigned int z = 0; z < %d; z++) for (unsigned int y = 0; y < %d; y++)\n", l.Grid[2], l.Grid[1])
		fmt.Fprintf(&h.body, "\t\t\tgocu_launch(%d, 256, [=] { blockIdx.y = y; blockIdx.z = z; gridDim.y = %d; gridDim.z = %d; %s(%s); });\n",
			l.Grid[0], l.Grid[1], l.Grid[2], l.Kernel.Name, strings.Join(args, ", "))
	}
	for i, sc := range pl.Scratch {
		if sc.Zero { // the plan must leave it zero for the next one
			fmt.Fprintf(&h.body, "\t\tfor (int k = 0; k < %d; k++) if (s%d[k] != 0) { fprintf(stderr, \"scratch %d not reset by %s\\n\"); return 7; }\n", sc.Len, i, i, pl.Launches[0].Kernel.Name)
		}
		fmt.Fprintf(&h.body, "\t\tfree(s%d);\n", i)
	}
	name := h.buf(out)
	fmt.Fprintf(&h.body, "\t\tfwrite(%s, 1, %d, out);\n\t}\n", name, len(rawOf(out)))
	h.outputs = append(h.outputs, out)
}

// run compiles and runs everything queued and returns the outputs.
func (h *hostRun) run() [][]byte {
	res, err := h.runErr()
	if err != nil {
		h.t.Fatal(err)
	}
	return res
}

// runErr is run returning the harness's failure (a sanitizer report
// first names the plan and the faulting kernel line).
func (h *hostRun) runErr() ([][]byte, error) {
	dir := h.t.TempDir()
	var all bytes.Buffer
	all.Write(h.src.Bytes())
	all.WriteString("\nint main(int argc, char **argv) {\n\tFILE *in = fopen(argv[1], \"rb\"), *out = fopen(argv[2], \"wb\");\n\tgocu_init();\n\t__sanitizer_set_death_callback(gocu_report);\n")
	all.Write(h.body.Bytes())
	all.WriteString("\tgocu_finish();\n\tfclose(out);\n\treturn 0;\n}\n")
	srcPath := filepath.Join(dir, "plans.cpp")
	os.WriteFile(srcPath, all.Bytes(), 0o600)
	os.WriteFile(filepath.Join(dir, "in.bin"), h.data.Bytes(), 0o600)
	bin := filepath.Join(dir, "plans")
	if os.Getenv("GOCU_KEEP_HOST_SOURCE") != "" { // for debugging a failure by hand
		os.WriteFile("/tmp/plans.cpp", all.Bytes(), 0o600)
		os.WriteFile("/tmp/plans.in", h.data.Bytes(), 0o600)
	}
	args := append([]string{"-std=c++20", "-O1", "-pthread", "-ffp-contract=off", "-w"}, sanitizerFlags(h.t)...)
	if out, err := exec.Command("clang++-16", append(args, "-o", bin, srcPath)...).CombinedOutput(); err != nil {
		return nil, fmt.Errorf("host compile: %v\n%s", err, firstLines(string(out), 30))
	}
	if out, err := sanitizedRun(bin, filepath.Join(dir, "in.bin"), filepath.Join(dir, "out.bin")).CombinedOutput(); err != nil {
		return nil, fmt.Errorf("host run: %v\n%s%s", err, reportHead(string(out)), firstLines(string(out), 40))
	}
	got, err := os.ReadFile(filepath.Join(dir, "out.bin"))
	if err != nil {
		return nil, err
	}
	var res [][]byte
	off := 0
	for _, b := range h.outputs {
		n := len(rawOf(b))
		res = append(res, got[off:off+n])
		off += n
	}
	return res, nil
}

// reportHead returns the lines of a sanitizer report that say what and
// where: the plan, the kind of fault and the kernel line.
func reportHead(out string) string {
	var b strings.Builder
	for _, l := range strings.Split(out, "\n") {
		if strings.Contains(l, "gocu harness:") || strings.Contains(l, "SUMMARY:") {
			b.WriteString(strings.TrimSpace(l) + "\n")
		}
	}
	return b.String()
}

var hostOpts = Options{SMs: 1, MaxBlocks: 2, Aligned: func(o backend.Operand, n int) bool { return o.Layout.Offset*o.DType().Size()%n == 0 }}

// randomProgram draws a fused program over shape with a random strided
// input layout (transposed, stepped, reversed or broadcast).
func randomReduceInput(r *rand.Rand, be *cpu.Backend, dt backend.DType, shape []int, fused bool) *backend.Program {
	n := backend.Size(shape)
	lay := backend.Contiguous(shape)
	bufLen := n // exactly what the layout addresses: 0 for an empty shape
	switch r.IntN(4) {
	case 1: // reversed first axis
		if len(shape) > 0 && shape[0] > 0 {
			lay.Offset = (shape[0] - 1) * lay.Strides[0]
			lay.Strides[0] = -lay.Strides[0]
		}
	case 2: // transposed
		rev := make([]int, len(shape))
		for i := range shape {
			rev[i] = shape[len(shape)-1-i]
		}
		st := backend.ContiguousStrides(rev)
		for i := range shape {
			lay.Strides[i] = st[len(shape)-1-i]
		}
	case 3: // every other element along the last axis
		if len(shape) > 0 {
			big := append([]int{}, shape...)
			big[len(big)-1] *= 2
			st := backend.ContiguousStrides(big)
			copy(lay.Strides, st)
			lay.Strides[len(shape)-1] = 2
			bufLen = backend.Size(big)
		}
	}
	buf := randBuffer(be, r, dt, bufLen)
	p := &backend.Program{Shape: shape, Inputs: []backend.Operand{{Buf: buf, Layout: lay}},
		Nodes: []backend.Node{{Op: backend.OpInput, DType: dt}}}
	if fused && dt.IsFloat() {
		p.Scalars = []backend.Scalar{{DType: dt, F: -0.75}}
		p.Nodes = append(p.Nodes, backend.Node{Op: backend.OpScalar, DType: dt}, backend.Node{Op: backend.OpMul, DType: dt, Args: [3]int32{0, 1}})
	}
	return p
}

// TestPlansRunOnHost plans reductions, softmax-family operations, random
// fills and integer products exactly as the GPU backend will, executes the
// launches on the host, and compares with the CPU backend.
func TestPlansRunOnHost(t *testing.T) {
	t.Parallel()
	clangtest.Need(t, "clang++-16")
	be := cpu.New(0)
	r := rand.New(rand.NewPCG(11, 12))
	h := newHostRun(t)
	type check struct {
		name  string
		dt    backend.DType
		out   *cpu.Buffer
		exact bool
		cpu   func() // computes the reference into out
	}
	var checks []check
	ops := []backend.ReduceOp{backend.Sum, backend.Prod, backend.Max, backend.Min, backend.Mean, backend.ArgMax, backend.ArgMin, backend.Any, backend.All}
	shapes := []struct {
		shape []int
		axes  [][]int
	}{
		{[]int{3, 4}, [][]int{{0}, {1}, {0, 1}}},
		{[]int{2, 3, 5}, [][]int{{0, 2}, {1}, {0, 1, 2}}},
		{[]int{40, 30}, [][]int{{0}, {1}}},
		{[]int{2, 600}, [][]int{{1}}},
		{[]int{1100, 3}, [][]int{{0}, {1}}},
		{[]int{4, 0, 3}, [][]int{{1}, {0, 2}}},
		{[]int{5000}, [][]int{{0}}},
		// Column reductions: split into chunks of rows (300), and not (3).
		{[]int{300, 1030}, [][]int{{0}}},
		{[]int{3, 1030}, [][]int{{0}}},
		{[]int{2, 150, 1030}, [][]int{{0, 1}}},
		// Few columns over many rows (a bias's gradient): split as well.
		{[]int{1000, 40}, [][]int{{0}}},
		{[]int{3, 130, 33}, [][]int{{0, 1}}},
	}
	for _, sh := range shapes {
		for _, axes := range sh.axes {
			for _, op := range ops {
				dt := []backend.DType{backend.Float32, backend.Float64, backend.Int64}[r.IntN(3)]
				if op == backend.Any || op == backend.All {
					dt = backend.Bool
				}
				if (op == backend.Prod) && backend.Size(sh.shape) > 64 {
					continue
				}
				nR := 1
				for _, a := range axes {
					nR *= sh.shape[a]
				}
				if nR == 0 && (op == backend.Max || op == backend.Min || op == backend.ArgMax || op == backend.ArgMin) {
					continue
				}
				if op == backend.Mean && !dt.IsFloat() {
					dt = backend.Float64
				}
				p := randomReduceInput(r, be, dt, sh.shape, r.IntN(2) == 0)
				outDT := dt
				if op == backend.ArgMax || op == backend.ArgMin {
					outDT = backend.Int64
				}
				var kshape []int
				for d, n := range sh.shape {
					if !containsInt(axes, d) {
						kshape = append(kshape, n)
					}
				}
				nk := max(backend.Size(kshape), 1)
				gpuOut, _ := be.Alloc(outDT, nk)
				cpuOut, _ := be.Alloc(outDT, nk)
				req := &backend.Reduction{Op: op, In: p, Axes: axes, Out: backend.Operand{Buf: gpuOut, Layout: backend.Contiguous(kshape)}}
				pl, err := PlanReduce(req, hostOpts)
				if err != nil {
					t.Fatal(err)
				}
				name := fmt.Sprintf("%v %v %v %s axes %v (%d launches)", op, dt, sh.shape, layoutString(p.Inputs[0].Layout), axes, len(pl.Launches))
				h.add(name, pl, gpuOut.(*cpu.Buffer))
				cpuReq := *req
				cpuReq.Out.Buf = cpuOut
				checks = append(checks, check{name, outDT, cpuOut.(*cpu.Buffer), false,
					func() {
						if err := be.Reduce(&cpuReq); err != nil {
							t.Fatal(err)
						}
					}})
			}
		}
	}
	for _, kind := range []backend.AxisKind{backend.Softmax, backend.LogSoftmax, backend.LogSumExp} {
		for _, sh := range [][]int{{3, 50}, {4, 3, 7}, {600}, {2, 0}} {
			for axis := 0; axis < len(sh); axis++ {
				dt := []backend.DType{backend.Float32, backend.Float64}[r.IntN(2)]
				p := randomReduceInput(r, be, dt, sh, true)
				oshape := sh
				if kind == backend.LogSumExp {
					oshape = append(append([]int{}, sh[:axis]...), sh[axis+1:]...)
				}
				n := max(backend.Size(oshape), 1)
				gpuOut, _ := be.Alloc(dt, n)
				cpuOut, _ := be.Alloc(dt, n)
				req := &backend.AxisOp{Kind: kind, In: p, Axis: axis, Out: backend.Operand{Buf: gpuOut, Layout: backend.Contiguous(oshape)}}
				pl, err := PlanAxis(req, hostOpts)
				if err != nil {
					t.Fatal(err)
				}
				name := fmt.Sprintf("%v %v %v %s axis %d", kind, dt, sh, layoutString(p.Inputs[0].Layout), axis)
				h.add(name, pl, gpuOut.(*cpu.Buffer))
				cpuReq := *req
				cpuReq.Out.Buf = cpuOut
				checks = append(checks, check{name, dt, cpuOut.(*cpu.Buffer), false,
					func() {
						if err := be.AxisOp(&cpuReq); err != nil {
							t.Fatal(err)
						}
					}})
			}
		}
	}
	for _, dt := range []backend.DType{backend.Float32, backend.Float64} {
		for _, dist := range []backend.Dist{backend.Uniform, backend.Normal} {
			gpuOut, _ := be.Alloc(dt, 1003)
			cpuOut, _ := be.Alloc(dt, 1003)
			req := &backend.Random{Out: backend.Operand{Buf: gpuOut, Layout: backend.Layout{Shape: []int{1000}, Strides: []int{1}, Offset: 3}},
				Dist: dist, Seed: 77, Counter: 5, P0: -1, P1: 2}
			pl, err := PlanRandom(req, hostOpts)
			if err != nil {
				t.Fatal(err)
			}
			name := fmt.Sprintf("random %v %d", dt, dist)
			h.add(name, pl, gpuOut.(*cpu.Buffer))
			cpuReq := *req
			cpuReq.Out.Buf = cpuOut
			checks = append(checks, check{name, dt, cpuOut.(*cpu.Buffer), true,
				func() {
					if err := be.Random(&cpuReq); err != nil {
						t.Fatal(err)
					}
				}})
		}
	}
	for _, dt := range []backend.DType{backend.Bool, backend.Uint8, backend.Int32, backend.Int64} {
		M, N, K := 19, 21, 35
		a := randBuffer(be, r, dt, 3*M*K)
		b := randBuffer(be, r, dt, 2*K*N+7)
		gpuOut, _ := be.Alloc(dt, 6*M*N)
		cpuOut, _ := be.Alloc(dt, 6*M*N)
		mm := &backend.MatMul{M: M, N: N, K: K, Batch: []int{2, 3},
			A: backend.Matrix{Buf: a, BatchStrides: []int{0, M * K}, RowStride: 1, ColStride: M},
			B: backend.Matrix{Buf: b, Offset: 7, BatchStrides: []int{K * N, 0}, RowStride: N, ColStride: 1},
			C: backend.Matrix{Buf: gpuOut, RowStride: N, ColStride: 1}}
		pl, err := PlanIntMatMul(mm, hostOpts)
		if err != nil {
			t.Fatal(err)
		}
		name := fmt.Sprintf("int matmul %v", dt)
		h.add(name, pl, gpuOut.(*cpu.Buffer))
		cpuReq := *mm
		cpuReq.C.Buf = cpuOut
		checks = append(checks, check{name, dt, cpuOut.(*cpu.Buffer), true,
			func() {
				if err := be.MatMul(&cpuReq); err != nil {
					t.Fatal(err)
				}
			}})
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
	t.Logf("%d planned operations executed on the host, %d differ", len(checks), bad)
}

// layoutString describes a layout for failure messages.
func layoutString(l backend.Layout) string {
	return fmt.Sprintf("layout{shape %v strides %v offset %d}", l.Shape, l.Strides, l.Offset)
}

func containsInt(s []int, v int) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// Index programs are materialised before a reduction visits them out of order.
func TestPlanAsksToMaterializeIota(t *testing.T) {
	p := &backend.Program{Shape: []int{3, 4}, Nodes: []backend.Node{{Op: backend.OpIota, DType: backend.Int64}}}
	out := backend.Operand{Buf: fakeBuf{backend.Int64}, Layout: backend.Contiguous([]int{4})}
	if _, err := PlanReduce(&backend.Reduction{Op: backend.Sum, In: p, Axes: []int{0}, Out: out}, hostOpts); err != ErrMaterialize {
		t.Errorf("iota reduction over axis 0: %v", err)
	}
	all := backend.Operand{Buf: fakeBuf{backend.Int64}, Layout: backend.Contiguous(nil)}
	if _, err := PlanReduce(&backend.Reduction{Op: backend.Sum, In: p, Axes: []int{0, 1}, Out: all}, hostOpts); err != nil {
		t.Errorf("iota full reduction: %v", err)
	}
}

// TestPlanBiasGradientSplits checks that a bias's gradient, a column sum
// of a tall gradient with few columns, takes the split Cols kernel on a
// GPU's plan rather than a block per strided column.
func TestPlanBiasGradientSplits(t *testing.T) {
	be := cpu.New(0)
	for _, c := range []int{768, 64} {
		buf, err := be.Alloc(backend.Float32, 16384*c)
		if err != nil {
			t.Fatal(err)
		}
		out, _ := be.Alloc(backend.Float32, c)
		p := &backend.Program{Shape: []int{16384, c},
			Inputs: []backend.Operand{{Buf: buf, Layout: backend.Contiguous([]int{16384, c})}},
			Nodes:  []backend.Node{{Op: backend.OpInput, DType: backend.Float32}}}
		req := &backend.Reduction{Op: backend.Sum, In: p, Axes: []int{0}, Out: backend.Operand{Buf: out, Layout: backend.Contiguous([]int{c})}}
		pl, err := PlanReduce(req, gpuOpts)
		if err != nil {
			t.Fatal(err)
		}
		l := pl.Launches[0]
		if !strings.HasSuffix(l.Kernel.Name, "_cols") || l.Grid[1] < 2 {
			t.Errorf("16384x%d summed over rows: kernel %s, grid %v; want the Cols kernel split over rows", c, l.Kernel.Name, l.Grid)
		}
	}
}
