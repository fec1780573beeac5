package cudagen

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gocu-dev/gocu/array/internal/backend"
	"github.com/gocu-dev/gocu/array/internal/cpu"
)

// threadedPrelude runs kernels with barriers and warp shuffles on the
// host: every CUDA thread of a block is an OS thread, __syncthreads is a
// block-wide barrier, and a warp shuffle exchanges values through a slot
// per lane between two warp-wide barriers. Blocks run one after another.
const threadedPrelude = `#include <barrier>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <thread>
#include <vector>
#define __global__
#define __device__
#define __forceinline__ inline
#define __launch_bounds__(...)
#define __shared__ static
struct gocu_dim3 { unsigned int x, y, z; };
static thread_local gocu_dim3 threadIdx, blockIdx;
static gocu_dim3 blockDim, gridDim;
static std::barrier<> *gocu_bar;
static std::barrier<> *gocu_wbar[32];
static unsigned long long gocu_slot[32][32];
static void __syncthreads() { gocu_bar->arrive_and_wait(); }
template <typename T> static T __shfl_down_sync(unsigned int, T v, int d, int = 32) {
	const int lane = threadIdx.x & 31, w = threadIdx.x >> 5;
	memcpy(&gocu_slot[w][lane], &v, sizeof(T));
	gocu_wbar[w]->arrive_and_wait();
	T r = v;
	if (lane + d < 32) memcpy(&r, &gocu_slot[w][lane + d], sizeof(T));
	gocu_wbar[w]->arrive_and_wait();
	return r;
}
// A persistent pool of 256 threads runs every launch (blocks in turn).
#include <functional>
static std::function<void()> gocu_fn;
static unsigned int gocu_grid;
static bool gocu_quit;
static std::barrier<> *gocu_start, *gocu_done;
static std::vector<std::thread> gocu_pool;
static void gocu_worker(unsigned int t) {
	for (;;) {
		gocu_start->arrive_and_wait();
		if (gocu_quit) return;
		for (unsigned int b = 0; b < gocu_grid; b++) {
			threadIdx.x = t; blockIdx.x = b;
			gocu_fn();
			gocu_bar->arrive_and_wait();
		}
		gocu_done->arrive_and_wait();
	}
}
static void gocu_init() {
	blockDim.x = 256;
	gocu_bar = new std::barrier<>(256);
	for (int w = 0; w < 8; w++) gocu_wbar[w] = new std::barrier<>(32);
	gocu_start = new std::barrier<>(257);
	gocu_done = new std::barrier<>(257);
	for (unsigned int t = 0; t < 256; t++) gocu_pool.emplace_back(gocu_worker, t);
}
static void gocu_finish() {
	gocu_quit = true;
	gocu_start->arrive_and_wait();
	for (auto &t : gocu_pool) t.join();
}
template <typename F> static void gocu_launch(unsigned int grid, unsigned int block, F f) {
	if (block != 256) abort();
	gridDim.x = grid;
	gocu_grid = grid;
	gocu_fn = f;
	gocu_start->arrive_and_wait();
	gocu_done->arrive_and_wait();
}
static inline float __int_as_float(int i) { float f; memcpy(&f, &i, 4); return f; }
static inline double __longlong_as_double(long long i) { double f; memcpy(&f, &i, 8); return f; }
static inline long long __double_as_longlong(double f) { long long i; memcpy(&i, &f, 8); return i; }
`

type redCase struct {
	name   string
	op     backend.ReduceOp
	p      *backend.Program // over [kept..., reduced...] (ReduceAll: the whole shape)
	kept   int
	out    backend.DType
	spec   ReduceSpec
	red    *Reduction
	inBufs []*cpu.Buffer
}

