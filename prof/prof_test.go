package prof_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gocu-dev/gocu/internal/lecture"
	"github.com/gocu-dev/gocu/kernel"
	"github.com/gocu-dev/gocu/prof"
	"github.com/gocu-dev/gocu/sim"
)

// grayLaunch runs the lecture's grayscale kernel on the simulator over n
// random pixels and checks the result.
func grayLaunch(t testing.TB, n int) {
	t.Helper()
	r := rand.New(rand.NewPCG(uint64(n), 7))
	rgb := make([]uint8, 3*n)
	for i := range rgb {
		rgb[i] = uint8(r.UintN(256))
	}
	gray := make([]uint8, n)
	for i := range gray {
		gray[i] = 0xFF // poison: no gray value is 255
	}
	cfg := sim.Config{Grid: kernel.Dim3{X: int32((n + 255) / 256)}, Block: kernel.Dim3{X: 256}}
	k := sim.Kernel{Name: "Gray", Func: func(th *kernel.Thread) { lecture.Gray(th, rgb, gray, int32(n)) }}
	if err := sim.Launch(cfg, k); err != nil {
		t.Fatal(err)
	}
	for i := range n {
		want := uint8(0.2989*float32(rgb[i]) + 0.5870*float32(rgb[i+n]) + 0.1140*float32(rgb[i+2*n]))
		if gray[i] != want {
			t.Fatalf("gray[%d] = %d, want %d", i, gray[i], want)
		}
	}
}

func matmulLaunch(t testing.TB, size int32) {
	t.Helper()
	a, b, c := make([]float32, size*size), make([]float32, size*size), make([]float32, size*size)
	for i := range a {
		a[i], b[i] = float32(i%7)-3, float32(i%5)-2
	}
	tiles := (size + lecture.Tile - 1) / lecture.Tile
	cfg := sim.Config{Grid: kernel.Dim3{X: tiles, Y: tiles}, Block: kernel.Dim3{X: lecture.Tile, Y: lecture.Tile}}
	k := sim.Kernel{Name: "TiledMatMul", Func: func(th *kernel.Thread) { lecture.TiledMatMul(th, a, b, c, size, size, size) }}
	if err := sim.Launch(cfg, k); err != nil {
		t.Fatal(err)
	}
}

