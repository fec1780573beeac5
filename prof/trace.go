package prof

import (
	"bufio"
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// The Chrome trace (Trace Event Format, JSON object form) written here:
//
//	{"displayTimeUnit":"ns","traceEvents":[
//	{"name":"process_name","ph":"M","pid":1,"tid":0,"args":{"name":"cuda:0 NVIDIA H100 (sm_90)"}},
//	{"name":"thread_name","ph":"M","pid":1,"tid":1,"args":{"name":"stream default"}},
//	{"name":"Gray","cat":"kernel","ph":"X","ts":1520.123,"dur":58.5,"pid":1,"tid":1,"args":{...}},
//	...
//	],"otherData":{"producer":"gocu prof","began":"...","events":1234,"dropped":0}}
//
// Each device is a process; each CUDA stream a thread; the calls that
// queued the work are "host calls" threads of the device's process, and
// simulator launches, which may overlap, are spread over as many
// "launches" threads as needed. Times are microseconds since the profile
// began. traceEvents comes last so that a file can be extended in place:
// new events go where the closing part starts, and the closing part is
// written again after them.

// traceEvent is one entry of traceEvents.
type traceEvent struct {
	Name string         `json:"name"`
	Cat  string         `json:"cat,omitempty"`
	Ph   string         `json:"ph"`
	Ts   float64        `json:"ts"`
	Dur  *float64       `json:"dur,omitempty"`
	Pid  int            `json:"pid"`
	Tid  int            `json:"tid"`
	S    string         `json:"s,omitempty"`
	Args map[string]any `json:"args,omitempty"`
}

// eventArgs are the args of a device event: enough to rebuild the Event.
type eventArgs struct {
	ID      int      `json:"id"`
	Device  string   `json:"device"`
	Stream  string   `json:"stream,omitempty"`
	Grid    *[3]int  `json:"grid,omitempty"`
	Block   *[3]int  `json:"block,omitempty"`
	Shared  int      `json:"shared,omitempty"`
	Bytes   int64    `json:"bytes,omitempty"`
	GBps    *float64 `json:"GB/s,omitempty"`
	HostTs  float64  `json:"host_ts"`
	HostDur float64  `json:"host_dur"`
	Failed  bool     `json:"failed,omitempty"`
	Note    string   `json:"note,omitempty"`
}

type otherData struct {
	Producer string `json:"producer"`
	Began    string `json:"began"`
	Events   int    `json:"events"`
	Dropped  int    `json:"dropped"`
}

const traceHead = `{"displayTimeUnit":"ns","traceEvents":[`

// encoder turns Events into trace events, keeping the process, thread and
// lane numbering stable from one batch to the next.
type encoder struct {
	n     int // events encoded
	pids  map[string]int
	tids  map[[2]string]int     // (device, thread name) -> tid
	lanes map[[2]string][]int64 // (device, track) -> end (ns) of each lane
	first bool                  // nothing written yet
}

func newEncoder() *encoder {
	return &encoder{pids: map[string]int{}, tids: map[[2]string]int{}, lanes: map[[2]string][]int64{}, first: true}
}

func us(d time.Duration) float64 { return float64(d) / 1e3 }

// encode appends the trace events of evs (in start order) to b.
func (c *encoder) encode(b *bytes.Buffer, evs []Event, devices map[string]string) error {
	order := make([]int, len(evs))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(i, j int) int { return cmp.Compare(evs[i].HostStart, evs[j].HostStart) })
	var out []traceEvent
	base := c.n // events encoded before: the id of evs[i] is its index in the profile
	for _, i := range order {
		out = c.event(out, &evs[i], base+i, devices)
	}
	c.n += len(evs)
	for _, te := range out {
		js, err := json.Marshal(te)
		if err != nil {
			return err
		}
		if !c.first {
			b.WriteString(",\n")
		} else {
			b.WriteString("\n")
		}
		c.first = false
		b.Write(js)
	}
	return nil
}

func (c *encoder) pid(dev string, devices map[string]string, out []traceEvent) (int, []traceEvent) {
	if p, ok := c.pids[dev]; ok {
		return p, out
	}
	p := len(c.pids) + 1
	c.pids[dev] = p
	name := dev
	if d := devices[dev]; d != "" {
		name += " " + d
	}
	out = append(out, traceEvent{Name: "process_name", Ph: "M", Pid: p, Args: map[string]any{"name": name}},
		traceEvent{Name: "process_sort_index", Ph: "M", Pid: p, Args: map[string]any{"sort_index": p}})
	return p, out
}

