package bench

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/gocu-dev/gocu/internal/textable"
	"github.com/gocu-dev/gocu/internal/units"
)

// Schema names the JSON format of a Report.
const Schema = "gocu-bench/1"

// Report is the result of a benchmark run, as gocu bench --json writes it.
type Report struct {
	Schema   string     `json:"schema"`
	Date     time.Time  `json:"date"`
	Device   DeviceInfo `json:"device"`
	Host     HostInfo   `json:"host"`
	Small    bool       `json:"small,omitempty"` // small sizes (tests): not comparable with the peers
	Ceilings Ceilings   `json:"ceilings"`
	Results  []Result   `json:"results"`
	// Compared names the run or baseline the ratios in Results refer to.
	Compared string `json:"compared,omitempty"`
}

// DeviceInfo describes the device benchmarked.
type DeviceInfo struct {
	Kind            string `json:"kind"` // cuda, sim or cpu
	Name            string `json:"name"`
	Arch            string `json:"arch,omitempty"`
	Driver          int    `json:"driver,omitempty"`
	Multiprocessors int    `json:"multiprocessors,omitempty"`
	Memory          int64  `json:"memory_bytes,omitempty"`
	// TheoreticalGBps is the memory bandwidth from the clock and bus
	// width (CUDA), for reference: the ceilings are measured.
	TheoreticalGBps float64 `json:"theoretical_GBps,omitempty"`
}

// HostInfo describes the machine the benchmark ran from.
type HostInfo struct {
	OS   string `json:"os"`
	Arch string `json:"arch"`
	CPUs int    `json:"cpus"`
	Go   string `json:"go"`
}

// Ceilings are the rates the device was measured to reach: the roofs of
// the roofline. Zero means not measured.
type Ceilings struct {
	MemoryGBps float64 `json:"memory_GBps"`           // copy, bytes read + written
	FP32TFLOPs float64 `json:"fp32_TFLOPs"`           // library SGEMM
	TF32TFLOPs float64 `json:"tf32_TFLOPs,omitempty"` // library SGEMM on TF32 tensor cores
	BF16TFLOPs float64 `json:"bf16_TFLOPs,omitempty"` // library bfloat16 GEMM (float32 accumulation)
	FP16TFLOPs float64 `json:"fp16_TFLOPs,omitempty"` // library float16 GEMM (float32 accumulation)
	Int8TOPs   float64 `json:"int8_TOPs,omitempty"`   // library int8 GEMM into int32 (cuBLASLt)
	FP8TFLOPs  float64 `json:"fp8_TFLOPs,omitempty"`  // library FP8 e4m3 GEMM (cuBLASLt)
	Source     string  `json:"source,omitempty"`      // which workloads measured them
}

// Result is one workload's measurement.
type Result struct {
	Name string `json:"name"`
	// Group is the heading the table lists the result under: "ceilings",
	// "runtime", "lecture", "go", "arrays" or another suite.
	Group  string `json:"group,omitempty"`
	Device string `json:"device"`
	Kind   string `json:"kind"`
	Doc    string `json:"doc,omitempty"`
	Reps   int    `json:"reps"`
	// Seconds is the median time of one repetition; Min and Max bound the
	// repetitions.
	Seconds float64 `json:"seconds"`
	Min     float64 `json:"min_seconds"`
	Max     float64 `json:"max_seconds"`
	Clock   string  `json:"clock"` // "cuda events" or "wall"
	// PerOp is Seconds / Ops in Unit ("us" per launch, ...).
	PerOp float64 `json:"per_op,omitempty"`
	Unit  string  `json:"unit,omitempty"`
	Ops   int     `json:"ops,omitempty"`
	Bytes float64 `json:"bytes,omitempty"`
	Flops float64 `json:"flops,omitempty"`
	GBps  float64 `json:"GBps,omitempty"`
	// TFLOPs is the rate of floating-point operations.
	TFLOPs    float64 `json:"TFLOPs,omitempty"`
	Intensity float64 `json:"intensity,omitempty"` // FLOP per byte
	// Roof is what Percent is relative to: "memory", "fp32", "tf32" or ""
	// (none); RoofValue is the ceiling at the workload's intensity, in
	// GB/s for "memory" and TFLOP/s otherwise.
	Roof      string       `json:"roof,omitempty"`
	RoofValue float64      `json:"roof_value,omitempty"`
	Percent   float64      `json:"percent_of_ceiling,omitempty"`
	Ceiling   string       `json:"ceiling,omitempty"` // the ceiling this workload measured
	Peers     []PeerResult `json:"peers,omitempty"`
	// Versus is the speed ratio to the same workload of a compared run
	// (theirs / ours time: above 1 is faster now).
	Versus  float64 `json:"versus,omitempty"`
	Skipped string  `json:"skipped,omitempty"`
	Error   string  `json:"error,omitempty"`
	Note    string  `json:"note,omitempty"` // from Case.Note
}