func TestSimProfile(t *testing.T) {
	if err := prof.Start(); err != nil {
		t.Fatal(err)
	}
	if !prof.Running() || !errors.Is(prof.Start(), prof.ErrRunning) {
		t.Fatal("a second Start did not report that profiling is running")
	}
	t0 := time.Now()
	for range 3 {
		grayLaunch(t, 1<<14)
	}
	matmulLaunch(t, 32)
	bad := sim.Kernel{Name: "OffByOne", Func: func(th *kernel.Thread) {
		x := make([]float32, 4)
		x[th.Index()] = 1
	}}
	if err := sim.Launch(sim.Config{Grid: kernel.Dim3{X: 1}, Block: kernel.Dim3{X: 5}}, bad); err == nil {
		t.Fatal("the out-of-range launch succeeded")
	}
	wall := time.Since(t0)
	p, err := prof.Stop()
	if err != nil {
		t.Fatal(err)
	}
	if prof.Running() {
		t.Error("Running after Stop")
	}
	if _, err := prof.Stop(); !errors.Is(err, prof.ErrNotRunning) {
		t.Errorf("second Stop: %v", err)
	}
	grayLaunch(t, 256) // not recorded any more

	if len(p.Events) != 5 {
		t.Fatalf("%d events, want 5: %+v", len(p.Events), p.Events)
	}
	var sum time.Duration
	for i, e := range p.Events {
		if e.Kind != prof.SimKernel || e.Device != prof.SimDevice || !e.Timed || e.Duration <= 0 || e.Start < 0 {
			t.Errorf("event %d: %+v", i, e)
		}
		if e.Start+e.Duration > wall+time.Second {
			t.Errorf("event %d ends at %v, after the %v the launches took", i, e.Start+e.Duration, wall)
		}
		if i > 0 && e.Start < p.Events[i-1].Start+p.Events[i-1].Duration {
			t.Errorf("event %d starts at %v, before event %d ended", i, e.Start, i-1)
		}
		sum += e.Duration
	}
	if sum > wall {
		t.Errorf("the launches' durations add up to %v, more than the %v they took together", sum, wall)
	}
	g := p.Events[0]
	if g.Name != "Gray" || g.Grid != [3]int{64, 1, 1} || g.Block != [3]int{256, 1, 1} || g.Failed {
		t.Errorf("gray launch recorded as %+v", g)
	}
	if m := p.Events[3]; m.Name != "TiledMatMul" || m.Grid != [3]int{2, 2, 1} || m.Block != [3]int{16, 16, 1} {
		t.Errorf("matmul launch recorded as %+v", m)
	}
	if e := p.Events[4]; e.Name != "OffByOne" || !e.Failed || !strings.Contains(e.Note, "out of range") {
		t.Errorf("failed launch recorded as %+v", e)
	}
	if p.Devices[prof.SimDevice] == "" {
		t.Error("the simulator is not described in Devices")
	}

	rows := p.Summary()
	if len(rows) != 3 {
		t.Fatalf("summary: %+v", rows)
	}
	var gray prof.Row
	var pct float64
	for i, r := range rows {
		pct += r.Percent
		if i > 0 && r.Total > rows[i-1].Total {
			t.Errorf("the summary is not sorted by total: %+v", rows)
		}
		if r.Name == "Gray" {
			gray = r
		}
	}
	if pct < 99.99 || pct > 100.01 {
		t.Errorf("percentages add up to %v", pct)
	}
	var gt time.Duration
	gmin, gmax := time.Duration(1<<62), time.Duration(0)
	for _, e := range p.Events[:3] {
		gt += e.Duration
		gmin, gmax = min(gmin, e.Duration), max(gmax, e.Duration)
	}
	if gray.Calls != 3 || gray.Total != gt || gray.Min != gmin || gray.Max != gmax || gray.Mean() != gt/3 {
		t.Errorf("gray row %+v; from the events: total %v, min %v, max %v", gray, gt, gmin, gmax)
	}

	table := p.Table()
	for _, want := range []string{"Name", "Calls", "Total", "Mean", "Min", "Max", "CPU total", "Gray", "TiledMatMul", "OffByOne", "sim kernel", "5 calls"} {
		if !strings.Contains(table, want) {
			t.Errorf("table lacks %q:\n%s", want, table)
		}
	}
	lines := strings.Split(strings.TrimSpace(table), "\n")
	if len(lines) != 6 || !strings.HasPrefix(lines[2], rows[0].Name+" ") || !strings.HasPrefix(lines[4], rows[2].Name+" ") {
		t.Errorf("table has %d lines or is not sorted like the summary:\n%s", len(lines), table)
	}

	checkTrace(t, p)
}

