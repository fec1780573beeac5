package bench

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"errors"
	"image/png"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gocu-dev/gocu/array"
)

func TestRegistry(t *testing.T) {
	var cudaNames []string
	for _, w := range Workloads(CUDA) {
		cudaNames = append(cudaNames, w.Name)
	}
	want := []string{"copy", "sgemm_fp32", "sgemm_tf32", "launch", "graph", "h2d_pageable", "h2d_pinned", "d2h_pinned",
		"nvrtc_cold", "nvrtc_warm", "gray", "matmul_naive", "matmul_tiled"}
	for _, n := range want {
		if !slices.Contains(cudaNames, n) {
			t.Errorf("no CUDA workload %q (have %v)", n, cudaNames)
		}
	}
	var runtime []string
	for _, w := range Workloads(CUDA) {
		if slices.Contains(w.Suites, "runtime") {
			runtime = append(runtime, w.Name)
		}
	}
	slices.Sort(runtime)
	if want := []string{"copy", "d2h_pinned", "graph", "h2d_pageable", "h2d_pinned", "launch", "nvrtc_cold", "nvrtc_warm"}; !slices.Equal(runtime, want) {
		t.Errorf("runtime suite %v, want %v", runtime, want)
	}
	for _, d := range []Device{Sim, CPU} {
		var ceil []Ceiling
		for _, w := range Workloads(d) {
			if w.Ceiling != NoCeiling {
				ceil = append(ceil, w.Ceiling)
			}
		}
		if !slices.Contains(ceil, MemoryRoof) || !slices.Contains(ceil, FP32Roof) {
			t.Errorf("%v measures ceilings %v, want memory and FP32", d, ceil)
		}
	}
	for _, w := range Workloads(0) {
		if w.Doc == "" || w.Kind == 0 || w.Devices == 0 || w.Setup == nil {
			t.Errorf("workload %q is incomplete: %+v", w.Name, w)
		}
		if w.Kind == Latency && w.Clock != Wall {
			t.Errorf("latency workload %q is timed with events, not the wall clock", w.Name)
		}
	}
	// The simulator keeps its workloads: the ceilings and the lecture's Go
	// kernels, nothing of the GPU's or the arrays'.
	if got, want := names(Workloads(Sim)), []string{"copy", "sgemm_fp32", "gray", "matmul_tiled_64", "matmul_tiled_256"}; !slices.Equal(got, want) {
		t.Errorf("simulator workloads %v, want %v", got, want)
	}
}

// The workloads that make gocu bench match baseline.py: the Go kernels on
// the GPU and the arrays on the GPU and the CPU, with their peers on the GPU.
func TestRegistryGoAndArrays(t *testing.T) {
	wantPeers := map[string][]string{
		"gray_go":                {"gray_4096_cupy_rawkernel_ms", "gray_4096_torch_ms"},
		"gray_fast":              {"gray_4096_cupy_rawkernel_ms", "gray_4096_torch_ms"},
		"matmul_naive_go":        {"sgemm_4096_naive_lecture_ms"},
		"matmul_tiled_go":        {"sgemm_4096_tiled16_lecture_ms"},
		"sgemm_go":               {"sgemm_4096_cublas_fp32_ms"},
		"add":                    {"vadd_64M_torch_ms"},
		"sum":                    {"sum_64M_torch_ms", "sum_64M_cupy_ms"},
		"chain_fused":            {"chain3_64M_torch_compile_ms", "chain3_64M_cupy_fuse_ms", "chain3_64M_torch_eager_ms"},
		"chain_unfused":          {"chain3_64M_torch_eager_ms"},
		"matmul_array_fp32":      {"sgemm_4096_cublas_fp32_ms"},
		"matmul_array_tf32":      {"sgemm_4096_cublas_tf32_ms"},
		"array_op_overhead":      {"torch_launch_us_per_tiny_op"},
		"array_op_overhead_into": {"torch_launch_us_per_tiny_op"},
	}
	f, err := os.Open("testdata/baseline.json")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	base, err := ReadBaseline(f)
	if err != nil {
		t.Fatal(err)
	}
	for name, keys := range wantPeers {
		w := find(Workloads(CUDA), name)
		if w == nil {
			t.Errorf("no CUDA workload %q", name)
			continue
		}
		var got []string
		for _, p := range w.Peers {
			got = append(got, p.Key)
			if _, ok := base.Values[p.Key]; !ok {
				t.Errorf("%s: peer %q not in baseline.json", name, p.Key)
			}
		}
		if !slices.Equal(got, keys) {
			t.Errorf("%s: peers %v, want %v", name, got, keys)
		}
		if w.Kind == Latency {
			if w.Clock != Wall || w.Unit != "us" || w.Peers[0].Metric != MicrosPerOp {
				t.Errorf("%s: a latency in us per op on the wall clock: %+v", name, w)
			}
		} else if w.Clock != Events || w.Peers[0].Metric != Millis {
			t.Errorf("%s: timed with CUDA events against the peers' ms: %+v", name, w)
		}
	}
	for _, name := range []string{"matmul_array_tf32", "sgemm_tf32"} {
		if w := find(Workloads(CUDA), name); w.Roof != RoofTF32 {
			t.Errorf("%s is not under the TF32 roof", name)
		}
	}
	// On the CPU: the array workloads, without the GPU's peers and without
	// TF32 (the CPU computes FP32).
	for _, name := range []string{"add", "sum", "chain_fused", "chain_unfused", "matmul_array_fp32", "array_op_overhead", "array_op_overhead_into"} {
		w := find(Workloads(CPU), name)
		if w == nil {
			t.Errorf("no CPU workload %q", name)
			continue
		}
		if len(w.Peers) != 0 {
			t.Errorf("CPU workload %s compared with the GPU's peers %v", name, w.Peers)
		}
		if !slices.Contains(w.Suites, "arrays") {
			t.Errorf("CPU workload %s is not in the arrays suite", name)
		}
	}
	if find(Workloads(CPU), "matmul_array_tf32") != nil || find(Workloads(CPU), "gray_go") != nil {
		t.Error("a GPU-only workload is registered for the CPU")
	}
	for _, name := range []string{"gray_go", "gray_fast", "sgemm_go", "add", "sum"} {
		if find(Workloads(Sim), name) != nil {
			t.Errorf("%s is registered for the simulator", name)
		}
	}
}

