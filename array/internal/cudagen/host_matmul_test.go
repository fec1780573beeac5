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

// TestIntMatMulKernelsRunOnHost executes the integer/bool matrix product
// kernels (shared-memory tiles, barriers) on the host against the CPU.
func TestIntMatMulKernelsRunOnHost(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("clang++-16"); err != nil {
		t.Skip("clang++-16 not installed")
	}
	be := cpu.New(0)
	r := rand.New(rand.NewPCG(1, 1))
	type mmCase struct {
		mm      *backend.MatMul
		k       *Kernel
		a, b, c *cpu.Buffer
	}
	var cases []*mmCase
	for _, dt := range []backend.DType{backend.Bool, backend.Uint8, backend.Int32, backend.Int64} {
		for _, tr := range []bool{false, true} {
			M, N, K := 19, 21, 35
			batch := []int{2, 3}
			a := randBuffer(be, r, dt, 3*M*K) // batch dim 0 broadcast (stride 0), dim 1 stride M*K
			b := randBuffer(be, r, dt, 2*K*N)
			mm := &backend.MatMul{M: M, N: N, K: K, Batch: batch}
			mm.A = backend.Matrix{Buf: a, BatchStrides: []int{0, M * K}, RowStride: K, ColStride: 1}
			if tr {
				mm.A.RowStride, mm.A.ColStride = 1, M
			}
			mm.B = backend.Matrix{Buf: b, BatchStrides: []int{K * N, 0}, RowStride: N, ColStride: 1}
			cb, _ := be.Alloc(dt, 6*M*N)
			mm.C = backend.Matrix{Buf: cb, RowStride: N, ColStride: 1}
			k, err := IntMatMul(dt, len(batch))
			if err != nil {
				t.Fatal(err)
			}
			cases = append(cases, &mmCase{mm: mm, k: k, a: a, b: b, c: cb.(*cpu.Buffer)})
		}
	}
	dir := t.TempDir()
	var src, data bytes.Buffer
	src.WriteString(threadedPrelude)
	seen := map[string]bool{}
	for _, c := range cases {
		if !seen[c.k.Name] {
			seen[c.k.Name] = true
			src.WriteString(c.k.Source)
		}
	}
	src.WriteString("\nint main(int argc, char **argv) {\n\tFILE *in = fopen(argv[1], \"rb\"), *out = fopen(argv[2], \"wb\");\n\tgocu_init();\n")
	for _, c := range cases {
		ct := ctype(c.a.DType())
		for i, b := range []*cpu.Buffer{c.a, c.b} {
			raw := rawOf(b)
			data.Write(raw)
			fmt.Fprintf(&src, "\t%s *m%d_%p = (%s*)malloc(%d); if (fread(m%d_%p, 1, %d, in) != %d) return 3;\n", ct, i, c, ct, len(raw), i, c, len(raw), len(raw))
		}
		mm := c.mm
		var args []string
		for _, p := range c.k.Params {
			m := []backend.Matrix{mm.A, mm.B}
			switch p.Role {
			case RoleOut:
				args = append(args, fmt.Sprintf("c_%p", c))
			case RoleIn:
				args = append(args, fmt.Sprintf("m%d_%p", p.Index, c))
			case RoleM:
				args = append(args, fmt.Sprint(mm.M))
			case RoleN:
				args = append(args, fmt.Sprint(mm.N))
			case RoleK:
				args = append(args, fmt.Sprint(mm.K))
			case RoleStride:
				if p.Dim == 0 {
					args = append(args, fmt.Sprint(m[p.Index].RowStride))
				} else {
					args = append(args, fmt.Sprint(m[p.Index].ColStride))
				}
			case RoleBatchDim:
				args = append(args, fmt.Sprint(mm.Batch[p.Dim]))
			case RoleBatchStride:
				args = append(args, fmt.Sprint(m[p.Index].BatchStrides[p.Dim]))
			default:
				t.Fatalf("role %d", p.Role)
			}
		}
		n := 6 * mm.M * mm.N
		fmt.Fprintf(&src, "\t%s *c_%p = (%s*)calloc(%d, sizeof(%s));\n", ct, c, ct, n, ct)
		// Grid: x tiles of N, y tiles of M, z batches; the pool runs blocks
		// in turn, so emulate the 3-D grid by looping z and y here.
		tiles := fmt.Sprintf("(%d)", (mm.N+15)/16)
		fmt.Fprintf(&src, "\tfor (unsigned int z = 0; z < 6; z++) for (unsigned int y = 0; y < %d; y++)\n", (mm.M+15)/16)
		fmt.Fprintf(&src, "\t\tgocu_launch(%s, 256, [=] { blockIdx.y = y; blockIdx.z = z; %s(%s); });\n", tiles, c.k.Name, strings.Join(args, ", "))
		fmt.Fprintf(&src, "\tfwrite(c_%p, sizeof(%s), %d, out);\n", c, ct, n)
	}
	src.WriteString("\tgocu_finish();\n\tfclose(out);\n\treturn 0;\n}\n")
	srcPath := filepath.Join(dir, "mm.cpp")
	os.WriteFile(srcPath, src.Bytes(), 0o600)
	os.WriteFile(filepath.Join(dir, "in.bin"), data.Bytes(), 0o600)
	bin := filepath.Join(dir, "mm")
	if out, err := exec.Command("clang++-16", "-std=c++20", "-O1", "-pthread", "-w", "-o", bin, srcPath).CombinedOutput(); err != nil {
		t.Fatalf("host compile: %v\n%s", err, firstLines(string(out), 30))
	}
	if out, err := exec.Command(bin, filepath.Join(dir, "in.bin"), filepath.Join(dir, "out.bin")).CombinedOutput(); err != nil {
		t.Fatalf("run: %v %s", err, out)
	}
	got, _ := os.ReadFile(filepath.Join(dir, "out.bin"))
	off := 0
	for _, c := range cases {
		if err := be.MatMul(c.mm); err != nil {
			t.Fatal(err)
		}
		want := rawOf(c.c)
		if !bytes.Equal(got[off:off+len(want)], want) {
			t.Errorf("%v transposed=%v: kernel differs from the CPU", c.a.DType(), c.mm.A.ColStride != 1)
		}
		off += len(want)
	}
}
