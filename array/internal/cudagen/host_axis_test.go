package cudagen

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gocu-dev/gocu/array/internal/backend"
	"github.com/gocu-dev/gocu/array/internal/cpu"
)

// TestAxisKernelsRunOnHost executes the softmax-family kernels with real
// barriers and shuffles on the host and compares them with the CPU backend.
func TestAxisKernelsRunOnHost(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("clang++-16"); err != nil {
		t.Skip("clang++-16 not installed")
	}
	be := cpu.New(0)
	r := rand.New(rand.NewPCG(5, 6))
	type axCase struct {
		kind  backend.AxisKind
		p     *backend.Program // over [outer..., L], the axis last
		k     *Kernel
		buf   *cpu.Buffer
		out   backend.Operand
		outer int
	}
	var cases []*axCase
	for _, dt := range []backend.DType{backend.Float32, backend.Float64} {
		for _, kind := range []backend.AxisKind{backend.Softmax, backend.LogSoftmax, backend.LogSumExp} {
			for _, shape := range [][]int{{700}, {3, 5, 40}, {4, 0}, {2, 1}} {
				n := backend.Size(shape)
				// The input is the transposed view of a buffer: the axis has stride 1 only when rank 1.
				lay := backend.Contiguous(shape)
				if len(shape) == 3 {
					lay = backend.Layout{Shape: shape, Strides: []int{5, 1, 15}, Offset: 1}
				}
				buf := randBuffer(be, r, dt, n+1)
				if n > 10 {
					switch s := buf.Slice().(type) { // large logits must not overflow
					case []float32:
						s[3] = 80
						s[5] = float32(-1e30)
					case []float64:
						s[3] = 700
					}
				}
				p := &backend.Program{Shape: shape, Inputs: []backend.Operand{{Buf: buf, Layout: lay}},
					Scalars: []backend.Scalar{{DType: dt, F: 1.5}},
					Nodes: []backend.Node{{Op: backend.OpInput, DType: dt}, {Op: backend.OpScalar, DType: dt},
						{Op: backend.OpMul, DType: dt, Args: [3]int32{0, 1}}}}
				outer := len(shape) - 1
				k, err := AxisOp(kind, p, AxisSpec{Outer: outer, In: []Class{Strided}})
				if err != nil {
					t.Fatal(err)
				}
				var ol backend.Layout
				if kind == backend.LogSumExp {
					ol = backend.Contiguous(shape[:outer])
				} else {
					ol = backend.Contiguous(shape)
				}
				ob, _ := be.Alloc(dt, max(ol.Size(), 1))
				cases = append(cases, &axCase{kind: kind, p: p, k: k, buf: buf, out: backend.Operand{Buf: ob, Layout: ol}, outer: outer})
			}
		}
	}
	dir := t.TempDir()
	var src, data bytes.Buffer
	src.WriteString(threadedPrelude + hostVectorTypes() + helpersSource + reduceHelpers)
	seen := map[string]bool{}
	for _, c := range cases {
		if !seen[c.k.Source] {
			seen[c.k.Source] = true
			src.WriteString(strings.Replace(strings.Replace(c.k.Source, helpersSource, "", 1), reduceHelpers, "", 1))
		}
	}
	src.WriteString("\nint main(int argc, char **argv) {\n\tFILE *in = fopen(argv[1], \"rb\"), *out = fopen(argv[2], \"wb\");\n\tgocu_init();\n")
	for _, c := range cases {
		raw := rawOf(c.buf)
		data.Write(raw)
		ct := ctype(c.p.Result())
		no := c.out.Layout.Size()
		fmt.Fprintf(&src, "\t{\n\t\t%s *b0 = (%s*)malloc(%d);\n\t\tif (fread(b0, 1, %d, in) != %d) return 3;\n", ct, ct, len(raw), len(raw), len(raw))
		fmt.Fprintf(&src, "\t\t%s *ob = (%s*)calloc(%d, sizeof(%s));\n", ct, ct, max(no, 1), ct)
		lay := c.p.Inputs[0].Layout
		var args []string
		for _, p := range c.k.Params {
			var a string
			switch p.Role {
			case RoleOut:
				a = "ob"
			case RoleIn:
				a = fmt.Sprintf("b0 + %d", lay.Offset)
			case RoleScalar:
				a = strconvHex(c.p.Scalars[p.Index].F)
			case RoleRows:
				a = fmt.Sprintf("%dll", backend.Size(c.p.Shape[:c.outer]))
			case RoleRowLen:
				a = fmt.Sprintf("%dll", c.p.Shape[c.outer])
			case RoleDim:
				a = fmt.Sprintf("%dll", c.p.Shape[p.Dim])
			case RoleStride:
				st := lay.Strides
				if p.Index < 0 {
					st = c.out.Layout.Strides
				}
				a = fmt.Sprintf("%dll", st[p.Dim])
			case RoleRowStride:
				st := lay.Strides
				if p.Index < 0 {
					st = c.out.Layout.Strides
				}
				a = fmt.Sprintf("%dll", st[c.outer])
			default:
				t.Fatalf("role %d", p.Role)
			}
			args = append(args, a)
		}
		fmt.Fprintf(&src, "\t\tgocu_launch(2, 256, [=] { %s(%s); });\n", c.k.Name, strings.Join(args, ", "))
		fmt.Fprintf(&src, "\t\tfwrite(ob, sizeof(%s), %d, out);\n\t}\n", ct, no)
	}
	src.WriteString("\tgocu_finish();\n\tfclose(out);\n\treturn 0;\n}\n")
	srcPath := filepath.Join(dir, "axis.cpp")
	os.WriteFile(srcPath, src.Bytes(), 0o600)
	os.WriteFile(filepath.Join(dir, "in.bin"), data.Bytes(), 0o600)
	bin := filepath.Join(dir, "axis")
	if out, err := exec.Command("clang++-16", "-std=c++20", "-O1", "-pthread", "-ffp-contract=off", "-w", "-o", bin, srcPath).CombinedOutput(); err != nil {
		t.Fatalf("host compile: %v\n%s", err, firstLines(string(out), 30))
	}
	if out, err := exec.Command(bin, filepath.Join(dir, "in.bin"), filepath.Join(dir, "out.bin")).CombinedOutput(); err != nil {
		t.Fatalf("run: %v %s", err, out)
	}
	got, _ := os.ReadFile(filepath.Join(dir, "out.bin"))
	off := 0
	for _, c := range cases {
		dt := c.p.Result()
		n := c.out.Layout.Size() * dt.Size()
		g := got[off : off+n]
		off += n
		if err := be.AxisOp(&backend.AxisOp{Kind: c.kind, In: c.p, Axis: c.outer, Out: c.out}); err != nil {
			t.Fatal(err)
		}
		want := rawOf(c.out.Buf.(*cpu.Buffer))[:n]
		if !closeRaw(dt, g, want) {
			t.Errorf("%v %v %v: kernel %s, CPU %s", c.kind, dt, c.p.Shape, decode(dt, g), decode(dt, want))
		}
	}
}
