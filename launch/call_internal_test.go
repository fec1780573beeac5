package launch

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/gocu-dev/gocu"
	"github.com/gocu-dev/gocu/cuda"
	"github.com/gocu-dev/gocu/kernel"
	"github.com/gocu-dev/gocu/meta"
	"github.com/gocu-dev/gocu/nvrtc"
	"github.com/gocu-dev/gocu/sim"
)

// A kernel written by hand the way gocu gen writes one: the kernel, its
// checked twin, its module and a launcher of the generated shape. It lets
// the package test the launch path without importing generated packages
// (which import this one).

func addOffByOne(t *kernel.Thread, a, b, c []float32, n int32) {
	i := t.Index()
	if i <= n {
		c[i] = a[i] + b[i]
	}
}

var testSites = []*kernel.Site{
	{File: "broken.go", Line: 16, Col: 10, Expr: "a[i]"},
	{File: "broken.go", Line: 16, Col: 17, Expr: "b[i]"},
	{File: "broken.go", Line: 16, Col: 3, Expr: "c[i]"},
}

func addOffByOneChecked(t *kernel.Thread, a, b, c []float32, n int32) {
	i := t.Index()
	if i <= n {
		v := *kernel.At(t, a, int(i), testSites[0], kernel.Read) + *kernel.At(t, b, int(i), testSites[1], kernel.Read)
		*kernel.At(t, c, int(i), testSites[2], kernel.Write) = v
	}
}

func slice(name string, es int) meta.Param {
	return meta.Param{Name: name, GoType: "[]float32", Kind: meta.Slice, CType: "float*", Size: 8, Align: 8, ElemSize: es}
}

var testModule = &meta.Module{
	Package: "example.com/broken",
	Source:  "// not compiled by these tests\n",
	Kernels: []meta.Kernel{{
		Name: "AddOffByOne", Entry: "AddOffByOne",
		Params: []meta.Param{slice("a", 4), slice("b", 4), slice("c", 4),
			{Name: "n", GoType: "int32", Kind: meta.Scalar, CType: "int", Size: 4, Align: 4}},
		Func: addOffByOne, Checked: addOffByOneChecked,
	}},
	Sites: testSites,
}

var testProgram = NewProgram(testModule)

func launchAddOffByOne(d *gocu.Device, cfg gocu.Config, a, b, c *gocu.Buffer[float32], n int32) error {
	var l Call
	if l.Start(testProgram, 0, d, cfg) {
		m0, n0 := DeviceArg(&l, 0, a)
		m1, n1 := DeviceArg(&l, 1, b)
		m2, n2 := DeviceArg(&l, 2, c)
		return l.Run(m0, n0, m1, n1, m2, n2, n)
	}
	s0, s1, s2 := SimArg(&l, 0, a), SimArg(&l, 1, b), SimArg(&l, 2, c)
	return l.Simulate(
		func(t *kernel.Thread) { addOffByOne(t, s0, s1, s2, n) },
		func(t *kernel.Thread) { addOffByOneChecked(t, s0, s1, s2, n) },
		s0, s1, s2, n)
}

