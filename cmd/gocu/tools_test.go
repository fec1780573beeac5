package main

import (
	"encoding/json"
	"errors"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gocu-dev/gocu/cuda"
	"github.com/gocu-dev/gocu/internal/bench"
	"github.com/gocu-dev/gocu/internal/gputest"
	"github.com/gocu-dev/gocu/kernel"
	"github.com/gocu-dev/gocu/nvrtc"
	"github.com/gocu-dev/gocu/prof"
	"github.com/gocu-dev/gocu/sim"
)

// TestMain lets the tests run the command itself in a child process:
// GOCU_TEST_MAIN=1 makes the test binary the gocu command (main with
// os.Args), and GOCU_TEST_SIM_LAUNCHES=1 makes it a program that launches
// kernels on the simulator and exits without flushing.
func TestMain(m *testing.M) {
	switch {
	case os.Getenv("GOCU_TEST_MAIN") == "1":
		main()
		os.Exit(0)
	case os.Getenv("GOCU_TEST_SIM_LAUNCHES") == "1":
		out := make([]int32, 512)
		k := sim.Kernel{Name: "Iota", Func: func(t *kernel.Thread) { out[t.Index()] = t.Index() }}
		for range 4 {
			if err := sim.Launch(sim.Config{Grid: kernel.Dim3{X: 2}, Block: kernel.Dim3{X: 256}}, k); err != nil {
				panic(err)
			}
		}
		prof.Flush() // what a program does on its way out
		os.Exit(3)   // a failing program: its status must come through
	}
	os.Exit(m.Run())
}

func self(t *testing.T) string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Skip(err)
	}
	return exe
}

func TestBenchSim(t *testing.T) {
	dir := t.TempDir()
	js, png1 := filepath.Join(dir, "sim.json"), filepath.Join(dir, "sim.png")
	out, err := run(t, "bench", "--device", "sim", "--small", "-n", "2", "--json", js, "--plot", png1)
	if err != nil {
		t.Fatalf("gocu bench: %v\n%s", err, out)
	}
	for _, want := range []string{"gocu bench on sim", "measured ceilings", "gray", "matmul_tiled_64", "wrote " + js, "wrote " + png1} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	f, err := os.Open(js)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := bench.ReadReport(f)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	if rep.Device.Kind != "sim" || rep.Result("gray") == nil || rep.Result("gray").Reps != 2 {
		t.Errorf("report %+v", rep)
	}
	pf, err := os.Open(png1)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := png.Decode(pf); err != nil {
		t.Errorf("the roofline is not a PNG: %v", err)
	}
	pf.Close()

	// Against the saved run, only the tiled matmuls.
	out, err = run(t, "bench", "--device", "sim", "--small", "-n", "2", "--only", "matmul_tiled_64,matmul_tiled_256", "--compare", js)
	if err != nil {
		t.Fatalf("gocu bench --compare: %v\n%s", err, out)
	}
	if !strings.Contains(out, "vs sim.json") || strings.Contains(out, "\ngray ") {
		t.Errorf("compare output:\n%s", out)
	}
	out, err = run(t, "bench", "--device", "sim", "--list")
	if err != nil || !strings.Contains(out, "matmul_tiled_256") || !strings.Contains(out, "ceiling") {
		t.Errorf("--list: %v\n%s", err, out)
	}
}

func TestBenchErrors(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"bench", "--device", "tpu"}, "unknown device"},
		{[]string{"bench", "--device", "sim", "--only", "nosuch"}, "no workload \"nosuch\""},
		{[]string{"bench", "--device", "sim", "--suite", "nosuch"}, "no suite"},
		{[]string{"bench", "--device", "sim", "--plot", filepath.Join(dir, "r.gif")}, ".png or .svg"},
		{[]string{"bench", "--device", "sim", "--json", filepath.Join(dir, "no", "dir", "r.json")}, "no such file"},
		{[]string{"bench", "--device", "sim", "--compare", filepath.Join(dir, "missing.json")}, "--compare"},
		{[]string{"bench", "extra"}, "unknown command"},
		{[]string{"bench", "--device", "sim", "--reps", "-5"}, "--reps -5"},
	} {
		out, err := run(t, tc.args...)
		if err == nil || !strings.Contains(err.Error()+out, tc.want) {
			t.Errorf("gocu %s: %v, want an error with %q\n%s", strings.Join(tc.args, " "), err, tc.want, out)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "r.gif")); err == nil {
		t.Error("a refused --plot file was left behind")
	}
}

