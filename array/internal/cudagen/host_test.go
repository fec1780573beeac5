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
	"github.com/gocu-dev/gocu/array/internal/philox"
	"github.com/gocu-dev/gocu/internal/clangtest"
	"github.com/gocu-dev/gocu/lowp"
)

// hostPrelude lets generated kernels compile as ordinary C++ and run on the
// host: the built-in index variables become globals the harness sets for
// every (block, thread) in turn, and the intrinsics become their IEEE
// definitions (the harness is built with -ffp-contract=off, so nothing is
// fused). Kernels without barriers or warp shuffles (elementwise, Philox)
// run correctly this way.
const hostPrelude = `#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#define __global__
#define __device__
#define __forceinline__ inline
#define __launch_bounds__(...)
struct gocu_dim3 { unsigned int x, y, z; };
static gocu_dim3 threadIdx, blockIdx, blockDim, gridDim;
static inline float __int_as_float(int i) { float f; memcpy(&f, &i, 4); return f; }
static inline double __longlong_as_double(long long i) { double f; memcpy(&f, &i, 8); return f; }
static inline long long __double_as_longlong(double f) { long long i; memcpy(&i, &f, 8); return i; }
static inline unsigned int __umulhi(unsigned int a, unsigned int b) { return (unsigned int)(((unsigned long long)a * b) >> 32); }
static inline float __fmul_rn(float a, float b) { return a * b; }
static inline double __dmul_rn(double a, double b) { return a * b; }
static inline double __dadd_rn(double a, double b) { return a + b; }
static inline double __dsub_rn(double a, double b) { return a - b; }
static inline double __ddiv_rn(double a, double b) { return a / b; }
static inline double __dsqrt_rn(double a) { return sqrt(a); }
static inline float __double2float_rn(double a) { return (float)a; }
static inline int __float_as_int(float f) { int i; memcpy(&i, &f, 4); return i; }
static inline float __double2float_rz(double a) { float f = (float)a; if (fabs((double)f) > fabs(a)) f = nextafterf(f, 0.0f); return f; }
`

func hostVectorTypes() string {
	var b strings.Builder
	for _, v := range []struct {
		name, t string
		size    int
	}{{"uchar", "unsigned char", 1}, {"int", "int", 4}, {"float", "float", 4}, {"longlong", "long long", 8}, {"double", "double", 8}} {
		for _, w := range []int{2, 4} {
			comps := []string{"x", "y", "z", "w"}[:w]
			fmt.Fprintf(&b, "struct alignas(%d) %s%d { %s %s; };\n", v.size*w, v.name, w, v.t, strings.Join(comps, ", "))
		}
	}
	return b.String()
}

// hostCase is one kernel launch: buffers (with the element offsets the
// program's layouts use), the program, and its output operand.
type hostCase struct {
	k    *Kernel
	p    *backend.Program
	out  backend.Operand
	bufs []*cpu.Buffer // inputs then output
}

func randBuffer(be *cpu.Backend, r *rand.Rand, dt backend.DType, n int) *cpu.Buffer {
	buf, _ := be.Alloc(dt, n)
	b := buf.(*cpu.Buffer)
	switch s := b.Slice().(type) {
	case []float32:
		for i := range s {
			s[i] = float32(r.Float64()*6 - 3)
		}
		if n > 8 {
			s[3], s[5] = float32(math.NaN()), float32(math.Inf(1))
		}
	case []float64:
		for i := range s {
			s[i] = r.Float64()*6 - 3
		}
		if n > 8 {
			s[3], s[5] = math.NaN(), math.Inf(-1)
		}
	case []int32:
		for i := range s {
			s[i] = int32(r.IntN(20001) - 10000)
		}
		if n > 8 {
			s[2], s[4] = 0, math.MinInt32
		}
	case []int64:
		for i := range s {
			s[i] = int64(r.IntN(20001) - 10000)
		}
		if n > 8 {
			s[2], s[4] = 0, math.MinInt64
		}
	case []uint8:
		for i := range s {
			s[i] = uint8(r.IntN(256))
		}
	case []bool:
		for i := range s {
			s[i] = r.IntN(2) == 1
		}
	case []int8:
		for i := range s {
			s[i] = int8(r.IntN(256) - 128)
		}
	case []int16: // every bit pattern, as the unsigned types below
		for i := range s {
			s[i] = int16(r.Uint64())
		}
	case []uint16:
		for i := range s {
			s[i] = uint16(r.Uint64())
		}
	case []uint32:
		for i := range s {
			s[i] = uint32(r.Uint64())
		}
	case []uint64:
		for i := range s {
			s[i] = r.Uint64()
		}
	case []lowp.Float16: // every bit pattern: NaNs, infinities, subnormals
		for i := range s {
			s[i] = lowp.Float16FromBits(uint16(r.Uint32()))
		}
	case []lowp.BFloat16:
		for i := range s {
			s[i] = lowp.BFloat16FromBits(uint16(r.Uint32()))
		}
	case []lowp.Float8E4M3:
		for i := range s {
			s[i] = lowp.Float8E4M3FromBits(uint8(r.Uint32()))
		}
	case []lowp.Float8E5M2:
		for i := range s {
			s[i] = lowp.Float8E5M2FromBits(uint8(r.Uint32()))
		}
	}
	return b
}