// PeerResult compares a result with a peer's figure in baseline.json.
type PeerResult struct {
	Name  string  `json:"name"`
	Key   string  `json:"key"`
	Value float64 `json:"value"`
	// Speed is how many times faster gocu is than the peer (below 1:
	// slower).
	Speed float64 `json:"speed"`
}

// Failed reports whether any workload failed.
func (r *Report) Failed() bool {
	for _, x := range r.Results {
		if x.Error != "" {
			return true
		}
	}
	return false
}

// Result returns the result of the named workload, or nil.
func (r *Report) Result(name string) *Result {
	for i := range r.Results {
		if r.Results[i].Name == name {
			return &r.Results[i]
		}
	}
	return nil
}

// WriteJSON writes the report as indented JSON.
func (r *Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// WriteJSONFile writes the report to a file.
func (r *Report) WriteJSONFile(path string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := r.WriteJSON(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// ReadReport reads a report written by WriteJSON.
func ReadReport(rd io.Reader) (*Report, error) {
	var r Report
	dec := json.NewDecoder(rd)
	if err := dec.Decode(&r); err != nil {
		return nil, fmt.Errorf("bench: not a gocu bench report: %w", err)
	}
	if r.Schema != Schema {
		return nil, fmt.Errorf("bench: report schema %q, want %q", r.Schema, Schema)
	}
	return &r, nil
}

// Unsteady reports whether the median is above 1.1x the minimum: some
// repetitions stalled (a collection, a synchronisation, a cold cache),
// so the median says less about the work than about the stalls.
func (x *Result) Unsteady() bool { return x.Min > 0 && x.Seconds > 1.1*x.Min }

// secondsOf returns the result's time per operation in seconds, or per
// repetition when it has no operations.
func (x *Result) secondsPerOp() float64 {
	if x.Ops > 0 {
		return x.Seconds / float64(x.Ops)
	}
	return x.Seconds
}

// unitScale is the factor from seconds to unit.
func unitScale(unit string) float64 {
	switch unit {
	case "ns":
		return 1e9
	case "ms":
		return 1e3
	case "s":
		return 1
	}
	return 1e6
}

// WriteTable writes the report as a table for people.
func (r *Report) WriteTable(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "gocu bench on %s", r.Device.Kind)
	if r.Device.Name != "" {
		fmt.Fprintf(&b, " (%s", r.Device.Name)
		if r.Device.Arch != "" {
			fmt.Fprintf(&b, ", %s", r.Device.Arch)
		}
		b.WriteString(")")
	}
	fmt.Fprintf(&b, ", %s", r.Date.Format("2006-01-02 15:04 MST"))
	if r.Small {
		b.WriteString(", small sizes")
	}
	b.WriteString("\n")
	c := r.Ceilings
	var roofs []string
	if c.MemoryGBps > 0 {
		roofs = append(roofs, fmt.Sprintf("memory %s GB/s", units.Sig(c.MemoryGBps)))
	}
	if c.FP32TFLOPs > 0 {
		roofs = append(roofs, "FP32 "+units.FLOPRate(1e12*c.FP32TFLOPs))
	}
	if c.TF32TFLOPs > 0 {
		roofs = append(roofs, "TF32 "+units.FLOPRate(1e12*c.TF32TFLOPs))
	}
	for _, x := range c.lowp() {
		roofs = append(roofs, x.name+" "+units.FLOPRate(1e12*x.tflops))
	}
	if len(roofs) > 0 {
		fmt.Fprintf(&b, "measured ceilings: %s (%s)\n", strings.Join(roofs, ", "), c.Source)
	}
	b.WriteString("\n")
	// FLOP/s in the unit that suits the device: TFLOP/s on a GPU.
	flopsHead, flopsScale := "TFLOP/s", 1.0
	if r.Device.Kind != "cuda" {
		flopsHead, flopsScale = "GFLOP/s", 1e3
	}
	head := []string{"workload", "time", "min", "max", "per op", "GB/s", flopsHead, "FLOP/B", "% ceiling"}
	peerCol, versusCol := false, false
	for _, x := range r.Results {
		peerCol = peerCol || len(x.Peers) > 0
		versusCol = versusCol || x.Versus > 0
	}
	if peerCol {
		head = append(head, "vs peer")
	}
	if versusCol {
		head = append(head, "vs "+r.Compared)
	}
	t := [][]string{head}
	var notes []string
	unsteady, grouped := false, false
	for _, x := range r.Results {
		grouped = grouped || x.Group != ""
	}
	for i, x := range r.Results {
		name := x.Name
		if grouped {
			// A heading before each group, the workloads indented under it.
			if i == 0 || x.Group != r.Results[i-1].Group {
				t = append(t, pad([]string{groupTitle(x.Group)}, len(head)))
			}
			name = "  " + name
		}
		row := []string{name}
		switch {
		case x.Error != "":
			row = append(row, "FAILED")
			notes = append(notes, fmt.Sprintf("%s: %s", x.Name, x.Error))
		case x.Skipped != "":
			row = append(row, "skipped")
			notes = append(notes, fmt.Sprintf("%s: %s", x.Name, x.Skipped))
		}
		if x.Error != "" || x.Skipped != "" {
			t = append(t, pad(row, len(head)))
			continue
		}
		med := units.Seconds(x.Seconds)
		if x.Unsteady() {
			med += " !"
			unsteady = true
		}
		row = append(row, med, units.Seconds(x.Min), units.Seconds(x.Max))
		if x.Ops > 0 {
			row = append(row, units.Sig(x.PerOp)+" "+x.Unit)
		} else {
			row = append(row, "")
		}
		row = append(row, nz(x.GBps), nz(x.TFLOPs*flopsScale))
		if x.Intensity > 0 {
			row = append(row, units.Sig(x.Intensity))
		} else {
			row = append(row, "")
		}
		if x.Percent > 0 {
			row = append(row, percent(x.Percent)+" "+x.Roof)
		} else {
			row = append(row, "")
		}
		if peerCol {
			var ps []string
			for _, p := range x.Peers {
				ps = append(ps, fmt.Sprintf("%.2fx %s", p.Speed, p.Name))
			}
			row = append(row, strings.Join(ps, ", "))
		}
		if versusCol {
			if x.Versus > 0 {
				row = append(row, fmt.Sprintf("%.2fx", x.Versus))
			} else {
				row = append(row, "")
			}
		}
		t = append(t, row)
		if x.Note != "" {
			notes = append(notes, fmt.Sprintf("%s: %s", x.Name, x.Note))
		}
	}
	textable.Write(&b, t, 1)
	if peerCol || versusCol {
		b.WriteString("\nratios are speed: above 1x gocu is faster\n")
	}
	if unsteady {
		b.WriteString("! the median is above 1.1x the minimum: something stalls some repetitions\n")
	}
	for _, n := range notes {
		b.WriteString(n + "\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// groupTitle is the heading of a group of results in the table.
func groupTitle(g string) string {
	switch g {
	case "ceilings":
		return "ceilings (measured first)"
	case "lecture":
		return "lecture kernels"
	case "go":
		return "kernels written in Go"
	case "arrays":
		return "arrays (package array)"
	case "training":
		return "training (packages grad and nn)"
	case "":
		return "other"
	}
	return g
}

func pad(row []string, n int) []string {
	for len(row) < n {
		row = append(row, "")
	}
	return row
}

func nz(v float64) string {
	if v <= 0 {
		return ""
	}
	return units.Sig(v)
}

// lowpRoof is one of the low-precision ceilings.
type lowpRoof struct {
	name   string // as the table and the plot label it
	roof   string // as Result.Roof names it
	tflops float64
}

// lowp lists the low-precision ceilings that were measured.
func (c Ceilings) lowp() []lowpRoof {
	var out []lowpRoof
	for _, x := range []lowpRoof{{"BF16", "bf16", c.BF16TFLOPs}, {"FP16", "fp16", c.FP16TFLOPs},
		{"INT8", "int8", c.Int8TOPs}, {"FP8", "fp8", c.FP8TFLOPs}} {
		if x.tflops > 0 {
			out = append(out, x)
		}
	}
	return out
}