func (c *encoder) tid(dev string, pid int, thread string, order int, out []traceEvent) (int, []traceEvent) {
	k := [2]string{dev, thread}
	if t, ok := c.tids[k]; ok {
		return t, out
	}
	t := len(c.tids) + 1
	c.tids[k] = t
	out = append(out, traceEvent{Name: "thread_name", Ph: "M", Pid: pid, Tid: t, Args: map[string]any{"name": thread}},
		traceEvent{Name: "thread_sort_index", Ph: "M", Pid: pid, Tid: t, Args: map[string]any{"sort_index": order}})
	return t, out
}

// lane returns the first lane of a track free at start, and marks it busy
// until end.
func (c *encoder) lane(dev, track string, start, end time.Duration) int {
	k := [2]string{dev, track}
	ends := c.lanes[k]
	for i, e := range ends {
		if int64(start) >= e {
			ends[i] = int64(end)
			return i
		}
	}
	c.lanes[k] = append(ends, int64(end))
	return len(ends)
}

func laneName(track string, lane int) string {
	if lane == 0 {
		return track
	}
	return fmt.Sprintf("%s (%d)", track, lane+1)
}

func (c *encoder) event(out []traceEvent, e *Event, id int, devices map[string]string) []traceEvent {
	dev := e.Device
	if dev == "" {
		dev = "unknown device"
	}
	pid, out := c.pid(dev, devices, out)
	args := eventArgs{ID: id, Device: e.Device, Stream: e.Stream, Shared: e.Shared, Bytes: e.Bytes,
		HostTs: us(e.HostStart), HostDur: us(e.HostDuration), Failed: e.Failed, Note: e.Note}
	if e.Kind == "kernel" || e.Kind == SimKernel {
		g, bl := e.Grid, e.Block
		args.Grid, args.Block = &g, &bl
	}
	if e.Bytes > 0 && e.Timed && e.Duration > 0 {
		r := math.Round(float64(e.Bytes)/e.Duration.Seconds()/1e6) / 1e3
		args.GBps = &r
	}
	var tid int
	if e.Kind == SimKernel {
		l := c.lane(dev, "launches", e.Start, e.Start+e.Duration)
		tid, out = c.tid(dev, pid, laneName("launches", l), l, out)
	} else {
		tid, out = c.tid(dev, pid, "stream "+e.Stream, 0, out)
	}
	te := traceEvent{Name: e.Name, Cat: e.Kind, Pid: pid, Tid: tid, Args: argsMap(args)}
	if e.Timed {
		d := us(e.Duration)
		te.Ph, te.Ts, te.Dur = "X", us(e.Start), &d
	} else {
		te.Ph, te.Ts, te.S = "i", us(e.HostStart), "t"
	}
	out = append(out, te)
	if e.Kind != SimKernel { // the call on the CPU that queued the work
		l := c.lane(dev, "host calls", e.HostStart, e.HostStart+e.HostDuration)
		htid, o := c.tid(dev, pid, laneName("host calls", l), 1000+l, out)
		out = o
		d := us(e.HostDuration)
		out = append(out, traceEvent{Name: hostCall(e), Cat: "host", Ph: "X", Ts: us(e.HostStart), Dur: &d, Pid: pid, Tid: htid,
			Args: map[string]any{"id": id, "op": e.Name}})
	}
	return out
}

func argsMap(a eventArgs) map[string]any {
	js, _ := json.Marshal(a)
	var m map[string]any
	json.Unmarshal(js, &m)
	return m
}

// hostCall names the driver call behind an event.
func hostCall(e *Event) string {
	switch e.Kind {
	case "kernel":
		return "cuLaunchKernel"
	case "graph":
		return "cuGraphLaunch"
	case "memcpy HtoD":
		return "cuMemcpyHtoD"
	case "memcpy DtoH":
		return "cuMemcpyDtoH"
	case "memcpy DtoD":
		return "cuMemcpyDtoD"
	case "memset":
		return "cuMemset"
	}
	return e.Kind
}

func (p *Profile) tail() []byte {
	js, _ := json.Marshal(otherData{Producer: "gocu prof", Began: p.Began.Format(time.RFC3339Nano), Events: len(p.Events), Dropped: p.Dropped})
	return []byte("\n],\"otherData\":" + string(js) + "}\n")
}

// WriteTrace writes the profile as a Chrome trace (JSON), which Perfetto
// (ui.perfetto.dev) and chrome://tracing open.
func (p *Profile) WriteTrace(w io.Writer) error {
	var b bytes.Buffer
	b.WriteString(traceHead)
	if err := newEncoder().encode(&b, p.Events, p.Devices); err != nil {
		return err
	}
	b.Write(p.tail())
	_, err := w.Write(b.Bytes())
	return err
}