// lowpValue rounds v to the low-precision float dt, as a float64.
func lowpValue(dt backend.DType, v float64) float64 {
	switch dt {
	case backend.Float16:
		return lowp.Float16FromFloat64(v).Float64()
	case backend.BFloat16:
		return lowp.BFloat16FromFloat64(v).Float64()
	case backend.Float8E4M3:
		return lowp.Float8E4M3FromFloat64(v).Float64()
	}
	return lowp.Float8E5M2FromFloat64(v).Float64()
}

func rawOf(b *cpu.Buffer) []byte {
	var w bytes.Buffer
	switch s := b.Slice().(type) {
	case []bool:
		for _, v := range s {
			if v {
				w.WriteByte(1)
			} else {
				w.WriteByte(0)
			}
		}
	default:
		binary.Write(&w, binary.LittleEndian, s)
	}
	return w.Bytes()
}

// buildCases makes, for each program, launches in three specialisations:
// contiguous, vectorised, and strided (a transposed input and output).
func buildCases(t *testing.T, be *cpu.Backend) []*hostCase {
	r := rand.New(rand.NewPCG(3, 4))
	var cases []*hostCase
	for _, proto := range everyOpPrograms() {
		for variant := 0; variant < 3; variant++ {
			p := *proto
			p.Scalars = append([]backend.Scalar(nil), proto.Scalars...)
			for i := range p.Scalars {
				s := &p.Scalars[i]
				switch {
				case s.DType.IsFloat():
					s.F = float64(float32(r.Float64()*4 - 2))
				case s.DType.IsLowp():
					s.F = lowpValue(s.DType, r.Float64()*4-2)
				case s.DType == backend.Bool:
					s.I = int64(r.IntN(2))
				case s.DType == backend.Uint8:
					s.I = int64(r.IntN(8))
				default:
					s.I = int64(r.IntN(9) - 4)
				}
			}
			var shape []int
			var inLay, outLay func(n int) backend.Layout
			switch variant {
			case 0, 1:
				n := 301
				shape = []int{n}
				inLay = func(int) backend.Layout { return backend.Contiguous(shape) }
				outLay = inLay
			case 2:
				shape = []int{13, 11}
				inLay = func(i int) backend.Layout {
					if i%2 == 0 { // transposed view of an 11x13 buffer, at offset 3
						return backend.Layout{Shape: shape, Strides: []int{1, 13}, Offset: 3}
					}
					return backend.Layout{Shape: shape, Strides: []int{0, 1}, Offset: 1} // broadcast row
				}
				outLay = func(int) backend.Layout {
					return backend.Layout{Shape: shape, Strides: []int{1, 14}, Offset: 2}
				}
			}
			p.Shape = shape
			c := &hostCase{p: &p}
			p.Inputs = make([]backend.Operand, len(proto.Inputs))
			for i, in := range proto.Inputs {
				l := inLay(i)
				_, hi := l.Extent()
				buf := randBuffer(be, r, in.DType(), hi)
				p.Inputs[i] = backend.Operand{Buf: buf, Layout: l}
				c.bufs = append(c.bufs, buf)
			}
			ol := outLay(0)
			_, hi := ol.Extent()
			ob, _ := be.Alloc(p.Result(), hi)
			c.out = backend.Operand{Buf: ob, Layout: ol}
			c.bufs = append(c.bufs, ob.(*cpu.Buffer))
			spec := SpecFor(&p, c.out, func(backend.Operand, int) bool { return true })
			switch variant {
			case 0:
				spec.Vec = 1
			case 1: // 301 elements: 75 or 150 whole vectors and a tail
				spec.Vec = 4
				for _, o := range append(append([]backend.Operand{}, p.Inputs...), c.out) {
					if o.DType().Size() > 4 {
						spec.Vec = 2
					}
				}
			}
			k, err := Elementwise(&p, spec)
			if err != nil {
				t.Fatal(err)
			}
			c.k = k
			cases = append(cases, c)
		}
	}
	return cases
}