// Results are listed by group (ceilings, runtime, lecture, Go kernels,
// arrays, then the others), in registration order within a group, each
// group under a heading.
func TestGroups(t *testing.T) {
	rs := []Result{{Name: "add", Group: "arrays"}, {Name: "x", Group: "test"}, {Name: "gray_go", Group: "go"},
		{Name: "launch", Group: "runtime"}, {Name: "sum", Group: "arrays"}, {Name: "copy", Group: "ceilings"}, {Name: "gray", Group: "lecture"}}
	sortGroups(rs)
	var got []string
	for _, x := range rs {
		got = append(got, x.Name)
	}
	if want := []string{"copy", "launch", "gray", "gray_go", "add", "sum", "x"}; !slices.Equal(got, want) {
		t.Errorf("order %v, want %v", got, want)
	}
	for i := range rs {
		rs[i].Seconds, rs[i].Reps = 1e-3, 1
	}
	var tb strings.Builder
	(&Report{Results: rs}).WriteTable(&tb)
	var lines []string
	for _, l := range strings.Split(tb.String(), "\n") {
		if f := strings.Fields(l); len(f) > 0 && !strings.HasPrefix(l, "-") {
			lines = append(lines, strings.TrimRight(l, " "))
		}
	}
	heads := []string{"ceilings (measured first)", "runtime", "lecture kernels", "kernels written in Go", "arrays (package array)", "test"}
	h := 0
	for _, l := range lines {
		if h < len(heads) && l == heads[h] {
			h++
		}
	}
	if h != len(heads) || !strings.Contains(tb.String(), "\n  sum ") {
		t.Errorf("headings %d of %v in order, workloads indented:\n%s", h, heads, tb.String())
	}
	// A report without groups (an older JSON) has no headings.
	var plain strings.Builder
	sampleGPUReport().WriteTable(&plain)
	if strings.Contains(plain.String(), "ceilings (measured first)") || !strings.Contains(plain.String(), "\ngray ") {
		t.Errorf("ungrouped table:\n%s", plain.String())
	}
}

// The array workloads on the CPU backend at small sizes: every one runs,
// passes its check and reports a plausible figure.
func TestCPUArrays(t *testing.T) {
	rep, err := Run(Options{Device: CPU, Suite: "arrays", Small: true, Reps: 2, Seed: 3})
	var tb strings.Builder
	if rep != nil {
		rep.WriteTable(&tb)
	}
	if err != nil {
		t.Fatalf("%v\n%s", err, tb.String())
	}
	want := map[string]float64{ // bytes of one repetition at the small size
		"add": 12 << 18, "sum": 4 << 18, "chain_fused": 8 << 18, "chain_unfused": 8 << 18, "matmul_array_fp32": 12 * 128 * 128,
	}
	for name, bytes := range want {
		x := rep.Result(name)
		if x == nil {
			t.Fatalf("no result for %s:\n%s", name, tb.String())
		}
		if x.Error != "" || x.Skipped != "" || x.Reps != 2 || x.Seconds <= 0 || x.Bytes != bytes || x.GBps <= 0 || x.Group != "arrays" {
			t.Errorf("%s: %+v", name, x)
		}
		if x.Percent <= 0 || x.Roof == "" {
			t.Errorf("%s: no share of a ceiling: %+v", name, x)
		}
	}
	for _, name := range []string{"array_op_overhead", "array_op_overhead_into"} {
		if x := rep.Result(name); x == nil || x.Error != "" || x.Ops != overheadOps || x.Unit != "us" || x.PerOp <= 0 || x.PerOp > 1000 {
			t.Errorf("%s: %+v", name, x)
		}
	}
	for _, s := range []string{"arrays (package array)", "  chain_unfused", "us"} {
		if !strings.Contains(tb.String(), s) {
			t.Errorf("the table lacks %q:\n%s", s, tb.String())
		}
	}
	checkPlots(t, rep, []string{"add", "sum", "chain_fused", "matmul_array_fp32", "array_op_overhead"})
}

// Every peer key of a workload is a key baseline.py, baseline_lowp.py,
// train_mlp.py, train_gpt.py or ../shared/anchors/baseline_numpy.py writes (the samples
// in testdata have all of them but the error entries; baseline_lowp.json
// and baseline_numpy_linalg.json hold the reference figures of the design
// brief and the issue).
func TestPeerKeysExist(t *testing.T) {
	b := &Baseline{Values: map[string]float64{}, Text: map[string]string{}}
	names, _ := filepath.Glob("testdata/baseline*.json")
	for _, name := range append(names, "testdata/train_mlp.json", "testdata/train_gpt.json") {
		f, err := os.Open(name)
		if err != nil {
			t.Fatal(err)
		}
		bb, err := ReadBaseline(f)
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		for k, v := range bb.Values {
			b.Values[k] = v
		}
		for k, v := range bb.Text {
			b.Text[k] = v
		}
	}
	n := 0
	for _, w := range Workloads(0) {
		for _, p := range w.Peers {
			n++
			if _, ok := b.Values[p.Key]; !ok {
				t.Errorf("workload %s: peer key %q is not in baseline.json", w.Name, p.Key)
			}
			if p.Name == "" || p.Metric == 0 {
				t.Errorf("workload %s: incomplete peer %+v", w.Name, p)
			}
		}
	}
	if n < 12 {
		t.Errorf("only %d peer figures mapped", n)
	}
	if b.Text["device"] == "" {
		t.Error("the device line of baseline.json was not kept")
	}
}