func simDev(t *testing.T) *gocu.Device {
	d, err := gocu.Open("sim")
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func filled(t *testing.T, d *gocu.Device, n int, v float32) *gocu.Buffer[float32] {
	t.Helper()
	b, err := gocu.Alloc[float32](d, n)
	if err != nil {
		t.Fatal(err)
	}
	for i := range b.Host() {
		b.Host()[i] = v + float32(i)
	}
	return b
}

// stripSeed removes the simulator's schedule seed, which a GPU error has
// no counterpart for.
func stripSeed(msg string) string {
	if i := strings.Index(msg, " [seed "); i >= 0 {
		return msg[:i]
	}
	return msg
}

// TestDebugErrorMatchesSimulator decodes the error buffer a debug build
// records for the off-by-one thread and requires the simulator's checked
// message for the same fault, word for word.
func TestDebugErrorMatchesSimulator(t *testing.T) {
	d := simDev(t)
	const n = 1000
	a, b, c := filled(t, d, n, 1), filled(t, d, n, 2), filled(t, d, n, 0)
	err := launchAddOffByOne(d, gocu.Config{Grid: gocu.Dim3{X: 4}, Block: gocu.Dim3{X: 256}, Checked: true}, a, b, c, n)
	var se *sim.Error
	if !errors.As(err, &se) || se.Kind != sim.KindOutOfRange {
		t.Fatalf("simulator: %v, want an out-of-range *sim.Error", err)
	}
	words := make([]uint64, meta.ErrorWords)
	words[meta.ErrCode] = uint64(meta.ErrIndex)
	words[meta.ErrSite] = 0 // a[i]
	words[meta.ErrValue], words[meta.ErrLength] = n, n
	words[meta.ErrValue2] = 0x7f0000001000 // the address of a, as the GPU records it
	words[meta.ErrBlockX], words[meta.ErrThreadX] = 3, 232
	words[meta.ErrCount] = 2
	got := debugError(testModule, &testModule.Kernels[0], words, func(addr uint64) int {
		if addr == 0x7f0000001000 {
			return 1
		}
		return 0
	})
	if got.Error() != stripSeed(se.Error()) {
		t.Errorf("GPU debug error\n  %s\nsimulator\n  %s", got, se)
	}
	want := "sim: kernel AddOffByOne: block (3,0,0) thread (232,0,0): index 1000 out of range [0:1000] of global memory (argument 1) at broken.go:16:10 (a[i])"
	if got.Error() != want {
		t.Errorf("message %q, want %q", got, want)
	}
	if !errors.Is(got, sim.ErrOutOfRange) {
		t.Errorf("errors.Is(%v, sim.ErrOutOfRange) is false", got)
	}
}

func TestDebugErrorKinds(t *testing.T) {
	km := &testModule.Kernels[0]
	dec := func(code meta.ErrorCode, v, v2, n uint64) error {
		w := make([]uint64, meta.ErrorWords)
		w[meta.ErrCode], w[meta.ErrSite], w[meta.ErrValue], w[meta.ErrValue2], w[meta.ErrLength] = uint64(code), 1, v, v2, n
		w[meta.ErrBlockX+1], w[meta.ErrThreadX+2] = 5, 1
		return debugError(testModule, km, w, nil)
	}
	neg := func(x int64) uint64 { return uint64(x) }
	cases := []struct {
		err  error
		kind sim.Kind
		want string
	}{
		{dec(meta.ErrIndex, neg(-1), 0, 7), sim.KindOutOfRange, "block (0,5,0) thread (0,0,1): index -1 out of range [0:7] at broken.go:16:17 (b[i])"},
		{dec(meta.ErrSliceBounds, 2, 9, 8), sim.KindOutOfRange, "index 9 out of range [0:8] (slice bounds out of range [:9] with capacity 8)"},
		{dec(meta.ErrSliceBounds, 5, 3, 8), sim.KindOutOfRange, "(slice bounds out of range [5:3])"},
		{dec(meta.ErrSliceBounds, neg(-2), 3, 8), sim.KindOutOfRange, "(slice bounds out of range [-2:])"},
		{dec(meta.ErrDivide, 0, 0, 0), sim.KindPanic, "panic: runtime error: integer divide by zero at broken.go:16:17"},
		{dec(meta.ErrShift, neg(-3), 0, 0), sim.KindPanic, "panic: runtime error: negative shift amount"},
		{dec(meta.ErrReinterpret, 7, 0, 4), sim.KindMisaligned, "misaligned reinterpretation: kernel.Reinterpret: 7 bytes are not a whole number of 4-byte elements"},
		{dec(meta.ErrAlign, 0, 0x1004, 16), sim.KindMisaligned, "data at 0x1004 is not 16-byte aligned"},
		{dec(99, 0, 0, 0), sim.KindPanic, "unknown debug-mode error code 99"},
	}
	for _, c := range cases {
		var e *sim.Error
		if !errors.As(c.err, &e) || e.Kind != c.kind || e.Kernel != "AddOffByOne" || !strings.Contains(c.err.Error(), c.want) {
			t.Errorf("%v: want kind %v with %q", c.err, c.kind, c.want)
		}
	}
	var re runtime.Error
	if !errors.As(cases[4].err, &re) || !errors.As(cases[5].err, &re) {
		t.Errorf("division and shift errors must unwrap to the Go runtime's errors: %v, %v", cases[4].err, cases[5].err)
	}
}

func TestArgAt(t *testing.T) {
	km := &testModule.Kernels[0]
	// A zero cuda.Memory has address 0: a at [0, 40), b empty, c at [0, 8).
	args := []any{&cuda.Memory{}, int64(10), &cuda.Memory{}, int64(0), &cuda.Memory{}, int64(2), int32(5)}
	for _, c := range []struct {
		addr uint64
		want int
	}{{0, 1}, {36, 1}, {40, 0}} {
		if got := argAt(km, args, c.addr); got != c.want {
			t.Errorf("argAt(%d) = %d, want %d", c.addr, got, c.want)
		}
	}
	args[1] = int64(1)
	if got := argAt(km, args, 4); got != 3 {
		t.Errorf("argAt past a: %d, want argument 3", got)
	}
}

func TestCheckLaunch(t *testing.T) {
	km := meta.Kernel{Name: "K", MaxThreads: 256}
	dyn := meta.Kernel{Name: "D", DynamicShared: true}
	g := func(x, bx, by int32) gocu.Config {
		return gocu.Config{Grid: gocu.Dim3{X: x}, Block: gocu.Dim3{X: bx, Y: by}}
	}
	cases := []struct {
		k    meta.Kernel
		cfg  gocu.Config
		kind gocu.Kind
		want string // "" for a valid launch
	}{
		{km, g(4, 256, 1), gocu.CUDA, ""},
		{km, gocu.Auto(1000), gocu.Sim, ""},
		{km, gocu.Config{}, gocu.CUDA, "N = 0"},
		{km, g(-1, 32, 1), gocu.Sim, "negative"},
		{km, g(0, 32, 1), gocu.CUDA, "grid (0,0,0) is empty"},
		{km, g(1, 0, 1), gocu.Sim, "block (0,1,0) is empty"},
		{km, g(1, 32, 16), gocu.CUDA, "512 threads is more than the 256 of the kernel's //gocu:launch_bounds"},
		{km, gocu.Config{Grid: gocu.Dim3{X: 1}, Block: gocu.Dim3{X: 32}, Shared: -4}, gocu.CUDA, "negative dynamic shared memory"},
		{dyn, g(1, 32, 1), gocu.Sim, "uses kernel.DynamicShared, but Config.Shared is 0"},
		{km, gocu.Config{Grid: gocu.Dim3{X: 1}, Block: gocu.Dim3{X: 32}, Checked: true}, gocu.CUDA, "a GPU cannot do"},
		{km, gocu.Config{Grid: gocu.Dim3{X: 1}, Block: gocu.Dim3{X: 32}, Checked: true}, gocu.Sim, ""},
	}
	for _, c := range cases {
		cfg := c.cfg
		err := checkLaunch(&c.k, &cfg, c.kind)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%v on %v: %v", c.cfg, c.kind, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%v on %v: %v, want an error with %q", c.cfg, c.kind, err, c.want)
		case c.want != "" && !c.cfg.Checked && !errors.Is(err, cuda.ErrInvalidConfig):
			t.Errorf("%v: errors.Is(%v, cuda.ErrInvalidConfig) is false", c.cfg, err)
		}
	}
}

