package nvrtc

// These tests call the real NVRTC. NVRTC needs no GPU, only the library:
// they run wherever libnvrtc is found (GOCU_NVRTC_LIB points at one) and
// skip elsewhere.

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/gocu-dev/gocu/internal/units"
)

func needNVRTC(tb testing.TB) {
	tb.Helper()
	if err := Load(); err != nil {
		tb.Skipf("no NVRTC library (%s); set GOCU_NVRTC_LIB to run", units.OneLine(err))
	}
}

const saxpySrc = `extern "C" __global__ void saxpy(float a, const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + y[i];
}
`

func TestLibVersion(t *testing.T) {
	needNVRTC(t)
	major, minor, err := Version()
	if err != nil || major < 11 {
		t.Fatalf("Version() = %d.%d, %v", major, minor, err)
	}
	archs, err := SupportedArchs()
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for i, a := range archs {
		if i > 0 && a <= archs[i-1] {
			t.Errorf("archs not ascending: %v", archs)
		}
		found = found || a == 90
	}
	if !found {
		t.Errorf("NVRTC %d.%d does not list sm_90: %v", major, minor, archs)
	}
	p, _ := LibraryPath()
	t.Logf("NVRTC %d.%d from %s, archs %v", major, minor, p, archs)
}

func TestCompileCUBIN(t *testing.T) {
	needNVRTC(t)
	r, err := Compile(saxpySrc, Options{Arch: "sm_90"})
	if err != nil {
		t.Fatal(err)
	}
	if r.Format != CUBIN || len(r.Code) < 64 || string(r.Code[:4]) != "\x7fELF" {
		t.Fatalf("not an ELF CUBIN: format %v, %d bytes, % x", r.Format, len(r.Code), r.Code[:min(8, len(r.Code))])
	}
	const emCUDA = 190 // e_machine of NVIDIA CUDA objects
	if m := binary.LittleEndian.Uint16(r.Code[18:]); m != emCUDA {
		t.Errorf("e_machine = %d, want %d (EM_CUDA)", m, emCUDA)
	}
	if !bytes.Contains(r.Code, []byte("saxpy")) {
		t.Error("the CUBIN does not name the kernel")
	}
	if r.PTXText() != "" {
		t.Error("PTXText of a CUBIN is not empty")
	}
}

func TestCompilePTX(t *testing.T) {
	needNVRTC(t)
	r, err := Compile(saxpySrc, Options{Arch: "compute_90", Name: "saxpy.cu"})
	if err != nil {
		t.Fatal(err)
	}
	if r.Format != PTX || r.Code[len(r.Code)-1] != 0 {
		t.Fatalf("PTX must end with its NUL byte for cuModuleLoadData")
	}
	ptx := r.PTXText()
	for _, want := range []string{".entry saxpy", ".target sm_90", ".address_size 64", "fma.rn.f32"} {
		if !strings.Contains(ptx, want) {
			t.Errorf("PTX lacks %q", want)
		}
	}
	// NoFMAD splits the multiply-add.
	r2, err := Compile(saxpySrc, Options{Arch: "compute_90", NoFMAD: true})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(r2.PTXText(), "fma.rn.f32") {
		t.Error("NoFMAD still contracts into fma")
	}
}