// TestElementwiseKernelsRunOnHost compiles the generated elementwise
// kernels as host C++, runs them over every block and thread, and checks
// their outputs against the CPU backend on the same inputs: bit for bit
// except for the transcendental functions (host libm and Go's math differ
// by an ulp or so).
func TestElementwiseKernelsRunOnHost(t *testing.T) {
	t.Parallel()
	clangtest.Need(t, "clang++-16")
	be := cpu.New(0)
	cases := buildCases(t, be)
	dir := t.TempDir()
	var src, data bytes.Buffer
	src.WriteString(hostPrelude + hostVectorTypes() + helpersSource)
	seen := map[string]bool{}
	for _, c := range cases {
		if !seen[c.k.Name] {
			seen[c.k.Name] = true
			src.WriteString(strings.TrimPrefix(c.k.Source, helpersSource))
		}
	}
	src.WriteString("\nint main(int argc, char **argv) {\n\tFILE *in = fopen(argv[1], \"rb\"), *out = fopen(argv[2], \"wb\");\n\tif (!in || !out) return 2;\n")
	for ci, c := range cases {
		fmt.Fprintf(&src, "\t{ // case %d: %s\n", ci, c.p)
		for bi, b := range c.bufs {
			raw := rawOf(b)
			data.Write(raw)
			ct := ctype(b.DType())
			// Exactly the bytes the case's layouts address: the
			// sanitizer reports any access past them.
			fmt.Fprintf(&src, "\t\t%s *b%d; if (posix_memalign((void**)&b%d, 256, %d)) return 4;\n", ct, bi, bi, len(raw))
			fmt.Fprintf(&src, "\t\tif (fread(b%d, 1, %d, in) != %d) return 3;\n", bi, len(raw), len(raw))
		}
		var args []string
		for _, prm := range c.k.Params {
			args = append(args, hostArg(c, prm))
		}
		n := c.p.Size()
		fmt.Fprintf(&src, "\t\tblockDim.x = %d; gridDim.x = 2;\n", c.k.Block)
		fmt.Fprintf(&src, "\t\tfor (blockIdx.x = 0; blockIdx.x < gridDim.x; blockIdx.x++)\n\t\t\tfor (threadIdx.x = 0; threadIdx.x < blockDim.x; threadIdx.x++)\n")
		fmt.Fprintf(&src, "\t\t\t\t%s(%s);\n", c.k.Name, strings.Join(args, ", "))
		ob := len(c.bufs) - 1
		fmt.Fprintf(&src, "\t\tfwrite(b%d, 1, %d, out);\n", ob, len(rawOf(c.bufs[ob])))
		for bi := range c.bufs {
			fmt.Fprintf(&src, "\t\tfree(b%d);\n", bi)
		}
		src.WriteString("\t}\n")
		_ = n
	}
	src.WriteString("\tfclose(out);\n\treturn 0;\n}\n")
	srcPath := filepath.Join(dir, "host.cpp")
	os.WriteFile(srcPath, src.Bytes(), 0o600)
	os.WriteFile(filepath.Join(dir, "in.bin"), data.Bytes(), 0o600)
	bin := filepath.Join(dir, "host")
	args := append([]string{"-std=c++17", "-O1", "-ffp-contract=off", "-fno-fast-math", "-w"}, sanitizerFlags(t)...)
	if out, err := exec.Command("clang++-16", append(args, "-o", bin, srcPath)...).CombinedOutput(); err != nil {
		t.Fatalf("host compile: %v\n%s", err, firstLines(string(out), 30))
	}
	if out, err := sanitizedRun(bin, filepath.Join(dir, "in.bin"), filepath.Join(dir, "out.bin")).CombinedOutput(); err != nil {
		t.Fatalf("host run: %v\n%s%s", err, reportHead(string(out)), firstLines(string(out), 40))
	}
	got, err := os.ReadFile(filepath.Join(dir, "out.bin"))
	if err != nil {
		t.Fatal(err)
	}
	// The CPU backend on the same programs.
	off := 0
	bad := 0
	for _, c := range cases {
		ob := c.bufs[len(c.bufs)-1]
		raw := rawOf(ob) // the poison-free initial contents written to the kernel
		hostOut := got[off : off+len(raw)]
		off += len(raw)
		if err := be.Eval(c.p, c.out); err != nil {
			t.Fatal(err)
		}
		want := rawOf(ob)
		if !sameOutput(c, hostOut, want) {
			bad++
			if bad <= 10 {
				t.Errorf("kernel %s (%s, spec vec %d): host result differs from the CPU backend", c.k.Name, c.p, vecOf(c.k))
			}
		}
	}
	if off != len(got) {
		t.Fatalf("read %d of %d output bytes", off, len(got))
	}
	t.Logf("%d kernel launches executed on the host, %d differ", len(cases), bad)
}