func TestRegisterRefusesMistakes(t *testing.T) {
	setup := func(*Env) (*Case, error) { return nil, nil }
	for _, w := range []Workload{
		{Kind: Latency, Devices: CPU, Setup: setup},                  // no name
		{Name: "x", Kind: Latency, Devices: CPU},                     // no setup
		{Name: "x", Kind: Latency, Setup: setup},                     // no device
		{Name: "copy", Kind: Bandwidth, Devices: CPU, Setup: setup},  // registered for the CPU already
		{Name: "launch", Kind: Latency, Devices: CUDA, Setup: setup}, // registered for CUDA already
		{Name: "x", Devices: CPU, Setup: setup},                      // no kind
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("Register(%+v) did not panic", w)
				}
			}()
			Register(w)
		}()
	}
}

func TestSelect(t *testing.T) {
	ws, err := selectWorkloads(CUDA, []string{"gray", " launch"}, "")
	if err != nil || len(ws) != 2 || ws[0].Name != "launch" || ws[1].Name != "gray" {
		t.Errorf("only gray,launch: %v, %v", names(ws), err)
	}
	ws, err = selectWorkloads(CUDA, nil, "runtime")
	if err != nil || len(ws) != 8 {
		t.Errorf("suite runtime: %v, %v", names(ws), err)
	}
	if _, err := selectWorkloads(CUDA, []string{"grey"}, ""); err == nil || !strings.Contains(err.Error(), "gray") {
		t.Errorf("an unknown workload: %v (want the list of known ones)", err)
	}
	if _, err := selectWorkloads(Sim, nil, "nosuch"); err == nil || !strings.Contains(err.Error(), "lecture") {
		t.Errorf("an unknown suite: %v (want the list of suites)", err)
	}
	if _, err := selectWorkloads(Sim, []string{"copy"}, "lecture"); err == nil {
		t.Error("a selection that leaves nothing did not fail")
	}
	if _, err := ParseDevice("tpu"); err == nil {
		t.Error("ParseDevice(tpu) succeeded")
	}
	for s, d := range map[string]Device{"cuda": CUDA, "GPU": CUDA, "sim": Sim, " cpu": CPU} {
		if got, err := ParseDevice(s); got != d || err != nil {
			t.Errorf("ParseDevice(%q) = %v, %v", s, got, err)
		}
	}
	if (CUDA | Sim).String() != "cuda|sim" {
		t.Errorf("%q", (CUDA | Sim).String())
	}
}

func names(ws []*Workload) []string {
	var s []string
	for _, w := range ws {
		s = append(s, w.Name)
	}
	return s
}

// The simulator suite at small sizes: runs, checks, reports and draws.
func TestSimSuite(t *testing.T) {
	rep, err := Run(Options{Device: Sim, Small: true, Reps: 3, Seed: 42})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Device.Kind != "sim" || rep.Schema != Schema || !rep.Small {
		t.Errorf("report header %+v", rep)
	}
	if rep.Ceilings.MemoryGBps <= 0 || rep.Ceilings.FP32TFLOPs <= 0 || !strings.Contains(rep.Ceilings.Source, "copy") {
		t.Errorf("ceilings %+v", rep.Ceilings)
	}
	for _, n := range []string{"copy", "sgemm_fp32", "gray", "matmul_tiled_64", "matmul_tiled_256"} {
		x := rep.Result(n)
		if x == nil {
			t.Fatalf("no result for %s", n)
		}
		if x.Error != "" || x.Reps != 3 || x.Seconds <= 0 || x.Min > x.Seconds || x.Max < x.Seconds || x.Clock != "wall" {
			t.Errorf("%s: %+v", n, x)
		}
	}
	g := rep.Result("gray")
	if g.Ops != 256*256 || g.Unit != "ns" || math.Abs(g.PerOp-g.Seconds/float64(g.Ops)*1e9) > 1e-9 ||
		g.Intensity != 1.25 || math.Abs(g.GBps-4*256*256/g.Seconds/1e9) > 1e-9 || g.Percent <= 0 || g.Percent > 100 {
		t.Errorf("gray: %+v", g)
	}
	if c := rep.Result("copy"); c.Ceiling != "memory" || math.Abs(c.Percent-100) > 1e-9 {
		t.Errorf("the copy is the memory ceiling: %+v", c)
	}

	var buf bytes.Buffer
	if err := rep.WriteJSON(&buf); err != nil {
		t.Fatal(err)
	}
	back, err := ReadReport(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	if !back.Date.Equal(rep.Date) {
		t.Errorf("date %v read back as %v", rep.Date, back.Date)
	}
	back.Date = rep.Date
	if !reflect.DeepEqual(back, rep) {
		t.Errorf("JSON round trip changed the report:\n%+v\n%+v", back, rep)
	}
	var raw map[string]any
	json.Unmarshal(buf.Bytes(), &raw)
	for _, k := range []string{"schema", "date", "device", "host", "ceilings", "results"} {
		if _, ok := raw[k]; !ok {
			t.Errorf("the JSON lacks %q", k)
		}
	}

	var tb strings.Builder
	if err := rep.WriteTable(&tb); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"gocu bench on sim", "measured ceilings", "matmul_tiled_256", "ns", "GFLOP/s", "% ceiling"} {
		if !strings.Contains(tb.String(), want) {
			t.Errorf("the table lacks %q:\n%s", want, tb.String())
		}
	}
	checkPlots(t, rep, []string{"gray", "matmul_tiled_64", "sgemm_fp32"})
}

