package gen

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"unsafe"

	"github.com/gocu-dev/gocu/kernel"
	"github.com/gocu-dev/gocu/meta"
)

// hostRun compiles the CUDA source of fn's module as host C++ and runs the
// kernel over the grid one thread at a time, with args as a Go launch
// would pass them. It returns the slices after the run (in argument order,
// nil for scalars) and the debug error buffer when debug is set.
func hostRun(t testing.TB, fn any, grid, block kernel.Dim3, debug bool, args ...any) ([]any, []uint64) {
	t.Helper()
	m, k, ok := meta.Lookup(fn)
	if !ok {
		t.Fatalf("kernel not registered")
	}
	return hostRunSource(t, m.Source, k, grid, block, debug, args...)
}

func hostRunSource(t testing.TB, src string, k *meta.Kernel, grid, block kernel.Dim3, debug bool, args ...any) ([]any, []uint64) {
	t.Helper()
	outs, errBuf, _ := hostRunOutput(t, src, k, grid, block, debug, args...)
	return outs, errBuf
}

// hostRunOutput is hostRunSource that also returns what the kernel
// printed (printf), thread after thread in block and thread order.
func hostRunOutput(t testing.TB, src string, k *meta.Kernel, grid, block kernel.Dim3, debug bool, args ...any) ([]any, []uint64, string) {
	t.Helper()
	clang := clangPath(t)
	if len(args) != len(k.Params) {
		t.Fatalf("%d arguments for %d parameters", len(args), len(k.Params))
	}
	var drv strings.Builder
	if strings.Contains(src, "gocu_dynsmem[]") {
		drv.WriteString("\nunsigned char gocu_dynsmem[16];\n")
	}
	drv.WriteString("\nint main(int argc, char** argv) {\n  FILE* in = fopen(argv[1], \"rb\");\n  FILE* out = fopen(argv[2], \"wb\");\n")
	var input bytes.Buffer
	var call []string
	for i, p := range k.Params {
		v := reflect.ValueOf(args[i])
		switch p.Kind {
		case meta.Slice:
			elem := strings.TrimSuffix(p.CType, "*")
			fmt.Fprintf(&drv, "  long long n%d; fread(&n%d, 8, 1, in);\n", i, i)
			fmt.Fprintf(&drv, "  %s* p%d = (%s*)aligned_alloc(64, (size_t)(n%d * sizeof(%s) + 64));\n", elem, i, elem, i, elem)
			fmt.Fprintf(&drv, "  if (fread(p%d, sizeof(%s), (size_t)n%d, in) != (size_t)n%d) return 3;\n", i, elem, i, i)
			fmt.Fprintf(&drv, "  if (sizeof(%s) != %d) return 4;\n", elem, p.ElemSize)
			call = append(call, fmt.Sprintf("p%d", i), fmt.Sprintf("n%d", i))
			binary.Write(&input, binary.LittleEndian, int64(v.Len()))
			input.Write(rawBytes(v))
		default:
			fmt.Fprintf(&drv, "  %s s%d; if (fread(&s%d, sizeof(s%d), 1, in) != 1) return 3;\n", p.CType, i, i, i)
			fmt.Fprintf(&drv, "  if (sizeof(s%d) != %d) return 4;\n", i, p.Size)
			call = append(call, fmt.Sprintf("s%d", i))
			input.Write(rawBytes(v))
		}
	}
	fmt.Fprintf(&drv, "  blockDim = {%d, %d, %d}; gridDim = {%d, %d, %d};\n", block.X, block.Y, block.Z, grid.X, grid.Y, grid.Z)
	drv.WriteString("  for (unsigned bz = 0; bz < gridDim.z; bz++) for (unsigned by = 0; by < gridDim.y; by++) for (unsigned bx = 0; bx < gridDim.x; bx++)\n")
	drv.WriteString("  for (unsigned tz = 0; tz < blockDim.z; tz++) for (unsigned ty = 0; ty < blockDim.y; ty++) for (unsigned tx = 0; tx < blockDim.x; tx++) {\n")
	drv.WriteString("    blockIdx = {bx, by, bz}; threadIdx = {tx, ty, tz};\n")
	fmt.Fprintf(&drv, "    %s(%s);\n  }\n", k.Entry, strings.Join(call, ", "))
	for i, p := range k.Params {
		if p.Kind == meta.Slice {
			fmt.Fprintf(&drv, "  fwrite(p%d, sizeof(*p%d), (size_t)n%d, out);\n", i, i, i)
		}
	}
	if debug {
		drv.WriteString("  fwrite(gocu_err, 8, 16, out);\n")
	}
	drv.WriteString("  fclose(out);\n  return 0;\n}\n")

	dir := t.TempDir()
	prelude, _ := filepath.Abs("testdata/host/gocu_host_prelude.h")
	cpp := filepath.Join(dir, "k.cpp")
	if err := os.WriteFile(cpp, []byte(src+drv.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "k")
	cargs := []string{"-x", "c++", "-std=c++17", "-O1", "-ffp-contract=off", "-fno-strict-aliasing", "-w", "-include", prelude, "-o", bin, cpp, "-lm"}
	if debug {
		cargs = append([]string{"-DGOCU_DEBUG"}, cargs...)
	}
	if out, err := exec.Command(clang, cargs...).CombinedOutput(); err != nil {
		t.Fatalf("host compile: %v\n%s\n%s", err, out, numbered(src+drv.String()))
	}
	inFile, outFile := filepath.Join(dir, "in"), filepath.Join(dir, "out")
	if err := os.WriteFile(inFile, input.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	run := exec.Command(bin, inFile, outFile)
	run.Stdout, run.Stderr = &stdout, &stderr
	if err := run.Run(); err != nil {
		t.Fatalf("host run: %v\n%s%s", err, stdout.Bytes(), stderr.Bytes())
	}
	res, err := os.ReadFile(outFile)
	if err != nil {
		t.Fatal(err)
	}
	outs := make([]any, len(args))
	for i, p := range k.Params {
		if p.Kind != meta.Slice {
			continue
		}
		v := reflect.ValueOf(args[i])
		c := reflect.MakeSlice(v.Type(), v.Len(), v.Len())
		n := copy(rawBytes(c), res)
		res = res[n:]
		outs[i] = c.Interface()
	}
	var errBuf []uint64
	if debug {
		errBuf = make([]uint64, 16)
		for i := range errBuf {
			errBuf[i] = binary.LittleEndian.Uint64(res[8*i:])
		}
	}
	return outs, errBuf, stdout.String()
}

// rawBytes returns the memory of a slice or a value.
func rawBytes(v reflect.Value) []byte {
	if v.Kind() == reflect.Slice {
		if v.Len() == 0 {
			return nil
		}
		return unsafe.Slice((*byte)(v.UnsafePointer()), v.Len()*int(v.Type().Elem().Size()))
	}
	p := reflect.New(v.Type())
	p.Elem().Set(v)
	return unsafe.Slice((*byte)(p.UnsafePointer()), v.Type().Size())
}