func TestArchArg(t *testing.T) {
	for in, want := range map[[2]string]string{
		{"sm_90", ""}: "sm_90", {"90", ""}: "sm_90", {"9.0", ""}: "sm_90", {"compute_80", ""}: "compute_80",
		{"sm_90", "ptx"}: "compute_90", {"sm_90a", ""}: "sm_90a", {"SM_86", ""}: "sm_86",
	} {
		got, err := archArg(in[0], in[1] == "ptx")
		if err != nil || got != want {
			t.Errorf("archArg(%q, ptx %v) = %q, %v; want %q", in[0], in[1] == "ptx", got, err, want)
		}
	}
	for _, bad := range []string{"", "sm_", "sm_xx", "hopper", "sm_9"} {
		if _, err := archArg(bad, false); err == nil {
			t.Errorf("archArg(%q) accepted", bad)
		}
	}
}

func TestKernelListingWithoutNVRTC(t *testing.T) {
	ptx := `.version 8.0
.target sm_90
.visible .entry scale(
	.param .u64 scale_param_0
)
{ ret; }
.weak .entry _Z4fillIfEvPT_S0_(
	.param .u64 p0
)
.func (.param .b32 r) _Z2sqf(.param .b32 x) { ret; }
	.entry plain ( )
`
	if got := ptxEntries(ptx); !slices.Equal(got, []string{"scale", "_Z4fillIfEvPT_S0_", "plain"}) {
		t.Errorf("ptxEntries = %q", got)
	}
	// A CUBIN compiled from testdata/scale.cu by NVRTC 11.8 for sm_90: its
	// two kernels, not the __noinline__ device function.
	code, err := os.ReadFile("testdata/scale_sm90.cubin")
	if err != nil {
		t.Fatal(err)
	}
	names, err := cubinKernels(code)
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(names)
	if !slices.Equal(names, []string{"_Z4fillIfEvPT_S0_", "scale"}) {
		t.Errorf("cubinKernels = %q", names)
	}
	if _, err := cubinKernels([]byte("not an elf")); err == nil {
		t.Error("cubinKernels of garbage succeeded")
	}
}

func TestCompileErrorsWithoutNVRTC(t *testing.T) {
	out, err := run(t, "compile", "testdata/missing.cu", "--arch", "sm_90")
	if err == nil || !strings.Contains(err.Error(), "no such file") {
		t.Errorf("missing file: %v\n%s", err, out)
	}
	if _, err := run(t, "compile", "testdata/scale.cu", "--arch", "volta"); err == nil || !strings.Contains(err.Error(), "--arch") {
		t.Errorf("bad --arch: %v", err)
	}
	if _, err := run(t, "compile"); err == nil {
		t.Error("compile without a file succeeded")
	}
	if !cuda.Available() {
		_, err := run(t, "compile", "testdata/scale.cu")
		if err == nil || !strings.Contains(err.Error(), "--arch") || !strings.Contains(err.Error(), "no GPU") {
			t.Errorf("no GPU and no --arch: %v", err)
		}
	}
}

func needNVRTC(t *testing.T) {
	t.Helper()
	gputest.Need(t, nvrtc.Load()) // GOCU_NVRTC_LIB names the library
}