// checkPlots draws the roofline as PNG and SVG and decodes both.
func checkPlots(t *testing.T, rep *Report, labels []string) {
	t.Helper()
	dir := t.TempDir()
	pngPath, svgPath := filepath.Join(dir, "roof.png"), filepath.Join(dir, "roof.svg")
	if err := rep.PlotFile(pngPath); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(pngPath)
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(f)
	f.Close()
	if err != nil {
		t.Fatalf("the PNG does not decode: %v", err)
	}
	if b := img.Bounds(); b.Dx() < 600 || b.Dy() < 400 {
		t.Errorf("PNG of %v", b)
	}
	// Not blank: some pixels are dark (lines, text) and most are white.
	dark := 0
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y += 2 {
		for x := b.Min.X; x < b.Max.X; x += 2 {
			r, g, bl, _ := img.At(x, y).RGBA()
			if r+g+bl < 3*0x4000 {
				dark++
			}
		}
	}
	if dark < 500 {
		t.Errorf("the PNG has %d dark pixels: blank?", dark)
	}
	if err := rep.PlotFile(svgPath); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(svgPath)
	if err != nil {
		t.Fatal(err)
	}
	dec := xml.NewDecoder(bytes.NewReader(data))
	var text strings.Builder
	for {
		tok, err := dec.Token()
		if err != nil {
			if err.Error() != "EOF" {
				t.Fatalf("the SVG is not XML: %v", err)
			}
			break
		}
		if cd, ok := tok.(xml.CharData); ok {
			text.Write(cd)
		}
	}
	for _, l := range append(labels, "memory", "FP32", "arithmetic intensity") {
		if !strings.Contains(text.String(), l) {
			t.Errorf("the SVG has no text %q", l)
		}
	}
	if err := rep.PlotFile(filepath.Join(dir, "roof.gif")); err == nil {
		t.Error("a .gif plot was accepted")
	}
	if err := rep.Plot(&bytes.Buffer{}, "bmp"); err == nil {
		t.Error("format bmp was accepted")
	}
}

// sampleGPUReport is an H100 report with the reference numbers of
// DESIGN.md, derived as Run derives them.
func sampleGPUReport() *Report {
	r := &Report{Schema: Schema, Date: time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC),
		Device:   DeviceInfo{Kind: "cuda", Name: "NVIDIA H100 80GB HBM3", Arch: "sm_90"},
		Ceilings: Ceilings{MemoryGBps: 2983, FP32TFLOPs: 51.3, TF32TFLOPs: 374, Source: "measured by copy, sgemm_fp32, sgemm_tf32"}}
	n := 4096.0
	for _, x := range []Result{
		{Name: "copy", Seconds: 8 * float64(1<<28) / 2983e9, Bytes: 8 * float64(1<<28)},
		{Name: "sgemm_fp32", Seconds: 2 * n * n * n / 51.3e12, Bytes: 12 * n * n, Flops: 2 * n * n * n},
		{Name: "sgemm_tf32", Seconds: 2 * n * n * n / 374e12, Bytes: 12 * n * n, Flops: 2 * n * n * n},
		{Name: "launch", Seconds: 10000 * 2.79e-6, Ops: 10000},
		{Name: "graph", Seconds: 10000 * 0.73e-6, Ops: 10000},
		{Name: "h2d_pageable", Seconds: 4 * float64(1<<26) / 10.8e9, Bytes: 4 * float64(1<<26)},
		{Name: "h2d_pinned", Seconds: 4 * float64(1<<26) / 55.3e9, Bytes: 4 * float64(1<<26)},
		{Name: "d2h_pinned", Seconds: 4 * float64(1<<26) / 60e9, Bytes: 4 * float64(1<<26)},
		{Name: "nvrtc_cold", Seconds: 0.025, Ops: 1},
		{Name: "nvrtc_warm", Seconds: 0.0002, Ops: 1},
		{Name: "gray", Seconds: 0.0585e-3, Bytes: 4 * n * n, Flops: 5 * n * n},
		{Name: "matmul_naive", Seconds: 2 * n * n * n / 5.35e12, Bytes: 12 * n * n, Flops: 2 * n * n * n},
		{Name: "matmul_tiled", Seconds: 2 * n * n * n / 8.15e12, Bytes: 12 * n * n, Flops: 2 * n * n * n},
		{Name: "gray_go", Seconds: 0.06e-3, Bytes: 4 * n * n, Flops: 5 * n * n},
		{Name: "gray_fast", Seconds: 4 * n * n / 2800e9, Bytes: 4 * n * n, Flops: 5 * n * n},
		{Name: "matmul_naive_go", Seconds: 2 * n * n * n / 5.3e12, Bytes: 12 * n * n, Flops: 2 * n * n * n},
		{Name: "matmul_tiled_go", Seconds: 2 * n * n * n / 8.0e12, Bytes: 12 * n * n, Flops: 2 * n * n * n},
		{Name: "sgemm_go", Seconds: 2 * n * n * n / 45.2e12, Bytes: 12 * n * n, Flops: 2 * n * n * n},
		{Name: "add", Seconds: 0.275e-3, Bytes: 12 << 26, Flops: 1 << 26},
		{Name: "sum", Seconds: 0.105e-3, Bytes: 4 << 26, Flops: 1 << 26},
		{Name: "chain_fused", Seconds: 0.19e-3, Bytes: 8 << 26, Flops: 3 << 26},
		{Name: "chain_unfused", Seconds: 0.75e-3, Bytes: 8 << 26, Flops: 3 << 26},
		{Name: "matmul_array_fp32", Seconds: 2 * n * n * n / 51e12, Bytes: 12 * n * n, Flops: 2 * n * n * n},
		{Name: "matmul_array_tf32", Seconds: 2 * n * n * n / 370e12, Bytes: 12 * n * n, Flops: 2 * n * n * n},
		{Name: "array_op_overhead", Seconds: 10000 * 4.1e-6, Ops: 10000},
	} {
		x.Device, x.Reps = "cuda", 20
		r.derive(&x, find(Workloads(CUDA), x.Name))
		r.Results = append(r.Results, x)
	}
	return r
}