// checkTrace decodes the profile's Chrome trace and checks it against the
// events, then reads it back.
func checkTrace(t *testing.T, p *prof.Profile) {
	t.Helper()
	var buf bytes.Buffer
	if err := p.WriteTrace(&buf); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		DisplayTimeUnit string `json:"displayTimeUnit"`
		TraceEvents     []struct {
			Name string         `json:"name"`
			Cat  string         `json:"cat"`
			Ph   string         `json:"ph"`
			Ts   *float64       `json:"ts"`
			Dur  *float64       `json:"dur"`
			Pid  *int           `json:"pid"`
			Tid  *int           `json:"tid"`
			S    string         `json:"s"` // scope of an instant event
			Args map[string]any `json:"args"`
		} `json:"traceEvents"`
		OtherData map[string]any `json:"otherData"`
	}
	dec := json.NewDecoder(bytes.NewReader(buf.Bytes()))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&doc); err != nil {
		t.Fatalf("the trace is not the expected JSON: %v\n%s", err, buf.String())
	}
	if doc.OtherData["producer"] != "gocu prof" || doc.OtherData["events"] != float64(len(p.Events)) {
		t.Errorf("otherData: %v", doc.OtherData)
	}
	procs := map[int]string{}
	threads := map[[2]int]string{}
	complete := 0
	for _, e := range doc.TraceEvents {
		if e.Pid == nil || e.Ph == "" || e.Name == "" {
			t.Fatalf("trace event without pid, ph or name: %+v", e)
		}
		switch e.Ph {
		case "M":
			if e.Name == "process_name" {
				procs[*e.Pid] = e.Args["name"].(string)
			}
			if e.Name == "thread_name" {
				threads[[2]int{*e.Pid, *e.Tid}] = e.Args["name"].(string)
			}
		case "X":
			if e.Ts == nil || e.Dur == nil || e.Tid == nil || *e.Dur < 0 {
				t.Fatalf("complete event without ts, dur or tid: %+v", e)
			}
			if procs[*e.Pid] == "" || threads[[2]int{*e.Pid, *e.Tid}] == "" {
				t.Errorf("event %q on pid %d tid %d before the process and thread were named", e.Name, *e.Pid, *e.Tid)
			}
			if e.Cat != "host" {
				complete++
				id := int(e.Args["id"].(float64))
				want := p.Events[id]
				if e.Name != want.Name || e.Cat != want.Kind || abs(*e.Ts-us(want.Start)) > 1e-3 || abs(*e.Dur-us(want.Duration)) > 1e-3 {
					t.Errorf("trace event %q at %vus for %vus, want %+v", e.Name, *e.Ts, *e.Dur, want)
				}
			}
		case "i": // an operation with no GPU time: a launch captured into a graph
			if e.Ts == nil || e.Tid == nil || e.S != "t" {
				t.Fatalf("instant event without ts or tid, or not thread-scoped: %+v", e)
			}
			if e.Cat != "host" {
				complete++
				want := p.Events[int(e.Args["id"].(float64))]
				if e.Name != want.Name || e.Cat != want.Kind || want.Timed {
					t.Errorf("instant trace event %q (%s), want %+v", e.Name, e.Cat, want)
				}
			}
		}
	}
	if complete != len(p.Events) {
		t.Errorf("%d complete events in the trace, want %d", complete, len(p.Events))
	}
	back, err := prof.ReadTrace(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if !sameSummary(back.Summary(), p.Summary()) {
		t.Errorf("summary read back:\n%s\nwant:\n%s", back.Table(), p.Table())
	}
}

func us(d time.Duration) float64 { return float64(d) / 1e3 }

func abs(x float64) float64 {
	if x < 0 {
		return -x
	}
	return x
}

func sameSummary(a, b []prof.Row) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		x, y := a[i], b[i]
		if x.Name != y.Name || x.Kind != y.Kind || x.Device != y.Device || x.Calls != y.Calls || x.Untimed != y.Untimed ||
			x.Total != y.Total || x.Min != y.Min || x.Max != y.Max || x.Bytes != y.Bytes {
			return false
		}
	}
	return true
}

// Launches from several goroutines overlap: the trace spreads them over
// lanes so that no two events of one thread overlap.
func TestConcurrentSimLaunches(t *testing.T) {
	if err := prof.Start(); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for range 5 {
				grayLaunch(t, 1<<15)
			}
		})
	}
	wg.Wait()
	p, err := prof.Stop()
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Events) != 20 || p.Summary()[0].Calls != 20 {
		t.Fatalf("%d events", len(p.Events))
	}
	var buf bytes.Buffer
	if err := p.WriteTrace(&buf); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		TraceEvents []struct {
			Ph       string
			Ts, Dur  float64
			Pid, Tid int
		} `json:"traceEvents"`
	}
	if err := json.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	spans := map[[2]int][][2]float64{}
	for _, e := range doc.TraceEvents {
		if e.Ph == "X" {
			k := [2]int{e.Pid, e.Tid}
			spans[k] = append(spans[k], [2]float64{e.Ts, e.Ts + e.Dur})
		}
	}
	for k, s := range spans {
		sort.Slice(s, func(i, j int) bool { return s[i][0] < s[j][0] })
		for i := 1; i < len(s); i++ {
			if s[i][0] < s[i-1][1] {
				t.Errorf("thread %v: events overlap: %v and %v", k, s[i-1], s[i])
			}
		}
	}
}