// WriteFile writes the Chrome trace to a file, atomically: a reader sees
// the old file or the whole new one.
func (p *Profile) WriteFile(path string) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	bw := bufio.NewWriter(tmp)
	err = p.WriteTrace(bw)
	if err == nil {
		err = bw.Flush()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		os.Remove(tmp.Name())
	}
	return err
}

// traceFile is a trace file kept up to date while profiling runs.
type traceFile struct {
	f       *os.File
	enc     *encoder
	tailAt  int64 // where the closing part starts
	dropped int   // Profile.Dropped when last written
	written bool
}

func createTraceFile(path string, began time.Time) (*traceFile, error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("prof: trace file: %w", err)
	}
	t := &traceFile{f: f, enc: newEncoder(), tailAt: int64(len(traceHead))}
	if _, err := f.WriteString(traceHead); err != nil {
		f.Close()
		return nil, err
	}
	return t, t.update(newProfile(began))
}

// update appends the events of p not written yet and writes the closing
// part again after them.
func (t *traceFile) update(p *Profile) error {
	if t.f == nil {
		return errClosed
	}
	if t.written && t.enc.n == len(p.Events) && t.dropped == p.Dropped {
		return nil // nothing new
	}
	t.written, t.dropped = true, p.Dropped
	var b bytes.Buffer
	if t.enc.n < len(p.Events) {
		if err := t.enc.encode(&b, p.Events[t.enc.n:], p.Devices); err != nil {
			return err
		}
	}
	at := t.tailAt + int64(b.Len())
	b.Write(p.tail())
	if _, err := t.f.WriteAt(b.Bytes(), t.tailAt); err != nil {
		return fmt.Errorf("prof: writing the trace: %w", err)
	}
	if err := t.f.Truncate(t.tailAt + int64(b.Len())); err != nil {
		return fmt.Errorf("prof: writing the trace: %w", err)
	}
	t.tailAt = at
	return nil
}

func (t *traceFile) close() error {
	if t.f == nil {
		return nil
	}
	err := t.f.Close()
	t.f = nil
	return err
}

// ReadTrace reads a Chrome trace written by this package (by WriteTrace,
// WriteFile or GOCU_PROFILE) back into a Profile, for its summary.
//
// It reads at most MaxTraceBytes; names in the trace are made printable
// (control characters, such as a terminal's escape sequences, are shown
// escaped), since the summary prints them on a terminal.
func ReadTrace(r io.Reader) (*Profile, error) {
	br := bufio.NewReader(io.LimitReader(r, MaxTraceBytes+1))
	for {
		// The first byte that is not a space says whether this is JSON at
		// all: /dev/zero or a huge sparse file is refused at once.
		c, err := br.ReadByte()
		if err == io.EOF {
			return nil, errors.New("prof: empty trace file")
		}
		if err != nil {
			return nil, err
		}
		if c == ' ' || c == '\t' || c == '\n' || c == '\r' {
			continue
		}
		if c != '{' && c != '[' {
			return nil, fmt.Errorf("prof: not a Chrome trace: it starts with %q, not a JSON object or array", c)
		}
		_ = br.UnreadByte()
		break
	}
	data, err := io.ReadAll(br)
	if err != nil {
		return nil, err
	}
	if len(data) > MaxTraceBytes {
		return nil, fmt.Errorf("prof: the trace is longer than %s, more than any profile gocu writes (at most %d events by default)", FormatBytes(MaxTraceBytes), defaultMaxEvents)
	}
	var doc struct {
		TraceEvents []traceEvent `json:"traceEvents"`
		OtherData   *otherData   `json:"otherData"`
	}
	trimmed := bytes.TrimSpace(data)
	switch {
	case len(trimmed) == 0:
		return nil, errors.New("prof: empty trace file")
	case trimmed[0] == '[': // JSON array form, possibly cut short
		s := strings.TrimRight(string(trimmed), ", \n\t")
		if !strings.HasSuffix(s, "]") {
			s += "]"
		}
		err = json.Unmarshal([]byte(s), &doc.TraceEvents)
	case trimmed[0] == '{':
		err = json.Unmarshal(trimmed, &doc)
		if err == nil && doc.TraceEvents == nil {
			err = errors.New(`the object has no "traceEvents"`)
		}
	default:
		err = errors.New("want a JSON object with traceEvents, or a JSON array of events")
	}
	if err != nil {
		return nil, fmt.Errorf("prof: not a Chrome trace: %w", err)
	}
	p := newProfile(time.Time{})
	if doc.OtherData != nil {
		p.Began, _ = time.Parse(time.RFC3339Nano, doc.OtherData.Began)
		p.Dropped = doc.OtherData.Dropped
	}
	names := map[int]string{}
	for _, te := range doc.TraceEvents {
		if te.Ph == "M" && te.Name == "process_name" {
			if n, ok := te.Args["name"].(string); ok {
				names[te.Pid] = n
			}
		}
	}
	var total time.Duration
	for i, te := range doc.TraceEvents {
		if (te.Ph != "X" && te.Ph != "i") || te.Cat == "host" || te.Cat == "" {
			continue
		}
		js, _ := json.Marshal(te.Args)
		var a eventArgs
		if err := json.Unmarshal(js, &a); err != nil {
			return nil, fmt.Errorf("prof: event %d (%q): %w", i, te.Name, err)
		}
		if err := checkEvent(&te, &a); err != nil {
			return nil, fmt.Errorf("prof: event %d (%q, %s): %w", i, te.Name, te.Cat, err)
		}
		if te.Dur != nil {
			if total += fromUs(*te.Dur); total > maxTraceTime {
				return nil, fmt.Errorf("prof: event %d (%q, %s): the durations add up to more than %v", i, te.Name, te.Cat, maxTraceTime)
			}
		}
		e := Event{Name: printable(te.Name), Kind: printable(te.Cat), Device: printable(a.Device), Stream: printable(a.Stream), Shared: a.Shared, Bytes: a.Bytes,
			HostStart: fromUs(a.HostTs), HostDuration: fromUs(a.HostDur), Failed: a.Failed, Note: printable(a.Note)}
		if a.Grid != nil {
			e.Grid = *a.Grid
		}
		if a.Block != nil {
			e.Block = *a.Block
		}
		if te.Ph == "X" && te.Dur != nil {
			e.Timed, e.Start, e.Duration = true, fromUs(te.Ts), fromUs(*te.Dur)
		}
		if n := names[te.Pid]; n != "" && e.Device != "" {
			p.Devices[e.Device] = strings.TrimSpace(strings.TrimPrefix(printable(n), e.Device))
		}
		p.add(e, math.MaxInt)
	}
	return p, nil
}