// TestLaunchErrorsSim provokes every argument error of a launcher.
func TestLaunchErrorsSim(t *testing.T) {
	d := simDev(t)
	a, b, c := filled(t, d, 8, 0), filled(t, d, 8, 0), filled(t, d, 8, 0)
	cfg := gocu.Grid1D(7, 32)
	other := gocu.MustOpen("cpu") // another device, as a second GPU would be
	x, err := gocu.Alloc[float32](other, 8)
	if err != nil {
		t.Fatal(err)
	}
	freed := filled(t, d, 8, 0)
	freed.Free()
	for _, c := range []struct {
		err  error
		want string
	}{
		{launchAddOffByOne(nil, cfg, a, b, c, 7), "no device"},
		{launchAddOffByOne(new(gocu.Device), cfg, a, b, c, 7), "no device"},
		{launchAddOffByOne(d, cfg, a, nil, c, 7), "argument 2 (b): nil *gocu.Buffer"},
		{launchAddOffByOne(d, cfg, a, b, freed, 7), "argument 3 (c): buffer used after Free"},
		{launchAddOffByOne(d, cfg, x, b, c, 7), "argument 1 (a): Buffer[float32](8) on cpu is on another device than the launch"},
		{launchAddOffByOne(d, gocu.Config{}, a, b, c, 7), "N = 0"},
	} {
		if c.err == nil || !strings.Contains(c.err.Error(), c.want) {
			t.Errorf("got %v, want an error with %q", c.err, c.want)
		}
	}
	if err := launchAddOffByOne(d, cfg, a, b, freed, 7); !errors.Is(err, gocu.ErrFreed) {
		t.Errorf("freed buffer: errors.Is(%v, gocu.ErrFreed) is false", err)
	}
	// In, Out and InOut are given memory for the launch and copied back;
	// after a failed launch nothing is copied back.
	ha, hb := []float32{1, 2, 3}, []float32{10, 20, 30}
	hc := []float32{-1, -1, -1}
	if err := launchAddOffByOne(d, gocu.Auto(2), gocu.In(ha), gocu.In(hb), gocu.Out(hc), 2); err != nil {
		t.Fatal(err)
	}
	if hc[0] != 11 || hc[1] != 22 || hc[2] != 33 {
		t.Errorf("Out after i <= 2 = %v, want [11 22 33]", hc)
	}
	hc = []float32{-1, -1, -1}
	err = launchAddOffByOne(d, gocu.Auto(3), gocu.In(ha), gocu.In(hb), gocu.InOut(hc), 3)
	if !errors.Is(err, sim.ErrOutOfRange) || hc[0] != -1 {
		t.Errorf("failed launch: %v, InOut %v: want the out-of-range error and the slice untouched", err, hc)
	}
}