func vecOf(k *Kernel) int {
	if strings.Contains(k.Source, "reinterpret_cast<const") {
		return 2
	}
	return 1
}

// hostArg is the C expression passing a parameter in the harness.
func hostArg(c *hostCase, p Param) string {
	ops := append(append([]backend.Operand{}, c.p.Inputs...), c.out)
	switch p.Role {
	case RoleOut:
		return fmt.Sprintf("b%d + %d", len(c.bufs)-1, c.out.Layout.Offset)
	case RoleIn:
		return fmt.Sprintf("b%d + %d", p.Index, c.p.Inputs[p.Index].Layout.Offset)
	case RoleScalar:
		s := c.p.Scalars[p.Index]
		if s.DType.IsFloating() {
			return strconvHex(s.F)
		}
		return fmt.Sprintf("%dll", s.I)
	case RoleCount:
		return fmt.Sprintf("%dll", c.p.Size())
	case RoleDim:
		return fmt.Sprintf("%dll", c.p.Shape[p.Dim])
	case RoleDimDiv:
		return fmt.Sprintf("%dull", DivArg(c.p.Shape[p.Dim]).Bits)
	case RoleStride:
		o := ops[len(ops)-1]
		if p.Index >= 0 {
			o = ops[p.Index]
		}
		return fmt.Sprintf("%dll", o.Layout.Strides[p.Dim])
	}
	panic(fmt.Sprintf("role %d", p.Role))
}

func strconvHex(f float64) string {
	if math.IsInf(f, 0) || math.IsNaN(f) {
		return fmt.Sprintf("%v", f)
	}
	return fmt.Sprintf("%x", f)
}

// sameOutput compares the written elements of two raw outputs; floats of
// transcendental programs within a tolerance, all else exactly.
func sameOutput(c *hostCase, got, want []byte) bool {
	dt := c.p.Result()
	trans := false
	for _, n := range c.p.Nodes {
		trans = trans || n.Op.IsTranscendental() || n.Op == backend.OpPow
	}
	sz := dt.Size()
	for i := 0; i+sz <= len(want); i += sz {
		g, w := got[i:i+sz], want[i:i+sz]
		if bytes.Equal(g, w) {
			continue
		}
		if !dt.IsFloat() {
			return false
		}
		var gv, wv float64
		if dt == backend.Float32 {
			gv = float64(math.Float32frombits(binary.LittleEndian.Uint32(g)))
			wv = float64(math.Float32frombits(binary.LittleEndian.Uint32(w)))
		} else {
			gv = math.Float64frombits(binary.LittleEndian.Uint64(g))
			wv = math.Float64frombits(binary.LittleEndian.Uint64(w))
		}
		tol := 2e-6
		if dt == backend.Float64 {
			tol = 1e-13
		}
		if !trans {
			tol = 0 // only NaNs of different sign or payload may differ
		}
		if !(math.IsNaN(gv) && math.IsNaN(wv)) && !(math.Abs(gv-wv) <= tol*math.Max(1, math.Abs(wv))) {
			return false
		}
	}
	return true
}