// MaxTraceBytes bounds what ReadTrace reads: a trace of the most events a
// profile keeps is far smaller.
const MaxTraceBytes = 1 << 30

// printable returns s with control characters, bidirectional controls and
// invalid UTF-8 escaped as Go writes them in quoted strings, so that a
// crafted trace cannot move a terminal's cursor or recolour its text.
func printable(s string) string {
	bad := func(i int, r rune) bool {
		invalid := r == utf8.RuneError && !strings.HasPrefix(s[i:], "\uFFFD")
		return invalid || unicode.IsControl(r) || unicode.Is(unicode.Bidi_Control, r)
	}
	clean := true
	for i, r := range s {
		if bad(i, r) {
			clean = false
			break
		}
	}
	if clean {
		return s
	}
	var b strings.Builder
	for i, r := range s {
		switch {
		case r == utf8.RuneError && bad(i, r):
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case unicode.IsControl(r) || unicode.Is(unicode.Bidi_Control, r):
			q := strconv.QuoteRuneToASCII(r)
			b.WriteString(q[1 : len(q)-1])
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// maxTraceTime bounds every time in a trace, and the sum of the durations:
// a year, far beyond any profile, and far below time.Duration's limit, so
// that totals cannot overflow.
const maxTraceTime = 365 * 24 * time.Hour

// checkEvent refuses times that no profile contains: negative, not
// finite, or beyond maxTraceTime; and negative sizes and launch shapes.
func checkEvent(te *traceEvent, a *eventArgs) error {
	times := []struct {
		name string
		v    *float64
	}{{"ts", &te.Ts}, {"dur", te.Dur}, {"host_ts", &a.HostTs}, {"host_dur", &a.HostDur}}
	for _, t := range times {
		if t.v == nil {
			continue
		}
		switch v := *t.v; {
		case math.IsNaN(v) || math.IsInf(v, 0):
			return fmt.Errorf("%s is %v", t.name, v)
		case v < 0:
			return fmt.Errorf("%s %v µs is negative", t.name, v)
		case v > us(maxTraceTime):
			return fmt.Errorf("%s %v µs is beyond any profile (at most %v)", t.name, v, maxTraceTime)
		}
	}
	if a.Bytes < 0 || a.Shared < 0 {
		return fmt.Errorf("negative size (bytes %d, shared %d)", a.Bytes, a.Shared)
	}
	for _, d := range []*[3]int{a.Grid, a.Block} {
		if d != nil && (d[0] < 0 || d[1] < 0 || d[2] < 0) {
			return fmt.Errorf("negative launch shape %v", *d)
		}
	}
	return nil
}

func fromUs(v float64) time.Duration { return time.Duration(math.Round(v * 1e3)) }