// TestReductionKernelsRunOnHost executes the generated reduction kernels
// (both passes of ReduceAll, Rows with warp and block groups, Cols) with
// real barriers and shuffles, and compares with the CPU backend.
func TestReductionKernelsRunOnHost(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("clang++-16"); err != nil {
		t.Skip("clang++-16 not installed")
	}
	be := cpu.New(0)
	r := rand.New(rand.NewPCG(9, 9))
	var cases []*redCase
	mk := func(op backend.ReduceOp, dt backend.DType, mode ReduceMode, shape []int, kept int, group int, strided bool, fused bool) {
		out, ok := validReduce(op, dt)
		if !ok {
			return
		}
		p := &backend.Program{Shape: shape}
		n := backend.Size(shape)
		var lay backend.Layout
		var bufLen int
		if strided {
			// A reversed view along the last axis at an offset.
			lay = backend.Contiguous(shape)
			last := len(shape) - 1
			lay.Offset = 2 + (shape[last]-1)*lay.Strides[last]
			lay.Strides[last] = -lay.Strides[last]
			bufLen = n + 2
		} else {
			lay = backend.Contiguous(shape)
			bufLen = n
		}
		buf := randBuffer(be, r, dt, bufLen)
		if (op == backend.ArgMax || op == backend.ArgMin) && dt.IsFloat() && n > 20 {
			// ties across threads: the first index must win
			switch s := buf.Slice().(type) {
			case []float32:
				s[3], s[5] = 9, 9
				s[n-1] = 9
			case []float64:
				s[3], s[5] = 9, 9
				s[n-1] = 9
			}
		}
		p.Inputs = []backend.Operand{{Buf: buf, Layout: lay}}
		p.Nodes = []backend.Node{{Op: backend.OpInput, DType: dt}}
		if fused && dt.IsFloat() {
			p.Scalars = []backend.Scalar{{DType: dt, F: 0.5}}
			p.Nodes = append(p.Nodes, backend.Node{Op: backend.OpScalar, DType: dt}, backend.Node{Op: backend.OpMul, DType: dt, Args: [3]int32{0, 1}})
		}
		cls := Contig
		if strided || mode != ReduceAll {
			cls = Strided
		}
		spec := ReduceSpec{Mode: mode, Kept: kept, Red: len(shape) - kept, In: []Class{cls}, Group: group, Vec: 1}
		if mode == ReduceAll && !strided {
			spec.Vec = 4
			if dt.Size() > 4 {
				spec.Vec = 2
			}
		}
		red, err := Reduce(op, p, out, spec)
		if err != nil {
			t.Fatal(err)
		}
		cases = append(cases, &redCase{name: fmt.Sprintf("%v %v mode%d %v kept%d g%d s%v", op, dt, mode, shape, kept, group, strided),
			op: op, p: p, kept: kept, out: out, spec: spec, red: red, inBufs: []*cpu.Buffer{buf}})
	}
	for _, op := range allReduceOps {
		for _, dt := range backend.DTypes {
			mk(op, dt, ReduceAll, []int{1003}, 0, 0, false, true)
			mk(op, dt, ReduceAll, []int{7, 45}, 0, 0, true, false)
			mk(op, dt, ReduceRows, []int{5, 3, 77}, 2, 32, true, false)
			mk(op, dt, ReduceRows, []int{3, 300}, 1, 256, false, true)
			mk(op, dt, ReduceCols, []int{40, 2, 9}, 1, 0, true, false)
		}
	}
	dir := t.TempDir()
	var src, data bytes.Buffer
	src.WriteString(threadedPrelude + hostVectorTypes() + helpersSource + reduceHelpers)
	seen := map[string]bool{}
	for _, c := range cases {
		if s := c.red.Kernels[0].Source; !seen[s] {
			seen[s] = true
			src.WriteString(strings.Replace(strings.Replace(s, helpersSource, "", 1), reduceHelpers, "", 1))
		}
	}
	src.WriteString("\nint main(int argc, char **argv) {\n\tFILE *in = fopen(argv[1], \"rb\"), *out = fopen(argv[2], \"wb\");\n\tgocu_init();\n")
	nOut := func(c *redCase) int {
		if c.spec.Mode == ReduceAll {
			return 1
		}
		return backend.Size(c.p.Shape[:c.kept])
	}
	for _, c := range cases {
		raw := rawOf(c.inBufs[0])
		data.Write(raw)
		it := ctype(c.inBufs[0].DType())
		ot := ctype(c.out)
		fmt.Fprintf(&src, "\t{ // %s\n\t\t%s *b0 = (%s*)aligned_alloc(64, %d);\n", c.name, it, it, (len(raw)+63)/64*64+64)
		fmt.Fprintf(&src, "\t\tif (fread(b0, 1, %d, in) != %d) return 3;\n", len(raw), len(raw))
		fmt.Fprintf(&src, "\t\t%s *ob = (%s*)calloc(%d, sizeof(%s));\n", ot, ot, nOut(c), ot)
		if c.spec.Mode == ReduceAll {
			at := ctype(c.red.AccType)
			fmt.Fprintf(&src, "\t\t%s *pv = (%s*)calloc(3, sizeof(%s));\n\t\tlong long *pi = (long long*)calloc(3, 8);\n", at, at, at)
			k1, k2 := c.red.Kernels[0], c.red.Kernels[1]
			fmt.Fprintf(&src, "\t\tgocu_launch(3, %d, [=] { %s(%s); });\n", k1.Block, k1.Name, strings.Join(redArgs(c, k1), ", "))
			fmt.Fprintf(&src, "\t\tgocu_launch(1, %d, [=] { %s(%s); });\n", k2.Block, k2.Name, strings.Join(redArgs(c, k2), ", "))
		} else {
			k := c.red.Kernels[0]
			fmt.Fprintf(&src, "\t\tgocu_launch(2, %d, [=] { %s(%s); });\n", k.Block, k.Name, strings.Join(redArgs(c, k), ", "))
		}
		fmt.Fprintf(&src, "\t\tfwrite(ob, sizeof(%s), %d, out);\n\t}\n", ot, nOut(c))
	}
	src.WriteString("\tgocu_finish();\n\tfclose(out);\n\treturn 0;\n}\n")
	srcPath := filepath.Join(dir, "red.cpp")
	os.WriteFile(srcPath, src.Bytes(), 0o600)
	os.WriteFile(filepath.Join(dir, "in.bin"), data.Bytes(), 0o600)
	bin := filepath.Join(dir, "red")
	if out, err := exec.Command("clang++-16", "-std=c++20", "-O1", "-pthread", "-ffp-contract=off", "-w", "-o", bin, srcPath).CombinedOutput(); err != nil {
		t.Fatalf("host compile: %v\n%s", err, firstLines(string(out), 30))
	}
	if out, err := exec.Command(bin, filepath.Join(dir, "in.bin"), filepath.Join(dir, "out.bin")).CombinedOutput(); err != nil {
		t.Fatalf("run: %v %s", err, out)
	}
	got, _ := os.ReadFile(filepath.Join(dir, "out.bin"))
	off := 0
	bad := 0
	for _, c := range cases {
		n := nOut(c)
		sz := c.out.Size()
		g := got[off : off+n*sz]
		off += n * sz
		ob, _ := be.Alloc(c.out, n)
		var axes []int
		for d := c.kept; d < len(c.p.Shape); d++ {
			axes = append(axes, d)
		}
		outShape := c.p.Shape[:c.kept]
		if err := be.Reduce(&backend.Reduction{Op: c.op, In: c.p, Axes: axes, Out: backend.Operand{Buf: ob, Layout: backend.Contiguous(outShape)}}); err != nil {
			t.Fatal(err)
		}
		want := rawOf(ob.(*cpu.Buffer))
		if !closeRaw(c.out, g, want) {
			bad++
			if bad <= 8 {
				t.Errorf("%s: kernel result %s, CPU %s", c.name, decode(c.out, g), decode(c.out, want))
			}
		}
	}
	t.Logf("%d reductions executed on the host with threads, %d differ", len(cases), bad)
}