// TestGoPositions maps lines of a generated source back to Go.
func TestGoPositions(t *testing.T) {
	src, err := os.ReadFile(filepath.Join("gen", "testdata", "kernels", "gray", "zz_gocu_gray.cu"))
	if err != nil {
		t.Skip("no golden CUDA source:", err)
	}
	lines := strings.Split(string(src), "\n")
	sites := make([]*kernel.Site, 14)
	for i := range sites {
		sites[i] = &kernel.Site{File: "gray.go", Line: int32(100 + i), Col: 3, Expr: "e" + string(rune('a'+i))}
	}
	line := 0
	for i, l := range lines {
		if strings.Contains(l, "GOCU_AT(gray, i, 3) =") {
			line = i + 1
		}
	}
	if line == 0 {
		t.Fatal("the golden source has no GOCU_AT(gray, i, 3)")
	}
	got := goPositions(lines, line, sites)
	want := "gray.go:103:3 (ed), gray.go:100:3 (ea), gray.go:101:3 (eb), gray.go:102:3 (ec) in gray.RGBToGray (gray.go:10)"
	if got != want {
		t.Errorf("goPositions = %q, want %q", got, want)
	}
	if got := siteIDs("x = gocu_reinterpret<unsigned int, unsigned char>(rgb, 8) + gocu_div<int>(a, (b), 12);"); len(got) != 2 || got[0] != 12 || got[1] != 8 {
		t.Errorf("siteIDs = %v, want [12 8] (in the order of siteCalls)", got)
	}
	ce := &nvrtc.CompileError{Program: "zz_gocu_gray.cu", Arch: "sm_90", Diagnostics: []nvrtc.Diagnostic{
		{File: "zz_gocu_gray.cu", Line: line, Column: 5, Severity: "error", Message: "something is wrong", Source: lines[line-1]},
	}}
	e := (&Program{mod: &meta.Module{Package: "example.com/gray", Source: string(src), Sites: sites}}).buildError(ce)
	msg := e.Error()
	for _, s := range []string{"gocu gen wrote for package example.com/gray does not compile for sm_90", "bug of gocu gen",
		"zz_gocu_gray.cu:", "something is wrong", "Go: gray.go:103:3 (ed)", "in gray.RGBToGray (gray.go:10)"} {
		if !strings.Contains(msg, s) {
			t.Errorf("compile error lacks %q:\n%s", s, msg)
		}
	}
	var got2 *nvrtc.CompileError
	if !errors.As(e, &got2) || got2 != ce {
		t.Errorf("errors.As does not find the *nvrtc.CompileError in %T", e)
	}
}

func TestRuntimeErrors(t *testing.T) {
	if divideError == nil || !strings.Contains(divideError.Error(), "integer divide by zero") {
		t.Errorf("divideError = %v", divideError)
	}
	if shiftError == nil || !strings.Contains(shiftError.Error(), "negative shift amount") {
		t.Errorf("shiftError = %v", shiftError)
	}
}

// TestSimulatorHasNoDevicePointer: GPU-only operations on simulator memory
// say why they cannot work.
func TestSimulatorHasNoDevicePointer(t *testing.T) {
	b := filled(t, simDev(t), 4, 0)
	if _, err := b.DevicePointer(); err == nil || !strings.Contains(err.Error(), "has no device memory") {
		t.Errorf("DevicePointer on the simulator: %v", err)
	}
	if b.Memory() != nil {
		t.Error("Memory on the simulator is not nil")
	}
}

// A kernel with warpgroup MMAs launched on a GPU other than sm_90a is
// refused before the build with an error that says why and what to do
// (the launch itself is tested on the GPU, in internal/lecture).
func TestArchError(t *testing.T) {
	err := archError("GemmBF16", "NVIDIA A100-SXM4-80GB", 8, 0)
	if !errors.Is(err, ErrNeedsSM90a) {
		t.Errorf("%v does not wrap ErrNeedsSM90a", err)
	}
	for _, s := range []string{"launch of GemmBF16", "warpgroup MMA", "sm_90a", "compute capability 9.0", "NVIDIA A100-SXM4-80GB is 8.0", "simulator", "kernel.MMABF16"} {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("%q lacks %q", err, s)
		}
	}
}