func TestDerive(t *testing.T) {
	r := sampleGPUReport()
	near := func(a, b float64) bool { return math.Abs(a-b) <= 1e-6*math.Abs(b) }
	for _, c := range []struct {
		name, roof string
		pct        float64
	}{
		{"copy", "memory", 100},
		{"gray", "memory", 100 * 4 * 4096 * 4096 / 0.0585e-3 / 1e9 / 2983},
		{"sgemm_fp32", "fp32", 100},
		{"sgemm_tf32", "tf32", 100},
		{"matmul_naive", "fp32", 100 * 5.35 / 51.3},
		{"h2d_pinned", "", 0},
		{"launch", "", 0},
	} {
		x := r.Result(c.name)
		if x.Roof != c.roof || !near(x.Percent, c.pct) && c.pct != 0 || c.pct == 0 && x.Percent != 0 {
			t.Errorf("%s: roof %q %.4g%%, want %q %.4g%%", c.name, x.Roof, x.Percent, c.roof, c.pct)
		}
	}
	if g := r.Result("gray"); !near(g.Intensity, 1.25) || !near(g.GBps, 1147.0) && math.Abs(g.GBps-1147) > 1 {
		t.Errorf("gray: %+v", g)
	}
	if l := r.Result("launch"); l.Unit != "us" || !near(l.PerOp, 2.79) {
		t.Errorf("launch: %+v", l)
	}
	if c := r.Result("nvrtc_cold"); c.Unit != "ms" || !near(c.PerOp, 25) {
		t.Errorf("nvrtc_cold: %+v", c)
	}
	// Without a measured FP32 rate the memory roof is the only one.
	r2 := &Report{Ceilings: Ceilings{MemoryGBps: 1000}}
	x := Result{Seconds: 1, Bytes: 1e9, Flops: 1e12} // 1 TFLOP/s at 1000 FLOP/B: the roof is 1000 TFLOP/s
	r2.derive(&x, &Workload{})
	if x.Roof != "memory" || !near(x.Percent, 0.1) {
		t.Errorf("no FP32 ceiling: %+v", x)
	}
	y := Result{Seconds: 1, Bytes: 1e12, Flops: 1e11} // 1000 GB/s at 0.1 FLOP/B: on the roof
	r2.derive(&y, &Workload{})
	if y.Roof != "memory" || !near(y.Percent, 100) {
		t.Errorf("memory-bound: %+v", y)
	}
}

func TestCompareBaseline(t *testing.T) {
	r := sampleGPUReport()
	if err := r.Compare("testdata/baseline.json"); err != nil {
		t.Fatal(err)
	}
	want := map[string]map[string]float64{
		"gray":              {"CuPy RawKernel": 1, "torch": 0.353 / 0.0585},
		"launch":            {"CuPy RawKernel": 3.95 / 2.79, "torch": 5.96 / 2.79},
		"graph":             {"torch CUDA graph": 1 / 0.73},
		"copy":              {"torch": 1},
		"h2d_pageable":      {"torch": 1},
		"d2h_pinned":        {"torch": 60 / 55.3},
		"sgemm_fp32":        {"torch": 2.679e-3 / (2 * 4096 * 4096 * 4096 / 51.3e12)},
		"matmul_tiled":      {"CuPy RawKernel": 16.86e-3 / (2 * 4096 * 4096 * 4096 / 8.15e12)},
		"nvrtc_cold":        {"CuPy": 31.0 / 25},
		"nvrtc_warm":        {},
		"gray_fast":         {"CuPy RawKernel": 0.0585e-3 / (4 * 4096 * 4096 / 2800e9), "torch": 0.353e-3 / (4 * 4096 * 4096 / 2800e9)},
		"sgemm_go":          {"torch cuBLAS": 2.679e-3 / (2 * 4096 * 4096 * 4096 / 45.2e12)},
		"add":               {"torch": 0.271 / 0.275},
		"sum":               {"torch": 0.101 / 0.105, "CuPy": 0.113 / 0.105},
		"chain_fused":       {"torch.compile": 0.212 / 0.19, "CuPy fuse": 0.328 / 0.19, "torch eager": 0.732 / 0.19},
		"chain_unfused":     {"torch eager": 0.732 / 0.75},
		"matmul_array_tf32": {"torch cuBLAS": 0.367e-3 / (2 * 4096 * 4096 * 4096 / 370e12)},
		"matmul_tiled_go":   {"CuPy RawKernel": 16.86e-3 / (2 * 4096 * 4096 * 4096 / 8.0e12)},
		"array_op_overhead": {"torch": 5.96 / 4.1},
	}
	for name, peers := range want {
		x := r.Result(name)
		if len(x.Peers) != len(peers) {
			t.Errorf("%s: peers %+v, want %v", name, x.Peers, peers)
			continue
		}
		for _, p := range x.Peers {
			if math.Abs(p.Speed-peers[p.Name]) > 1e-3*peers[p.Name] {
				t.Errorf("%s vs %s: speed %.4f, want %.4f", name, p.Name, p.Speed, peers[p.Name])
			}
		}
	}
	if !strings.Contains(r.Compared, "baseline.json") || !strings.Contains(r.Compared, "H100") {
		t.Errorf("Compared = %q", r.Compared)
	}
	var tb strings.Builder
	r.WriteTable(&tb)
	for _, s := range []string{"vs peer", "1.42x CuPy RawKernel", "above 1x gocu is faster"} {
		if !strings.Contains(tb.String(), s) {
			t.Errorf("the table lacks %q:\n%s", s, tb.String())
		}
	}
	checkPlots(t, r, []string{"gray", "matmul_naive", "sgemm_tf32", "latencies", "h2d_pinned",
		"gray_fast", "sgemm_go", "matmul_tiled_go", "add", "sum", "chain_fused", "chain_unfused", "matmul_array_tf32", "array_op_overhead"})
	if p := os.Getenv("GOCU_BENCH_PLOT"); p != "" { // to look at the sample roofline
		if err := r.PlotFile(p); err != nil {
			t.Fatal(err)
		}
	}

	// A small run is not compared: its sizes are not the peers'.
	s := sampleGPUReport()
	s.Small = true
	if err := s.Compare("testdata/baseline.json"); err != nil {
		t.Fatal(err)
	}
	if len(s.Result("gray").Peers) != 0 {
		t.Error("a small run was compared with the peers")
	}
}