func TestCompileErrorPointsAtTheLine(t *testing.T) {
	needNVRTC(t)
	src := "extern \"C\" __global__ void k(float* x, int n) {\n" +
		"    int i = threadIdx.x;\n" +
		"    if (i < n)\n" +
		"        x[i] = undefined_thing * 2.0f;\n" +
		"}\n"
	_, err := Compile(src, Options{Arch: "sm_90", Name: "broken.cu"})
	var ce *CompileError
	if !errors.As(err, &ce) {
		t.Fatalf("err = %v (%T), want *CompileError", err, err)
	}
	if !errors.Is(err, Compilation) {
		t.Error("errors.Is(err, Compilation) is false")
	}
	if len(ce.Diagnostics) == 0 {
		t.Fatalf("no diagnostics parsed from:\n%s", ce.Log)
	}
	d := ce.Diagnostics[0]
	if d.File != "broken.cu" || d.Line != 4 || d.Severity != "error" || !strings.Contains(d.Message, "undefined_thing") {
		t.Errorf("diagnostic = %+v\nlog:\n%s", d, ce.Log)
	}
	if d.Source != "        x[i] = undefined_thing * 2.0f;" {
		t.Errorf("source line = %q", d.Source)
	}
	if d.Column != 0 && !strings.HasPrefix(d.Source[d.Column-1:], "undefined_thing") {
		t.Errorf("column %d does not point at the identifier", d.Column)
	}
	msg := err.Error()
	if !strings.Contains(msg, "broken.cu:4") || !strings.Contains(msg, "x[i] = undefined_thing * 2.0f;") {
		t.Errorf("message does not show the line:\n%s", msg)
	}
	t.Logf("\n%s", msg)
}

func TestCompileLogOnSuccess(t *testing.T) {
	needNVRTC(t)
	src := "extern \"C\" __global__ void k(float* x) {\n    int unused;\n    x[0] = 1.0f;\n}\n"
	r, err := Compile(src, Options{Arch: "sm_90"})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(r.Log, "unused") {
		t.Fatalf("the warning is not in the log: %q", r.Log)
	}
	if len(r.Diagnostics) != 1 || r.Diagnostics[0].Severity != "warning" || r.Diagnostics[0].Line != 2 ||
		r.Diagnostics[0].Source != "    int unused;" {
		t.Errorf("diagnostics = %+v", r.Diagnostics)
	}
}

func TestNameExpressions(t *testing.T) {
	needNVRTC(t)
	src := `template <typename T, int N>
__global__ void fill(T* x, T v) {
    int i = blockIdx.x * N + threadIdx.x;
    x[i] = v;
}
`
	exprs := []string{"fill<float, 128>", "fill<double, 64>", "&fill<int, 32>"}
	r, err := Compile(src, Options{Arch: "sm_90", NameExpressions: exprs})
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, e := range exprs {
		name := r.Lowered[e]
		if !strings.HasPrefix(name, "_Z") || !strings.Contains(name, "fill") {
			t.Errorf("lowered name of %q = %q", e, name)
		}
		if seen[name] {
			t.Errorf("two expressions lowered to %q", name)
		}
		seen[name] = true
		if !bytes.Contains(r.Code, []byte(name)) {
			t.Errorf("the CUBIN has no symbol %q", name)
		}
	}
	_, err = Compile(src, Options{Arch: "sm_90", NameExpressions: []string{"fill<float, 128>", "no_such_kernel<int>"}})
	if err == nil {
		t.Error("an invalid name expression compiled")
	}
	t.Logf("invalid name expression: %v", err)
}

func TestHeadersAndDefines(t *testing.T) {
	needNVRTC(t)
	headers := map[string]string{
		"names.cuh":   "#pragma once\n#define KERNEL from_header\n",
		"math/op.cuh": "#pragma once\n__device__ inline int op(int a) { return a * SCALE; }\n",
	}
	src := "#include \"names.cuh\"\n#include \"math/op.cuh\"\nextern \"C\" __global__ void KERNEL(int* x) { x[threadIdx.x] = op(threadIdx.x) + OFFSET; }\n"
	r, err := Compile(src, Options{Arch: "compute_90", Headers: headers, Defines: map[string]string{"SCALE": "3", "OFFSET": "424242"}, Std: "c++17"})
	if err != nil {
		t.Fatal(err)
	}
	ptx := r.PTXText()
	if !strings.Contains(ptx, ".entry from_header") || !strings.Contains(ptx, "424242") {
		t.Errorf("headers or defines were not applied:\n%s", ptx)
	}

	headers["math/op.cuh"] = "#pragma once\n__device__ inline int op(int a) { return a * SCALE }\n"
	_, err = Compile(src, Options{Arch: "sm_90", Headers: headers, Defines: map[string]string{"SCALE": "3", "OFFSET": "1"}})
	var ce *CompileError
	if !errors.As(err, &ce) || len(ce.Diagnostics) == 0 {
		t.Fatalf("err = %v", err)
	}
	d := ce.Diagnostics[0]
	if filepath.Base(d.File) != "op.cuh" || d.Line != 2 || !strings.Contains(d.Source, "return a * SCALE }") {
		t.Errorf("header diagnostic = %+v\n%s", d, ce.Log)
	}
}