func TestCompile(t *testing.T) {
	needNVRTC(t)
	dir := t.TempDir()
	arch := []string{"--arch", "sm_80"}
	if cuda.Available() {
		arch = nil // the GPU present, to get the resource report
	}
	cubin := filepath.Join(dir, "scale.cubin")
	out, err := run(t, append([]string{"compile", "testdata/scale.cu", "-I", "testdata/include", "-o", cubin}, arch...)...)
	if err != nil {
		t.Fatalf("gocu compile: %v\n%s", err, out)
	}
	code, err := os.ReadFile(cubin)
	if err != nil || !strings.HasPrefix(string(code), "\x7fELF") {
		t.Fatalf("no CUBIN written: %v", err)
	}
	for _, want := range []string{"wrote " + cubin, "scale", "_Z4fillIfEvPT_S0_"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if cuda.Available() {
		for _, want := range []string{"registers", "shared (static)", "local (spills)", "suggested block", "occupancy", "256 B"} {
			if !strings.Contains(out, want) {
				t.Errorf("resource report lacks %q:\n%s", want, out)
			}
		}
	} else if !strings.Contains(out, "needs a GPU") {
		t.Errorf("without a GPU the output must say that resource usage needs one:\n%s", out)
	}

	// PTX.
	ptx := filepath.Join(dir, "scale.ptx")
	out, err = run(t, "compile", "testdata/scale.cu", "--arch", "sm_90", "--ptx", "-I", "testdata/include", "-o", ptx)
	if err != nil {
		t.Fatalf("--ptx: %v\n%s", err, out)
	}
	text, _ := os.ReadFile(ptx)
	if !strings.Contains(string(text), ".entry scale") || !strings.Contains(string(text), ".target sm_90") || strings.ContainsRune(string(text), 0) {
		t.Errorf("PTX output:\n%.400s", text)
	}

	// -D: a source that needs a macro.
	src := filepath.Join(dir, "need.cu")
	os.WriteFile(src, []byte("#ifndef WIDTH\n#error WIDTH is not defined\n#endif\nextern \"C\" __global__ void w(float* x) { x[0] = WIDTH; }\n"), 0o644)
	if out, err := run(t, "compile", src, "--arch", "sm_90", "-o", filepath.Join(dir, "a.cubin")); err == nil || !strings.Contains(err.Error(), "WIDTH is not defined") {
		t.Errorf("without -D: %v\n%s", err, out)
	}
	if out, err := run(t, "compile", src, "--arch", "sm_90", "-DWIDTH=4", "-o", filepath.Join(dir, "b.cubin")); err != nil {
		t.Errorf("with -DWIDTH=4: %v\n%s", err, out)
	}
	if _, err := run(t, "compile", src, "--arch", "sm_90", "-D", "=4"); err == nil {
		t.Error("-D =4 was accepted")
	}

	// A compile error: the diagnostic with its source line, a non-zero status.
	bad := filepath.Join(dir, "bad.cu")
	os.WriteFile(bad, []byte("extern \"C\" __global__ void bad(float* x) {\n  x[0] = undefined_thing;\n}\n"), 0o644)
	_, err = run(t, "compile", bad, "--arch", "sm_90", "-o", filepath.Join(dir, "bad.cubin"))
	var ce *nvrtc.CompileError
	if err == nil || !errors.As(err, &ce) || !strings.Contains(err.Error(), "bad.cu:2") || !strings.Contains(err.Error(), "x[0] = undefined_thing;") {
		t.Errorf("compile error: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "bad.cubin")); err == nil {
		t.Error("a failed compile wrote its output")
	}
	// Without -I the header is not found.
	if _, err := run(t, "compile", "testdata/scale.cu", "--arch", "sm_90", "-o", filepath.Join(dir, "c.cubin")); err == nil || !strings.Contains(err.Error(), "tile.h") {
		t.Errorf("missing include: %v", err)
	}

	// The default output name is FILE.cubin in the current directory.
	wd, _ := os.Getwd()
	abs, _ := filepath.Abs("testdata/scale.cu")
	inc, _ := filepath.Abs("testdata/include")
	os.Chdir(dir)
	defer os.Chdir(wd)
	if out, err := run(t, "compile", abs, "--arch", "sm_90", "-I", inc); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if _, err := os.Stat(filepath.Join(dir, "scale.cubin")); err != nil {
		t.Errorf("no scale.cubin in the current directory: %v", err)
	}
}

func TestProfCommand(t *testing.T) {
	if err := prof.Start(); err != nil {
		t.Fatal(err)
	}
	out := make([]float32, 1024)
	k := sim.Kernel{Name: "Fill", Func: func(th *kernel.Thread) { out[th.Index()] = 1 }}
	for range 3 {
		if err := sim.Launch(sim.Config{Grid: kernel.Dim3{X: 4}, Block: kernel.Dim3{X: 256}}, k); err != nil {
			t.Fatal(err)
		}
	}
	p, err := prof.Stop()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "trace.json")
	if err := p.WriteFile(path); err != nil {
		t.Fatal(err)
	}
	text, err := run(t, "prof", path)
	if err != nil {
		t.Fatalf("gocu prof: %v\n%s", err, text)
	}
	for _, want := range []string{"Name", "Calls", "Fill", "sim kernel", "3 calls", "sim: CPU, Go kernels on the simulator"} {
		if !strings.Contains(text, want) {
			t.Errorf("gocu prof output lacks %q:\n%s", want, text)
		}
	}
	if _, err := run(t, "prof", filepath.Join(t.TempDir(), "missing.json")); err == nil {
		t.Error("gocu prof of a missing file succeeded")
	}
	bad := filepath.Join(t.TempDir(), "bad.json")
	os.WriteFile(bad, []byte("{"), 0o644)
	if _, err := run(t, "prof", bad); err == nil {
		t.Error("gocu prof of a broken file succeeded")
	}
}

// gocu prof run: the child (this test binary acting as a program that
// launches four simulator kernels and exits with status 3) is profiled.
func TestProfRun(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a child process")
	}
	exe := self(t)
	trace := filepath.Join(t.TempDir(), "child.json")
	t.Setenv("GOCU_TEST_SIM_LAUNCHES", "1")
	out, err := run(t, "prof", "run", "-o", trace, "--", exe)
	os.Unsetenv("GOCU_TEST_SIM_LAUNCHES")
	if err == nil || !strings.Contains(err.Error(), "exit status 3") {
		t.Errorf("the child's failure did not come through: %v", err)
	}
	for _, want := range []string{"Iota", "4 calls", "trace: " + trace} {
		if !strings.Contains(out, want) {
			t.Errorf("gocu prof run output lacks %q:\n%s", want, out)
		}
	}
	if _, err := os.Stat(trace); err != nil {
		t.Error(err)
	}
	if _, err := run(t, "prof", "run", "--", "/bin/true"); err == nil || !strings.Contains(err.Error(), "wrote no profile") {
		t.Errorf("a program that does not use gocu: %v", err)
	}
}