func TestCompareReport(t *testing.T) {
	old := sampleGPUReport()
	dir := t.TempDir()
	path := filepath.Join(dir, "old.json")
	old.Result("gray").Seconds *= 2   // it was twice as slow
	old.Result("launch").Seconds /= 2 // and launched twice as fast
	if err := old.WriteJSONFile(path); err != nil {
		t.Fatal(err)
	}
	r := sampleGPUReport()
	if err := r.Compare(path); err != nil {
		t.Fatal(err)
	}
	if g, l, c := r.Result("gray").Versus, r.Result("launch").Versus, r.Result("copy").Versus; math.Abs(g-2) > 1e-9 || math.Abs(l-0.5) > 1e-9 || math.Abs(c-1) > 1e-9 {
		t.Errorf("versus: gray %v, launch %v, copy %v", g, l, c)
	}
	var tb strings.Builder
	r.WriteTable(&tb)
	if !strings.Contains(tb.String(), "vs old.json") || !strings.Contains(tb.String(), "2.00x") {
		t.Errorf("table:\n%s", tb.String())
	}

	// Errors: a missing file, not JSON, another device kind, an empty
	// object.
	bad := map[string]string{"notjson.json": "{", "empty.json": "{}", "other.json": ""}
	simRep := &Report{Schema: Schema, Device: DeviceInfo{Kind: "sim"}}
	var sb bytes.Buffer
	simRep.WriteJSON(&sb)
	bad["other.json"] = sb.String()
	for name, content := range bad {
		p := filepath.Join(dir, name)
		os.WriteFile(p, []byte(content), 0o600)
		if err := sampleGPUReport().Compare(p); err == nil {
			t.Errorf("--compare %s (%q) succeeded", name, content)
		}
	}
	if err := r.Compare(filepath.Join(dir, "missing.json")); err == nil {
		t.Error("--compare of a missing file succeeded")
	}
	if _, err := ReadReport(strings.NewReader(`{"schema":"other/2"}`)); err == nil {
		t.Error("ReadReport accepted another schema")
	}
}

// Test workloads on the CPU, in a suite of their own.
func init() {
	Register(Workload{Name: "test_wrong", Doc: "a check that fails", Kind: Latency, Devices: CPU, Suites: []string{"test"}, Clock: Wall,
		Setup: func(e *Env) (*Case, error) {
			x := []float32{1, 2}
			return &Case{Run: func() error { x[1] = 3; return nil }, Check: func() error {
				if x[1] != 2 {
					return errors.New("x[1] is 3, want 2")
				}
				return nil
			}, Ops: 1}, nil
		}})
	Register(Workload{Name: "test_unchecked", Doc: "no check", Kind: Latency, Devices: CPU, Suites: []string{"test"}, Clock: Wall,
		Setup: func(e *Env) (*Case, error) { return &Case{Run: func() error { return nil }}, nil }})
	Register(Workload{Name: "test_skip", Doc: "skips", Kind: Latency, Devices: CPU, Suites: []string{"test"}, Clock: Wall,
		Setup: func(e *Env) (*Case, error) { return nil, Skipf("no such library") }})
	Register(Workload{Name: "test_panic", Doc: "panics", Kind: Latency, Devices: CPU, Suites: []string{"test"}, Clock: Wall,
		Setup: func(e *Env) (*Case, error) {
			return &Case{Run: func() error { panic("boom") }, NoCheck: "it panics first"}, nil
		}})
}

func TestFailures(t *testing.T) {
	rep, err := Run(Options{Device: CPU, Suite: "test", Small: true, Reps: 2})
	if !errors.Is(err, ErrFailed) || rep == nil {
		t.Fatalf("Run = %v, %v; want ErrFailed with a report", rep, err)
	}
	if !rep.Failed() {
		t.Error("Failed() is false")
	}
	for name, want := range map[string]string{
		"test_wrong": "wrong result: x[1] is 3, want 2", "test_unchecked": "no correctness check", "test_panic": "panic: boom",
	} {
		if x := rep.Result(name); x == nil || !strings.Contains(x.Error, want) {
			t.Errorf("%s: %+v, want an error with %q", name, x, want)
		}
		if !strings.Contains(err.Error(), name) {
			t.Errorf("the error %q does not name %s", err, name)
		}
	}
	if x := rep.Result("test_skip"); x == nil || x.Error != "" || !strings.Contains(x.Skipped, "no such library") {
		t.Errorf("test_skip: %+v", x)
	}
	var tb strings.Builder
	rep.WriteTable(&tb)
	if !strings.Contains(tb.String(), "FAILED") || !strings.Contains(tb.String(), "skipped") {
		t.Errorf("table:\n%s", tb.String())
	}
}