func TestWriteFileAndReadTraceErrors(t *testing.T) {
	if err := prof.Start(); err != nil {
		t.Fatal(err)
	}
	grayLaunch(t, 1000)
	p, err := prof.Stop()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "trace.json")
	if err := p.WriteFile(path); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	back, err := prof.ReadTrace(f)
	if err != nil || len(back.Events) != 1 || back.Events[0].Name != "Gray" || back.Events[0].Duration != p.Events[0].Duration {
		t.Fatalf("read back %+v, %v", back, err)
	}
	if err := p.WriteFile(filepath.Join(t.TempDir(), "no", "such", "dir.json")); err == nil {
		t.Error("WriteFile into a missing directory succeeded")
	}
	for _, bad := range []string{"", "   ", "{not json", `{"traceEvents": 3}`} {
		if _, err := prof.ReadTrace(strings.NewReader(bad)); err == nil {
			t.Errorf("ReadTrace(%q) succeeded", bad)
		}
	}
	// The JSON array form, cut short as a crashed program leaves it.
	cut := `[{"name":"k","cat":"sim kernel","ph":"X","ts":1,"dur":2.5,"pid":1,"tid":1,"args":{"id":0,"device":"sim","host_ts":1,"host_dur":2.5}},`
	q, err := prof.ReadTrace(strings.NewReader(cut))
	if err != nil || len(q.Events) != 1 || q.Events[0].Duration != 2500*time.Nanosecond {
		t.Errorf("array form cut short: %+v, %v", q, err)
	}
}

func TestStartWithBadFile(t *testing.T) {
	err := prof.StartWith(prof.Options{File: filepath.Join(t.TempDir(), "missing", "out.json")})
	if err == nil {
		prof.Stop()
		t.Fatal("profiling started with a trace file in a missing directory")
	}
	if prof.Running() {
		t.Error("a failed Start left profiling running")
	}
}

func TestFormat(t *testing.T) {
	for d, want := range map[time.Duration]string{
		0: "0 s", 999: "999 ns", 1500: "1.50 us", 58500: "58.5 us", 1234567: "1.23 ms", 2 * time.Second: "2.00 s", 125 * time.Millisecond: "125 ms",
	} {
		if got := prof.FormatDuration(d); got != want {
			t.Errorf("FormatDuration(%v) = %q, want %q", int64(d), got, want)
		}
	}
	for n, want := range map[int64]string{0: "0 B", 1023: "1023 B", 1536: "1.50 KiB", 256 << 20: "256 MiB", 3 << 30: "3.00 GiB"} {
		if got := prof.FormatBytes(n); got != want {
			t.Errorf("FormatBytes(%d) = %q, want %q", n, got, want)
		}
	}
}

// TestSimDeviceLabel checks that a simulator launch made for a device
// (sim.Config.Device, as generated launchers set it) is recorded under
// that device's name, and one for none under SimDevice.
func TestSimDeviceLabel(t *testing.T) {
	if err := prof.Start(); err != nil {
		t.Fatal(err)
	}
	x := make([]float32, 64)
	k := sim.Kernel{Name: "Inc", Func: func(th *kernel.Thread) { x[th.Index()]++ }}
	for _, dev := range []string{"cpu", ""} {
		if err := sim.Launch(sim.Config{Grid: kernel.Dim3{X: 2}, Block: kernel.Dim3{X: 32}, Device: dev}, k); err != nil {
			t.Fatal(err)
		}
	}
	p, err := prof.Stop()
	if err != nil {
		t.Fatal(err)
	}
	for i := range x {
		if x[i] != 2 {
			t.Fatalf("x[%d] = %v, want 2", i, x[i])
		}
	}
	if len(p.Events) != 2 || p.Events[0].Device != "cpu" || p.Events[1].Device != prof.SimDevice {
		t.Fatalf("events %+v, want one on cpu, one on %s", p.Events, prof.SimDevice)
	}
	if d := p.Devices["cpu"]; !strings.Contains(d, "Go kernels on the simulator") {
		t.Errorf("device cpu described as %q", d)
	}
}