func TestIncludePathAndMissingHeader(t *testing.T) {
	needNVRTC(t)
	_, err := Compile("#include \"nothere.cuh\"\n", Options{Arch: "sm_90"})
	var ce *CompileError
	if !errors.As(err, &ce) || len(ce.Diagnostics) == 0 || !strings.Contains(ce.Diagnostics[0].Message, "nothere.cuh") {
		t.Fatalf("err = %v", err)
	}
	if d := ce.Diagnostics[0]; d.Line != 1 || d.Source != "#include \"nothere.cuh\"" {
		t.Errorf("%+v", d)
	}
}

func TestNVRTCRejectsAnOption(t *testing.T) {
	needNVRTC(t)
	_, err := Compile(saxpySrc, Options{Arch: "sm_90", Extra: []string{"--no-such-option"}})
	var e *Error
	if !errors.As(err, &e) || e.Code != InvalidOption || !errors.Is(err, InvalidOption) {
		t.Fatalf("err = %v (%T)", err, err)
	}
	if !strings.Contains(err.Error(), "no-such-option") {
		t.Errorf("the message does not name the option: %v", err)
	}
}

func TestConcurrentCompiles(t *testing.T) {
	needNVRTC(t)
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for i := range 3 {
				name := fmt.Sprintf("k%d_%d", g, i)
				r, err := Compile(strings.Replace(saxpySrc, "saxpy", name, 1), Options{Arch: "sm_90"})
				if err != nil {
					t.Error(err)
					return
				}
				if !bytes.Contains(r.Code, []byte(name)) {
					t.Errorf("%s: wrong CUBIN", name)
				}
			}
		})
	}
	wg.Wait()
}

func TestCacheWithNVRTC(t *testing.T) {
	needNVRTC(t)
	t.Setenv("GOCU_CACHE", "")
	c, err := NewCache(CacheConfig{Dir: t.TempDir(), Driver: "test"})
	if err != nil {
		t.Fatal(err)
	}
	opts := Options{Arch: "sm_90", NameExpressions: []string{"saxpy"}}
	r1, err := c.Compile(saxpySrc, opts)
	if err != nil || r1.Cached {
		t.Fatalf("first: %v", err)
	}
	r2, err := c.Compile(saxpySrc, opts)
	if err != nil || !r2.Cached {
		t.Fatalf("second: %v cached=%v", err, r2 != nil && r2.Cached)
	}
	if !bytes.Equal(r1.Code, r2.Code) || r2.Lowered["saxpy"] != "saxpy" {
		t.Errorf("cached result differs: lowered %v", r2.Lowered)
	}
	_, err = c.Compile(strings.Replace(saxpySrc, "a * x[i]", "a * z[i]", 1), opts)
	if !errors.As(err, new(*CompileError)) {
		t.Errorf("err = %v", err)
	}
	if info, _ := c.Info(); info.Entries != 1 {
		t.Errorf("%d entries after one success and one failure", info.Entries)
	}
}

var coldCounter atomic.Int64

// BenchmarkCompileCold compiles a small kernel with NVRTC, nothing cached:
// every iteration has a new kernel name and source. CuPy took 31 ms here.
func BenchmarkCompileCold(b *testing.B) {
	needNVRTC(b)
	for b.Loop() {
		name := fmt.Sprintf("saxpy_%d", coldCounter.Add(1))
		if _, err := Compile(strings.Replace(saxpySrc, "saxpy", name, 1), Options{Arch: "sm_90"}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N), "ms/compile")
}

