package prof

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/gocu-dev/gocu/internal/textable"
	"github.com/gocu-dev/gocu/internal/units"
)

// Kinds of Event besides those of cuda.OpKind ("kernel", "graph",
// "memcpy HtoD", "memcpy DtoH", "memcpy DtoD", "memset").
const SimKernel = "sim kernel"

// Event is one recorded operation.
type Event struct {
	Name   string // the kernel's name; for other operations the kind
	Kind   string // "kernel", "graph", "memcpy HtoD", ..., or SimKernel
	Device string // "cuda:0", ... or "sim"
	Stream string // "default" or the CUstream in hex; "" on the simulator
	// Grid and Block are the launch shape of kernels, with Y and Z of 0
	// made 1.
	Grid, Block [3]int
	Shared      int   // dynamic shared memory per block
	Bytes       int64 // copies and memsets
	// Start is when the operation began on the device, since the profile
	// began; Duration is how long it ran: GPU time between CUDA events, or
	// wall time on the simulator.
	Start, Duration time.Duration
	// HostStart and HostDuration are the call that queued the operation,
	// on the profile's clock.
	HostStart, HostDuration time.Duration
	// Timed is false when no duration could be measured; Note says why.
	Timed  bool
	Failed bool // the driver refused the operation, or the simulated kernel failed
	Note   string
}

// Row is the summary of the events with one name, kind and device.
type Row struct {
	Name    string        `json:"name"`
	Kind    string        `json:"kind"`
	Device  string        `json:"device"`
	Calls   int           `json:"calls"`
	Untimed int           `json:"untimed,omitempty"` // calls without a duration
	Total   time.Duration `json:"total_ns"`          // device time of the timed calls
	Min     time.Duration `json:"min_ns"`
	Max     time.Duration `json:"max_ns"`
	Host    time.Duration `json:"host_ns"` // time spent in the calls on the CPU
	Bytes   int64         `json:"bytes,omitempty"`
	Percent float64       `json:"percent"` // share of the total device time of all rows
}

// Mean is the average device time of the timed calls.
func (r *Row) Mean() time.Duration {
	if n := r.Calls - r.Untimed; n > 0 {
		return r.Total / time.Duration(n)
	}
	return 0
}

// GBps is the rate of a copy or memset in GB/s (bytes over device time),
// or 0.
func (r *Row) GBps() float64 {
	if r.Bytes == 0 || r.Total <= 0 {
		return 0
	}
	return float64(r.Bytes) / r.Total.Seconds() / 1e9
}

type rowKey struct{ name, kind, device string }

// Profile is what a profiling session recorded.
type Profile struct {
	Began time.Time // when profiling started; event times count from here
	// Events are the recorded operations in the order they were collected,
	// at most the session's MaxEvents of them.
	Events []Event
	// Dropped counts the events beyond MaxEvents: they are in the summary
	// but not in Events or the trace.
	Dropped int
	// Devices describes each device that appears in Events, e.g. "cuda:0"
	// -> "NVIDIA H100 80GB HBM3 (sm_90)".
	Devices map[string]string

	rows map[rowKey]*Row // every event, dropped ones included
}

func newProfile(began time.Time) *Profile {
	return &Profile{Began: began, Devices: map[string]string{}, rows: map[rowKey]*Row{}}
}

// add records e, keeping it if fewer than max events are kept.
func (p *Profile) add(e Event, max int) {
	p.count(&e)
	if len(p.Events) < max {
		p.Events = append(p.Events, e)
	} else {
		p.Dropped++
	}
}

func (p *Profile) count(e *Event) {
	k := rowKey{e.Name, e.Kind, e.Device}
	r := p.rows[k]
	if r == nil {
		r = &Row{Name: e.Name, Kind: e.Kind, Device: e.Device}
		p.rows[k] = r
	}
	r.Calls++
	r.Host += e.HostDuration
	if !e.Timed {
		r.Untimed++
		return
	}
	if r.Calls-r.Untimed == 1 || e.Duration < r.Min {
		r.Min = e.Duration
	}
	r.Max = max(r.Max, e.Duration)
	r.Total += e.Duration
	r.Bytes += e.Bytes
}