// GOCU_PROFILE on the gocu command itself: the trace is complete when the
// command returns, because main flushes it.
func TestCommandFlushesProfile(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a child process")
	}
	exe := self(t)
	trace := filepath.Join(t.TempDir(), "bench.json")
	c := exec.Command(exe, "bench", "--device", "sim", "--small", "-n", "3", "--only", "gray")
	c.Env = append(os.Environ(), "GOCU_TEST_MAIN=1", prof.EnvFile+"="+trace)
	out, err := c.CombinedOutput()
	if err != nil {
		t.Fatalf("gocu bench: %v\n%s", err, out)
	}
	data, err := os.ReadFile(trace)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		TraceEvents []struct {
			Name, Cat string
		} `json:"traceEvents"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatalf("the trace is not JSON: %v", err)
	}
	grays := 0
	for _, e := range doc.TraceEvents {
		if e.Name == "Gray" && e.Cat == prof.SimKernel {
			grays++
		}
	}
	// The checked first run and the 3 timed repetitions at least.
	if grays < 4 {
		t.Errorf("%d Gray launches in the trace, want at least 4:\n%s", grays, out)
	}
}

// gocu prof refuses what is no trace (null, /dev/zero, a huge sparse
// file) without reading it whole, and prints a crafted trace's names with
// their control characters escaped.
func TestProfHostileInput(t *testing.T) {
	dir := t.TempDir()
	null := filepath.Join(dir, "null.json")
	os.WriteFile(null, []byte("null"), 0o644)
	sparse := filepath.Join(dir, "sparse.json")
	if f, err := os.Create(sparse); err == nil {
		f.Truncate(40 << 30)
		f.Close()
	}
	inputs := []string{null, sparse}
	if _, err := os.Stat("/dev/zero"); err == nil {
		inputs = append(inputs, "/dev/zero")
	}
	for _, in := range inputs {
		if out, err := run(t, "prof", in); err == nil || !strings.Contains(err.Error(), "not a Chrome trace") {
			t.Errorf("gocu prof %s: %v\n%s", in, err, out)
		}
	}
	crafted := filepath.Join(dir, "crafted.json")
	os.WriteFile(crafted, []byte(`{"traceEvents":[{"name":"process_name","ph":"M","pid":1,"args":{"name":"cuda:0 \u001b[31mred"}},`+
		`{"name":"\u001b[2J\u001b]0;title\u0007K\u202e","cat":"kernel","ph":"X","ts":1,"dur":2,"pid":1,"tid":1,"args":{"device":"cuda:0","host_ts":1,"host_dur":1}}]}`), 0o644)
	out, err := run(t, "prof", crafted)
	if err != nil {
		t.Fatalf("gocu prof of a crafted trace: %v", err)
	}
	if strings.ContainsAny(out, "\x1b\x07\u202e") || !strings.Contains(out, `\x1b[2J\x1b]0;title\aK\u202e`) || !strings.Contains(out, `\x1b[31mred`) {
		t.Errorf("gocu prof printed control characters raw:\n%q", out)
	}
}

// gocu gray refuses /dev/zero and a huge sparse file at once instead of
// reading them whole.
func TestGrayHostileInput(t *testing.T) {
	dir := t.TempDir()
	sparse := filepath.Join(dir, "sparse.png")
	if f, err := os.Create(sparse); err == nil {
		f.Truncate(40 << 30)
		f.Close()
	}
	inputs := map[string]string{sparse: "image too large"}
	if _, err := os.Stat("/dev/zero"); err == nil {
		inputs["/dev/zero"] = "not a PNG, JPEG"
	}
	for in, want := range inputs {
		if out, err := run(t, "gray", in, filepath.Join(dir, "out.png")); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("gocu gray %s: %v, want %q\n%s", in, err, want, out)
		}
	}
}