// BenchmarkCompileColdPTX is the same to PTX (the driver then finishes the
// job at load time, which this does not count).
func BenchmarkCompileColdPTX(b *testing.B) {
	needNVRTC(b)
	for b.Loop() {
		name := fmt.Sprintf("saxpy_%d", coldCounter.Add(1))
		if _, err := Compile(strings.Replace(saxpySrc, "saxpy", name, 1), Options{Arch: "compute_90"}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N), "ms/compile")
}

// BenchmarkCacheWarm loads a real CUBIN from the disk cache. Target < 1 ms.
func BenchmarkCacheWarm(b *testing.B) {
	needNVRTC(b)
	b.Setenv("GOCU_CACHE", "")
	c, err := NewCache(CacheConfig{Dir: b.TempDir(), Driver: "bench"})
	if err != nil {
		b.Fatal(err)
	}
	if _, err := c.Compile(saxpySrc, Options{Arch: "sm_90"}); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		r, err := c.Compile(saxpySrc, Options{Arch: "sm_90"})
		if err != nil || !r.Cached {
			b.Fatal("miss", err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N), "us/load")
}

// BenchmarkCompileColdMinimal tries NVRTC's -minimal (newer NVRTC: omits
// texture and runtime-library declarations to compile small programs
// faster); it skips where NVRTC does not know the option.
func BenchmarkCompileColdMinimal(b *testing.B) {
	needNVRTC(b)
	if _, err := Compile(saxpySrc, Options{Arch: "sm_90", Extra: []string{"-minimal"}}); errors.Is(err, InvalidOption) {
		b.Skipf("this NVRTC has no -minimal: %v", err)
	}
	for b.Loop() {
		name := fmt.Sprintf("saxpy_%d", coldCounter.Add(1))
		if _, err := Compile(strings.Replace(saxpySrc, "saxpy", name, 1), Options{Arch: "sm_90", Extra: []string{"-minimal"}}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N), "ms/compile")
}

func TestCompilerIdentity(t *testing.T) {
	needNVRTC(t)
	id, err := NVRTC.ID()
	if err != nil {
		t.Fatal(err)
	}
	major, minor, _ := Version()
	if !strings.HasPrefix(id, fmt.Sprintf("nvrtc %d.%d ", major, minor)) || !strings.Contains(id, "libnvrtc.so") {
		t.Errorf("ID() = %q: want the version and the library file", id)
	}
	target, err := TargetFor(9, 0)
	if err != nil || target != "sm_90" {
		t.Errorf("TargetFor(9, 0) = %q, %v", target, err)
	}
	t.Logf("%s", id)
}

// By default NVRTC would read headers from the source's directory, outside
// the cache key; gocu turns that off unless SearchSourceDir asks for it, and
// then the directory is part of the key.
func TestSearchSourceDir(t *testing.T) {
	needNVRTC(t)
	dir := t.TempDir()
	hdr := filepath.Join(dir, "local.cuh")
	if err := os.WriteFile(hdr, []byte("#define V 7\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	src := "#include \"local.cuh\"\nextern \"C\" __global__ void k(int* x) { x[0] = V; }\n"
	opts := Options{Arch: "compute_90", Name: filepath.Join(dir, "k.cu")}
	if _, err := Compile(src, opts); !errors.As(err, new(*CompileError)) {
		t.Fatalf("a header beside the source was found without SearchSourceDir: %v", err)
	}
	opts.SearchSourceDir = true
	r, err := Compile(src, opts)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(r.PTXText(), "7;") {
		t.Errorf("the header's value is not in the PTX")
	}
	t.Setenv("GOCU_CACHE", "")
	c, err := NewCache(CacheConfig{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	k1, ok, err := c.Key(src, opts)
	if err != nil || !ok {
		t.Fatal(err)
	}
	if err := os.WriteFile(hdr, []byte("#define V 8\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	dirFingerprints.Clear()
	if k2, _, _ := c.Key(src, opts); k2 == k1 {
		t.Error("editing a header beside the source did not change the key")
	}
}