func redArgs(c *redCase, k *Kernel) []string {
	var args []string
	lay := c.p.Inputs[0].Layout
	for _, p := range k.Params {
		var a string
		switch p.Role {
		case RoleOut:
			a = "ob"
		case RoleIn:
			a = fmt.Sprintf("b0 + %d", lay.Offset)
		case RoleScalar:
			a = strconvHex(c.p.Scalars[p.Index].F)
		case RolePartial:
			a = []string{"pv", "pi"}[p.Index]
		case RolePartialCount:
			a = "3ll"
		case RoleCount:
			a = fmt.Sprintf("%dll", c.p.Size())
		case RoleRedCount:
			a = fmt.Sprintf("%dll", backend.Size(c.p.Shape[c.kept:]))
		case RoleRows:
			a = fmt.Sprintf("%dll", backend.Size(c.p.Shape[:c.kept]))
		case RoleDim:
			a = fmt.Sprintf("%dll", c.p.Shape[p.Dim])
		case RoleRedDim:
			a = fmt.Sprintf("%dll", c.p.Shape[c.kept+p.Dim])
		case RoleStride:
			a = fmt.Sprintf("%dll", lay.Strides[p.Dim])
		case RoleRedStride:
			a = fmt.Sprintf("%dll", lay.Strides[c.kept+p.Dim])
		default:
			panic(fmt.Sprintf("role %d", p.Role))
		}
		args = append(args, a)
	}
	return args
}

func decode(dt backend.DType, raw []byte) string {
	if len(raw) > 64 {
		return decode(dt, raw[:64]) + "..."
	}
	switch dt {
	case backend.Float32:
		v := make([]float32, len(raw)/4)
		binary.Read(bytes.NewReader(raw), binary.LittleEndian, v)
		return fmt.Sprint(v)
	case backend.Float64:
		v := make([]float64, len(raw)/8)
		binary.Read(bytes.NewReader(raw), binary.LittleEndian, v)
		return fmt.Sprint(v)
	case backend.Int64:
		v := make([]int64, len(raw)/8)
		binary.Read(bytes.NewReader(raw), binary.LittleEndian, v)
		return fmt.Sprint(v)
	case backend.Int32:
		v := make([]int32, len(raw)/4)
		binary.Read(bytes.NewReader(raw), binary.LittleEndian, v)
		return fmt.Sprint(v)
	}
	return fmt.Sprint(raw)
}

// closeRaw compares outputs: integers and bools exactly, floats to 1e-6
// (float32: sums round once from float64 on both sides, but in a different
// order) or 1e-12, NaN equal to NaN.
func closeRaw(dt backend.DType, got, want []byte) bool {
	if !dt.IsFloat() {
		return bytes.Equal(got, want)
	}
	sz := dt.Size()
	for i := 0; i+sz <= len(want); i += sz {
		var g, w float64
		if dt == backend.Float32 {
			g = float64(math.Float32frombits(binary.LittleEndian.Uint32(got[i:])))
			w = float64(math.Float32frombits(binary.LittleEndian.Uint32(want[i:])))
		} else {
			g = math.Float64frombits(binary.LittleEndian.Uint64(got[i:]))
			w = math.Float64frombits(binary.LittleEndian.Uint64(want[i:]))
		}
		tol := 1e-6
		if dt == backend.Float64 {
			tol = 1e-12
		}
		if g == w || (math.IsNaN(g) && math.IsNaN(w)) {
			continue
		}
		if !(math.Abs(g-w) <= tol*math.Max(1, math.Abs(w))) {
			return false
		}
	}
	return true
}