func TestRunErrors(t *testing.T) {
	if _, err := Run(Options{Device: CPU, Only: []string{"nosuch"}}); err == nil {
		t.Error("an unknown workload ran")
	}
	if _, err := Run(Options{Device: Device(64)}); err == nil {
		t.Error("an unknown device ran")
	}
}

func TestProgressOnlyOnTerminals(t *testing.T) {
	if NewProgress(&bytes.Buffer{}) != nil {
		t.Error("a progress bar on a buffer")
	}
	f, err := os.CreateTemp(t.TempDir(), "out")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if NewProgress(f) != nil || IsTerminal(f) {
		t.Error("a progress bar on a regular file")
	}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	if NewProgress(w) != nil {
		t.Error("a progress bar on a pipe")
	}
	var nilBar *Progress // what Run gets off a terminal: every method is a no-op
	nilBar.start(3)
	nilBar.workload(0, "copy")
	nilBar.rep(0, 1)
	nilBar.done()

	var buf bytes.Buffer
	p := &Progress{w: &buf}
	p.start(4)
	p.workload(1, "gray")
	p.rep(0, 20) // too soon after the last draw: skipped
	p.done()
	if s := buf.String(); !strings.Contains(s, "[######..................] 2/4 gray") || !strings.HasSuffix(s, "\r\033[K") {
		t.Errorf("progress output %q", s)
	}
}

func TestChecks(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	const n = 5000
	rgb := randBytes(r, 3*n)
	gray := make([]byte, n)
	for i := range n {
		gray[i] = uint8(grayWeights[0]*float32(rgb[i]) + grayWeights[1]*float32(rgb[i+n]) + grayWeights[2]*float32(rgb[i+2*n]))
	}
	if err := checkGray(rgb, gray, n); err != nil {
		t.Fatal(err)
	}
	bad := slices.Clone(gray)
	bad[1234] = 0xFF // unwritten
	if err := checkGray(rgb, bad, n); err == nil || !strings.Contains(err.Error(), "pixel 1234") {
		t.Errorf("an unwritten pixel: %v", err)
	}
	bad = slices.Clone(gray)
	bad[77]++ // off by one where the exact value is not near an integer
	if err := checkGray(rgb, bad, n); err == nil {
		t.Error("an off-by-one pixel passed")
	}
	// A value within 1e-4 of an integer may truncate either way.
	edge := []byte{100, 100, 100} // 0.2989+0.5870+0.1140 = 0.9999: exact 99.99
	if err := checkGray(edge, []byte{99}, 1); err != nil {
		t.Errorf("99.99 truncated to 99: %v", err)
	}

	const m, k, nn = 37, 300, 41
	a, b := randFloats(r, m*k), randFloats(r, k*nn)
	c := make([]float32, m*nn)
	for i := range m {
		for j := range nn {
			var s float32
			for p := range k {
				s += a[i*k+p] * b[p*nn+j]
			}
			c[i*nn+j] = s
		}
	}
	if err := checkMatmul(a, b, c, m, nn, k, tolFP32, r); err != nil {
		t.Fatal(err)
	}
	c2 := slices.Clone(c)
	c2[5*nn+7] = float32(math.NaN())
	if err := checkMatmul(a, b, c2, m, nn, k, tolFP32, r); err == nil || !strings.Contains(err.Error(), "c[5][7]") {
		t.Errorf("a NaN element: %v", err)
	}
	c3 := slices.Clone(c)
	for j := range nn { // a wrong last row: always sampled
		c3[(m-1)*nn+j] += 0.5
	}
	if err := checkMatmul(a, b, c3, m, nn, k, tolFP32, r); err == nil {
		t.Error("a wrong row passed")
	}
	// Elementwise checks: exact, within a tolerance, and the poison.
	x := randFloats(r, 1000)
	y := make([]float32, len(x))
	for i, v := range x {
		y[i] = chainRef(v)
	}
	ref := func(i int) (float32, float64) { return chainRef(x[i]), 1e-6 }
	if err := checkElems("chain", y, len(x), ref); err != nil {
		t.Fatal(err)
	}
	y[500] = float32(math.NaN())
	if err := checkElems("chain", y, len(x), ref); err == nil || !strings.Contains(err.Error(), "element 500") {
		t.Errorf("a NaN element: %v", err)
	}
	y[500] = chainRef(x[500]) + 1e-3
	if err := checkElems("chain", y, len(x), ref); err == nil {
		t.Error("an element off by 1e-3 passed")
	}
	exact := func(i int) (float32, float64) { return chainRef(x[i]), 0 }
	y[500] = math.Nextafter32(chainRef(x[500]), 10)
	if err := checkElems("chain", y, len(x), exact); err == nil {
		t.Error("an element one ulp off passed an exact check")
	}
	if err := checkElems("chain", y[:10], len(x), exact); err == nil {
		t.Error("a short result passed")
	}
	if chainRef(-1) != 0 || chainRef(1) != 4 || chainRef(0.25) != 1.75 {
		t.Errorf("chainRef: %v %v %v", chainRef(-1), chainRef(1), chainRef(0.25))
	}
	// The integers of the sum: from -8 to 8, never 0, both signs.
	ints := randInts(r, 100000)
	var pos, neg int
	for _, v := range ints {
		if v != float32(int(v)) || v == 0 || v < -8 || v > 8 {
			t.Fatalf("randInts gave %v", v)
		}
		if v > 0 {
			pos++
		} else {
			neg++
		}
	}
	if pos < 45000 || neg < 45000 {
		t.Errorf("randInts: %d positive, %d negative", pos, neg)
	}

	if err := sameBytes("x", []byte{1, 2, 3}, []byte{1, 2, 4}); err == nil || !strings.Contains(err.Error(), "byte 2") {
		t.Errorf("sameBytes: %v", err)
	}
}