// clone returns a deep copy.
func (p *Profile) clone() *Profile {
	c := &Profile{Began: p.Began, Events: slices.Clone(p.Events), Dropped: p.Dropped,
		Devices: map[string]string{}, rows: map[rowKey]*Row{}}
	for k, v := range p.Devices {
		c.Devices[k] = v
	}
	for k, r := range p.rows {
		rc := *r
		c.rows[k] = &rc
	}
	return c
}

// Summary returns one row per kernel name (or copy kind) and device,
// sorted by total device time, largest first, like PyTorch's
// key_averages. Dropped events are counted.
func (p *Profile) Summary() []Row {
	rows := make([]Row, 0, len(p.rows))
	var total time.Duration
	for _, r := range p.rows {
		rows = append(rows, *r)
		total += r.Total
	}
	for i := range rows {
		if total > 0 {
			rows[i].Percent = 100 * float64(rows[i].Total) / float64(total)
		}
	}
	slices.SortFunc(rows, func(a, b Row) int {
		if c := cmp.Compare(b.Total, a.Total); c != 0 {
			return c
		}
		if c := cmp.Compare(b.Calls, a.Calls); c != 0 {
			return c
		}
		return cmp.Compare(a.Name+a.Kind+a.Device, b.Name+b.Kind+b.Device)
	})
	return rows
}

// Table returns the summary as a text table; see WriteTable.
func (p *Profile) Table() string {
	var b strings.Builder
	p.WriteTable(&b)
	return b.String()
}

// WriteTable writes the summary as a table: name, kind, device, calls,
// total device time and its share, mean, min and max, the time the calls
// took on the CPU, and for copies the bytes moved and the rate.
func (p *Profile) WriteTable(w io.Writer) error {
	rows := p.Summary()
	t := [][]string{{"Name", "Kind", "Device", "Calls", "Total", "%", "Mean", "Min", "Max", "CPU total", "Bytes", "GB/s"}}
	var total, host time.Duration
	calls, untimed := 0, 0
	for _, r := range rows {
		total += r.Total
		host += r.Host
		calls += r.Calls
		untimed += r.Untimed
		bytes, rate := "", ""
		if r.Bytes > 0 {
			bytes, rate = FormatBytes(r.Bytes), fmt.Sprintf("%.1f", r.GBps())
		}
		mean, mn, mx := "-", "-", "-"
		if r.Calls > r.Untimed {
			mean, mn, mx = FormatDuration(r.Mean()), FormatDuration(r.Min), FormatDuration(r.Max)
		}
		t = append(t, []string{r.Name, r.Kind, r.Device, fmt.Sprint(r.Calls), FormatDuration(r.Total), fmt.Sprintf("%.1f", r.Percent),
			mean, mn, mx, FormatDuration(r.Host), bytes, rate})
	}
	var b strings.Builder
	textable.Write(&b, t, 3)
	fmt.Fprintf(&b, "%d calls, %s of device time, %s in the calls on the CPU", calls, FormatDuration(total), FormatDuration(host))
	if untimed > 0 {
		fmt.Fprintf(&b, "; %d without a duration (captured into a graph or failed)", untimed)
	}
	if p.Dropped > 0 {
		fmt.Fprintf(&b, "; %d events beyond the limit are counted here but not kept in the trace", p.Dropped)
	}
	b.WriteString("\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// FormatDuration prints d with three significant digits in ns, us, ms or
// s, as every gocu tool prints durations: "1.50 us", "125 ms".
func FormatDuration(d time.Duration) string { return units.Duration(d) }

// FormatBytes prints n in B, KiB, MiB or GiB, as every gocu tool prints
// sizes: "1023 B", "1.50 KiB", "256 MiB".
func FormatBytes(n int64) string { return units.Bytes(n) }