// TestPhiloxKernelsRunOnHost runs the generated random-fill kernels on the
// host and checks them bit for bit against package philox: the CUDA source
// reproduces the Go generator exactly.
func TestPhiloxKernelsRunOnHost(t *testing.T) {
	t.Parallel()
	clangtest.Need(t, "clang++-16")
	type rc struct {
		dt     backend.DType
		dist   backend.Dist
		n      int
		seed   uint64
		ctr    uint64
		p0, p1 float64
	}
	cases := []rc{
		{backend.Float32, backend.Uniform, 1001, 42, 7, -2, 3},
		{backend.Float32, backend.Uniform, 64, 1, 0, 1, math.Nextafter(1, 2)}, // clamps
		{backend.Float64, backend.Uniform, 999, 0xdeadbeefcafe, 1 << 40, 0, 1},
		{backend.Float32, backend.Normal, 1001, 5, 3, 0.5, 2},
		{backend.Float64, backend.Normal, 1000, 1<<63 + 11, 99, -1, 0.25},
	}
	dir := t.TempDir()
	var src bytes.Buffer
	src.WriteString(hostPrelude + philoxSource())
	seen := map[string]bool{}
	var ks []*Kernel
	for _, c := range cases {
		k, err := Random(c.dt, c.dist)
		if err != nil {
			t.Fatal(err)
		}
		ks = append(ks, k)
		if !seen[k.Name] {
			seen[k.Name] = true
			src.WriteString(strings.TrimPrefix(k.Source, philoxSource()))
		}
	}
	src.WriteString("\nint main(int argc, char **argv) {\n\tFILE *out = fopen(argv[1], \"wb\");\n")
	for i, c := range cases {
		ct := ctype(c.dt)
		fmt.Fprintf(&src, "\t{\n\t\t%s *o = (%s*)calloc(%d, sizeof(%s));\n\t\tblockDim.x = 256; gridDim.x = 3;\n", ct, ct, c.n, ct)
		fmt.Fprintf(&src, "\t\tfor (blockIdx.x = 0; blockIdx.x < 3; blockIdx.x++) for (threadIdx.x = 0; threadIdx.x < 256; threadIdx.x++)\n")
		fmt.Fprintf(&src, "\t\t\t%s(o, %dll, %dull, %dull, %s, %s);\n", ks[i].Name, c.n, c.seed, c.ctr, strconvHex(c.p0), strconvHex(c.p1))
		fmt.Fprintf(&src, "\t\tfwrite(o, sizeof(%s), %d, out);\n\t\tfree(o);\n\t}\n", ct, c.n)
	}
	src.WriteString("\tfclose(out);\n\treturn 0;\n}\n")
	srcPath := filepath.Join(dir, "rand.cpp")
	os.WriteFile(srcPath, src.Bytes(), 0o600)
	bin := filepath.Join(dir, "rand")
	args := append([]string{"-std=c++17", "-O2", "-ffp-contract=off", "-w"}, sanitizerFlags(t)...)
	if out, err := exec.Command("clang++-16", append(args, "-o", bin, srcPath)...).CombinedOutput(); err != nil {
		t.Fatalf("host compile: %v\n%s", err, out)
	}
	if out, err := sanitizedRun(bin, filepath.Join(dir, "out.bin")).CombinedOutput(); err != nil {
		t.Fatalf("run: %v\n%s%s", err, reportHead(string(out)), firstLines(string(out), 40))
	}
	got, _ := os.ReadFile(filepath.Join(dir, "out.bin"))
	off := 0
	for _, c := range cases {
		var want []byte
		var w bytes.Buffer
		switch {
		case c.dt == backend.Float32 && c.dist == backend.Uniform:
			v := make([]float32, c.n)
			philox.Uniform32(v, c.seed, c.ctr, c.p0, c.p1)
			binary.Write(&w, binary.LittleEndian, v)
		case c.dt == backend.Float64 && c.dist == backend.Uniform:
			v := make([]float64, c.n)
			philox.Uniform64(v, c.seed, c.ctr, c.p0, c.p1)
			binary.Write(&w, binary.LittleEndian, v)
		case c.dt == backend.Float32:
			v := make([]float32, c.n)
			philox.Normal32(v, c.seed, c.ctr, c.p0, c.p1)
			binary.Write(&w, binary.LittleEndian, v)
		default:
			v := make([]float64, c.n)
			philox.Normal64(v, c.seed, c.ctr, c.p0, c.p1)
			binary.Write(&w, binary.LittleEndian, v)
		}
		want = w.Bytes()
		if !bytes.Equal(got[off:off+len(want)], want) {
			t.Errorf("%v %v: CUDA Philox on the host differs from package philox", c.dt, c.dist)
		}
		off += len(want)
	}
}