// An array workload whose operation writes nothing fails its check: the
// output comes from the poisoned memory the workload freed just before.
func TestArrayPoison(t *testing.T) {
	a, err := newArrays(&Env{Device: CPU})
	if err != nil {
		t.Fatal(err)
	}
	defer a.close()
	const n = 1 << 16
	if err := a.poison(n); err != nil {
		t.Fatal(err)
	}
	unwritten := func() *array.Array { return a.dev.Empty(array.Float32, n) }
	if err := a.run(unwritten)(); err != nil {
		t.Fatal(err)
	}
	got, err := a.result()
	if err != nil {
		t.Fatal(err)
	}
	if err := checkElems("unwritten", got, n, func(int) (float32, float64) { return 1, 0.5 }); err == nil || !strings.Contains(err.Error(), "NaN") {
		t.Errorf("an unwritten output passed: %v", err)
	}
	// A failed operation is an error of the repetition, not a result.
	if err := a.run(func() *array.Array { return a.dev.Empty(array.Float32, n).MatMul(a.dev.Empty(array.Float32, 3)) })(); err == nil {
		t.Error("a failed MatMul passed")
	}
}

// The lowp suite runs and checks on the CPU backend at small sizes: every
// product, the quantisation, softmax and the bfloat16 add.
func TestLowpSuiteOnCPU(t *testing.T) {
	rep, err := Run(Options{Device: CPU, Suite: "lowp", Small: true, Reps: 2, Seed: 5})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"matmul_bf16", "matmul_fp16", "matmul_int8", "matmul_int8_tn", "matmul_fp8", "quantize_rows", "softmax_rows", "add_bf16"}
	for _, name := range want {
		x := rep.Result(name)
		if x == nil || x.Error != "" || x.Skipped != "" || x.Seconds <= 0 {
			t.Errorf("%s: %+v", name, x)
		}
	}
	if len(rep.Results) != len(want) {
		t.Errorf("%d results, want %d (no GPU ceilings on the CPU)", len(rep.Results), len(want))
	}
}

// The low-precision ceilings are measured only when a selected workload
// is compared with them, and show in the table and the roofline.
func TestLowpCeilings(t *testing.T) {
	var lowp, other []*Workload
	for _, w := range Workloads(CUDA) {
		if w.Ceiling >= BF16Roof {
			lowp = append(lowp, w)
		} else if w.Name == "add" {
			other = append(other, w)
		}
	}
	if len(lowp) != 4 {
		t.Fatalf("%d low-precision ceilings", len(lowp))
	}
	for _, c := range []Ceiling{BF16Roof, FP16Roof, Int8Roof, FP8Roof} {
		if needsCeiling(other, c) {
			t.Errorf("ceiling %d measured for the add", c)
		}
		sel, _ := selectWorkloads(CUDA, nil, "lowp")
		if !needsCeiling(sel, c) {
			t.Errorf("ceiling %d not measured for the lowp suite", c)
		}
	}
	rep := &Report{Schema: Schema, Device: DeviceInfo{Kind: "cuda"},
		Ceilings: Ceilings{MemoryGBps: 3000, FP32TFLOPs: 51, BF16TFLOPs: 700, FP16TFLOPs: 680, Int8TOPs: 1200, FP8TFLOPs: 1300}}
	rep.Results = []Result{{Name: "matmul_bf16", Group: "lowp", Device: "cuda", Kind: "compute", Seconds: 2e-4, Flops: 2 * 4096 * 4096 * 4096, Bytes: 6 * 4096 * 4096}}
	rep.derive(&rep.Results[0], find(Workloads(CUDA), "matmul_bf16"))
	if x := rep.Results[0]; x.Roof != "bf16" || x.Percent < 90 || x.Percent > 100 {
		t.Errorf("matmul_bf16 against the bf16 roof: %s %.1f%%", x.Roof, x.Percent)
	}
	var tb strings.Builder
	if err := rep.WriteTable(&tb); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"BF16", "INT8", "FP8"} {
		if !strings.Contains(tb.String(), s) {
			t.Errorf("the table lacks the %s ceiling:\n%s", s, tb.String())
		}
	}
	var png bytes.Buffer
	if err := rep.Plot(&png, "png"); err != nil {
		t.Fatal(err)
	}
}

// TestGPTSuite checks the GPT steps' registration, their comparison with
// train_gpt.json's milliseconds per step, and the note with the peak.
func TestGPTSuite(t *testing.T) {
	ws, err := selectWorkloads(CUDA, nil, "gpt")
	if err != nil {
		t.Fatal(err)
	}
	if got := names(ws); !slices.Equal(got, []string{"gpt_bytes_step_eager", "gpt_bytes_step_graph", "gpt2_step_eager", "gpt2_step_graph"}) {
		t.Fatalf("suite gpt: %v", got)
	}
	x := &Result{Name: "gpt2_step_eager", Seconds: 0.2, Ops: 5, Note: "peak 13000 MiB in use"}
	if s := speed(x, MillisPerOp, 47.1); math.Abs(s-47.1/40) > 1e-12 {
		t.Errorf("47.1 ms a step against 40: speed %v", s)
	}
	r := &Report{Results: []Result{*x}}
	var b strings.Builder
	if err := r.WriteTable(&b); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "gpt2_step_eager: peak 13000 MiB in use") {
		t.Errorf("the table lacks the note:\n%s", b.String())
	}
}
