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
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gocu-dev/gocu/cuda"
	"github.com/gocu-dev/gocu/internal/syncdebug"
	"github.com/gocu-dev/gocu/internal/units"
)

// EnvMemoryFile is the environment variable that records the memory
// history of a whole program: its value is the trace file to write (see
// the package documentation).
const EnvMemoryFile = "GOCU_MEMORY_HISTORY"

// MemoryOptions configure a memory history.
type MemoryOptions struct {
	// File, when set, receives the history as a Chrome trace: it is
	// created when recording starts, brought up to date every Interval
	// (always left a complete, valid trace), and completed by Flush and
	// StopMemoryHistory.
	File string
	// MaxEvents caps the events kept (default 1,000,000, a few hundred
	// bytes each with their stacks); later ones are counted as dropped.
	MaxEvents int
	// Interval is how often File is updated; default 100 ms.
	Interval time.Duration
}

// MemoryHistory is what a memory history recorded: every allocation and
// free of the devices' caching allocators, and every driver allocation
// they made or released, in order.
type MemoryHistory struct {
	Began   time.Time
	Events  []MemoryEvent
	Dropped int // events past MaxEvents, not kept
}

// MemoryEvent is one event of a memory history.
type MemoryEvent struct {
	// Kind is "alloc" or "free" (a block of the allocator), "segment
	// alloc" or "segment free" (memory obtained from or returned to the
	// driver).
	Kind      string
	Device    string // "cuda:0"
	Addr      uint64
	Bytes     int64  // the block's size (rounded up to a size class) or the segment's
	Requested int64  // alloc: the bytes asked for
	Stream    string // the stream the block is ordered on: "default" or its handle
	Time      time.Duration
	// InUse and Reserved are the device allocator's figures after the
	// event: bytes held by live blocks, and bytes obtained from the driver.
	InUse, Reserved int64
	// Site is the call that caused the event: the first frame of Stack
	// outside gocu's packages.
	Site  Frame
	Stack []Frame // innermost first, without the allocator's own frames
}

// Frame is one frame of a stack.
type Frame struct {
	Function string `json:"func"`
	File     string `json:"file"`
	Line     int    `json:"line"`
}

func (f Frame) String() string {
	if f.File == "" {
		return f.Function
	}
	return f.File + ":" + strconv.Itoa(f.Line) + " (" + f.Function + ")"
}

var memKinds = map[string]bool{"alloc": true, "free": true, "segment alloc": true, "segment free": true}

// Errors of RecordMemoryHistory and StopMemoryHistory.
var (
	ErrMemoryRunning    = errors.New("prof: a memory history is already being recorded")
	ErrMemoryNotRunning = errors.New("prof: no memory history is being recorded")
)

var (
	memMu  sync.Mutex // guards memCur
	memCur *memSession
)

// RecordMemoryHistory starts recording every device allocation and free
// with its size, stream, time and Go stack, like PyTorch's
// torch.cuda.memory._record_memory_history. Each allocation and free
// then costs a stack capture (about a microsecond); nothing is recorded
// and nothing is paid when it is off.
func RecordMemoryHistory(o MemoryOptions) error {
	memMu.Lock()
	defer memMu.Unlock()
	if memCur != nil {
		return ErrMemoryRunning
	}
	if o.MaxEvents <= 0 {
		o.MaxEvents = defaultMaxEvents
	}
	if o.Interval <= 0 {
		o.Interval = defaultInterval
	}
	s := &memSession{opts: o, began: time.Now(), quit: make(chan struct{}), done: make(chan struct{})}
	if o.File != "" {
		f, err := createMemFile(o.File, s.began)
		if err != nil {
			return err
		}
		s.file = f
	}
	memCur = s
	cuda.SetMemoryRecorder(s)
	go s.loop()
	return nil
}

// StopMemoryHistory stops recording and returns the history; it completes
// the File, if any.
func StopMemoryHistory() (*MemoryHistory, error) {
	memMu.Lock()
	s := memCur
	memCur = nil
	memMu.Unlock()
	if s == nil {
		return nil, ErrMemoryNotRunning
	}
	cuda.SetMemoryRecorder(nil)
	close(s.quit)
	<-s.done
	err := s.writeFile()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.file != nil {
		err = errors.Join(err, s.file.f.Close())
		s.file = nil
	}
	return s.history(0), errors.Join(err, s.err)
}

// MemorySnapshot returns the history recorded so far; recording goes on.
func MemorySnapshot() (*MemoryHistory, error) {
	memMu.Lock()
	s := memCur
	memMu.Unlock()
	if s == nil {
		return nil, ErrMemoryNotRunning
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.history(0), nil
}

// flushMemory brings the memory history's File up to date (Flush).
func flushMemory() error {
	memMu.Lock()
	s := memCur
	memMu.Unlock()
	if s == nil {
		return nil
	}
	return s.writeFile()
}

// memSession is one recording.
type memSession struct {
	opts  MemoryOptions
	began time.Time

	mu      sync.Mutex // guards the rest
	raw     []cuda.MemoryEvent
	dropped int
	file    *memFile
	err     error // the first error writing File

	quit, done chan struct{}
}

// RecordMemory implements cuda.MemoryRecorder.
func (s *memSession) RecordMemory(e *cuda.MemoryEvent) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.raw) >= s.opts.MaxEvents {
		s.dropped++
		return
	}
	s.raw = append(s.raw, *e) // e.Stack is the event's own
}

func (s *memSession) loop() {
	defer close(s.done)
	t := time.NewTicker(s.opts.Interval)
	defer t.Stop()
	for {
		select {
		case <-s.quit:
			return
		case <-t.C:
			if err := s.writeFile(); err != nil {
				s.mu.Lock()
				if s.err == nil {
					s.err = err
				}
				s.mu.Unlock()
			}
		}
	}
}

// history returns the events from the from'th on; s.mu is held.
func (s *memSession) history(from int) *MemoryHistory {
	h := &MemoryHistory{Began: s.began, Dropped: s.dropped, Events: make([]MemoryEvent, 0, len(s.raw)-from)}
	sym := symbolizer{}
	for _, e := range s.raw[from:] {
		stack := sym.stack(e.Stack)
		me := MemoryEvent{Kind: e.Kind.String(), Device: "cuda:" + strconv.Itoa(e.Device), Addr: uint64(e.Addr),
			Bytes: e.Bytes, Requested: e.Requested, Stream: streamHandle(e.Stream), Time: e.Time.Sub(s.began),
			InUse: e.InUse, Reserved: e.Reserved, Stack: stack}
		me.Time = max(me.Time, 0)
		me.Site = site(stack)
		h.Events = append(h.Events, me)
	}
	return h
}

func streamHandle(h uintptr) string {
	if h == 0 {
		return "default"
	}
	return fmt.Sprintf("%#x", h)
}

// symbolizer turns program counters into frames, remembering the stacks
// it has seen (a loop allocates from one stack many times).
type symbolizer map[string][]Frame

func (c symbolizer) stack(pcs []uintptr) []Frame {
	var key strings.Builder
	for _, pc := range pcs {
		key.WriteString(strconv.FormatUint(uint64(pc), 36))
		key.WriteByte(' ')
	}
	if fs, ok := c[key.String()]; ok {
		return fs
	}
	var out []Frame
	frames := runtime.CallersFrames(pcs)
	for {
		f, more := frames.Next()
		// The allocator's frames and the runtime's tell nothing.
		if f.Function != "" && !strings.HasPrefix(f.Function, "github.com/gocu-dev/gocu/cuda.") &&
			!strings.HasPrefix(f.Function, "runtime.") {
			out = append(out, Frame{Function: f.Function, File: f.File, Line: f.Line})
		}
		if !more {
			break
		}
	}
	c[key.String()] = out
	return out
}

// site is the first frame outside gocu's library, else the outermost.
func site(stack []Frame) Frame {
	for _, f := range stack {
		if !syncdebug.Ours(f.Function, f.File) {
			return f
		}
	}
	if len(stack) > 0 {
		return stack[len(stack)-1]
	}
	return Frame{}
}

// writeFile brings File up to date.
func (s *memSession) writeFile() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.file == nil {
		return nil
	}
	if s.file.n == len(s.raw) && s.file.dropped == s.dropped && s.file.written {
		return nil
	}
	return s.file.update(s.history(s.file.n))
}

// The Chrome trace of a memory history (JSON object form):
//
//	{"displayTimeUnit":"ns","traceEvents":[
//	{"name":"process_name","ph":"M","pid":1,"args":{"name":"cuda:0 memory"}},
//	{"name":"device memory","ph":"C","ts":12.5,"pid":1,"args":{"in use":1024,"reserved":2097152}},
//	{"name":"alloc 1.00 KiB","cat":"memory","ph":"i","s":"t","ts":12.5,"pid":1,"tid":1,"args":{...}},
//	...
//	],"otherData":{"producer":"gocu memory history",...}}
//
// Each device is a process with a counter track of its memory in use and
// reserved, and instant events on two threads: the allocator's blocks
// and the driver's segments. An event's args carry what MemoryEvent
// holds, its stack included. traceEvents comes last so that the file can
// be extended in place, as the profiler's trace is.

const memProducer = "gocu memory history"

// memArgs are the args of a memory event.
type memArgs struct {
	Kind      string  `json:"kind"`
	Device    string  `json:"device"`
	Addr      string  `json:"addr"`
	Bytes     int64   `json:"bytes"`
	Requested int64   `json:"requested,omitempty"`
	Stream    string  `json:"stream,omitempty"`
	InUse     int64   `json:"in_use"`
	Reserved  int64   `json:"reserved"`
	Site      string  `json:"site,omitempty"`
	Stack     []Frame `json:"stack,omitempty"`
}

// memEncoder turns memory events into trace events, keeping the process
// numbering stable from one batch to the next.
type memEncoder struct {
	pids  map[string]int
	first bool
}

func (c *memEncoder) encode(b *bytes.Buffer, evs []MemoryEvent) error {
	var out []any
	for _, e := range evs {
		pid, ok := c.pids[e.Device]
		if !ok {
			pid = len(c.pids) + 1
			c.pids[e.Device] = pid
			out = append(out,
				traceEvent{Name: "process_name", Ph: "M", Pid: pid, Args: map[string]any{"name": e.Device + " memory"}},
				traceEvent{Name: "thread_name", Ph: "M", Pid: pid, Tid: 1, Args: map[string]any{"name": "allocator blocks"}},
				traceEvent{Name: "thread_name", Ph: "M", Pid: pid, Tid: 2, Args: map[string]any{"name": "driver segments"}})
		}
		ts := us(e.Time)
		out = append(out, traceEvent{Name: "device memory", Ph: "C", Ts: ts, Pid: pid,
			Args: map[string]any{"in use": e.InUse, "reserved": e.Reserved}})
		tid := 1
		if strings.HasPrefix(e.Kind, "segment") {
			tid = 2
		}
		a := memArgs{Kind: e.Kind, Device: e.Device, Addr: fmt.Sprintf("%#x", e.Addr), Bytes: e.Bytes, Requested: e.Requested,
			Stream: e.Stream, InUse: e.InUse, Reserved: e.Reserved, Stack: e.Stack}
		if e.Site != (Frame{}) {
			a.Site = e.Site.String()
		}
		out = append(out, struct {
			traceEvent
			Args memArgs `json:"args"`
		}{traceEvent{Name: e.Kind + " " + units.Bytes(e.Bytes), Cat: "memory", Ph: "i", S: "t", Ts: ts, Pid: pid, Tid: tid}, a})
	}
	for _, te := range out {
		js, err := json.Marshal(te)
		if err != nil {
			return err
		}
		if c.first {
			b.WriteString("\n")
		} else {
			b.WriteString(",\n")
		}
		c.first = false
		b.Write(js)
	}
	return nil
}

func memTail(began time.Time, events, dropped int) []byte {
	js, _ := json.Marshal(otherData{Producer: memProducer, Began: began.Format(time.RFC3339Nano), Events: events, Dropped: dropped})
	return []byte("\n],\"otherData\":" + string(js) + "}\n")
}

// WriteTrace writes the history as a Chrome trace (JSON), which Perfetto
// (ui.perfetto.dev) and chrome://tracing open: a counter track of the
// memory in use and reserved per device, and an instant event with its
// stack for each allocation and free.
func (h *MemoryHistory) WriteTrace(w io.Writer) error {
	var b bytes.Buffer
	b.WriteString(traceHead)
	if err := (&memEncoder{pids: map[string]int{}, first: true}).encode(&b, h.Events); err != nil {
		return err
	}
	b.Write(memTail(h.Began, len(h.Events), h.Dropped))
	_, err := w.Write(b.Bytes())
	return err
}

// WriteFile writes the Chrome trace to a file, atomically.
func (h *MemoryHistory) WriteFile(path string) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	bw := bufio.NewWriter(tmp)
	err = h.WriteTrace(bw)
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

// memFile is a history file kept up to date while recording runs.
type memFile struct {
	f       *os.File
	enc     *memEncoder
	began   time.Time
	tailAt  int64 // where the closing part starts
	n       int   // events written
	dropped int
	written bool
}

func createMemFile(path string, began time.Time) (*memFile, error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("prof: memory history file: %w", err)
	}
	m := &memFile{f: f, enc: &memEncoder{pids: map[string]int{}, first: true}, began: began, tailAt: int64(len(traceHead))}
	if _, err := f.WriteString(traceHead); err != nil {
		f.Close()
		return nil, err
	}
	return m, m.update(&MemoryHistory{Began: began})
}

// update appends the events of h (the ones not written yet) and writes the
// closing part again after them.
func (m *memFile) update(h *MemoryHistory) error {
	var b bytes.Buffer
	if err := m.enc.encode(&b, h.Events); err != nil {
		return err
	}
	at := m.tailAt + int64(b.Len())
	m.n += len(h.Events)
	m.dropped, m.written = h.Dropped, true
	b.Write(memTail(m.began, m.n, m.dropped))
	if _, err := m.f.WriteAt(b.Bytes(), m.tailAt); err != nil {
		return fmt.Errorf("prof: writing the memory history: %w", err)
	}
	if err := m.f.Truncate(m.tailAt + int64(b.Len())); err != nil {
		return fmt.Errorf("prof: writing the memory history: %w", err)
	}
	m.tailAt = at
	return nil
}

// maxMemBytes bounds every size in a history file: far beyond any device,
// far below int64's limit, so that sums cannot overflow.
const maxMemBytes = 1 << 56

// ReadMemoryHistory reads a memory history written by this package (by
// WriteTrace, WriteFile or GOCU_MEMORY_HISTORY), also one cut short.
func ReadMemoryHistory(r io.Reader) (*MemoryHistory, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, err
	}
	type memTrace struct {
		Name string          `json:"name"`
		Cat  string          `json:"cat"`
		Ph   string          `json:"ph"`
		Ts   float64         `json:"ts"`
		Args json.RawMessage `json:"args"`
	}
	var doc struct {
		TraceEvents []memTrace `json:"traceEvents"`
		OtherData   *otherData `json:"otherData"`
	}
	trimmed := bytes.TrimSpace(data)
	switch {
	case len(trimmed) == 0:
		return nil, errors.New("prof: empty memory history file")
	case trimmed[0] == '[': // JSON array form, possibly cut short
		s := strings.TrimRight(string(trimmed), ", \n\t")
		if !strings.HasSuffix(s, "]") {
			s += "]"
		}
		err = json.Unmarshal([]byte(s), &doc.TraceEvents)
	default:
		err = json.Unmarshal(trimmed, &doc)
	}
	if err != nil {
		return nil, fmt.Errorf("prof: not a Chrome trace: %w", err)
	}
	h := &MemoryHistory{}
	if doc.OtherData != nil {
		if doc.OtherData.Producer != memProducer {
			return nil, fmt.Errorf("prof: a trace of %q, not a memory history", doc.OtherData.Producer)
		}
		h.Began, _ = time.Parse(time.RFC3339Nano, doc.OtherData.Began)
		if doc.OtherData.Dropped < 0 {
			return nil, fmt.Errorf("prof: %d events dropped", doc.OtherData.Dropped)
		}
		h.Dropped = doc.OtherData.Dropped
	}
	for i, te := range doc.TraceEvents {
		if te.Ph != "i" || te.Cat != "memory" {
			continue
		}
		var a memArgs
		if err := json.Unmarshal(te.Args, &a); err != nil {
			return nil, fmt.Errorf("prof: event %d (%q): %w", i, te.Name, err)
		}
		e, err := memEvent(te.Ts, &a)
		if err != nil {
			return nil, fmt.Errorf("prof: event %d (%q): %w", i, te.Name, err)
		}
		h.Events = append(h.Events, e)
	}
	return h, nil
}

// memEvent checks the args of an event read back and makes its
// MemoryEvent.
func memEvent(ts float64, a *memArgs) (MemoryEvent, error) {
	switch {
	case math.IsNaN(ts) || math.IsInf(ts, 0) || ts < 0 || ts > us(maxTraceTime):
		return MemoryEvent{}, fmt.Errorf("time %v µs is not in a history (0 to %v)", ts, maxTraceTime)
	case !memKinds[a.Kind]:
		return MemoryEvent{}, fmt.Errorf("kind %q is not alloc, free, segment alloc or segment free", a.Kind)
	case a.Device == "":
		return MemoryEvent{}, errors.New("no device")
	}
	for _, v := range []struct {
		name string
		n    int64
	}{{"bytes", a.Bytes}, {"requested", a.Requested}, {"in_use", a.InUse}, {"reserved", a.Reserved}} {
		if v.n < 0 || v.n > maxMemBytes {
			return MemoryEvent{}, fmt.Errorf("%s %d is not a size (0 to 2^56)", v.name, v.n)
		}
	}
	addr, err := strconv.ParseUint(strings.TrimPrefix(a.Addr, "0x"), 16, 64)
	if err != nil {
		return MemoryEvent{}, fmt.Errorf("address %q: %w", a.Addr, err)
	}
	for _, f := range a.Stack {
		if f.Line < 0 {
			return MemoryEvent{}, fmt.Errorf("stack frame %v: negative line", f)
		}
	}
	e := MemoryEvent{Kind: a.Kind, Device: a.Device, Addr: addr, Bytes: a.Bytes, Requested: a.Requested, Stream: a.Stream,
		Time: fromUs(ts), InUse: a.InUse, Reserved: a.Reserved, Stack: a.Stack}
	if len(e.Stack) == 0 {
		e.Stack = nil // "stack":[] and no stack are one thing
	}
	e.Site = site(a.Stack)
	return e, nil
}

// MemoryPeak describes one device's memory in a history: its peaks, and
// the call sites of the blocks live at the peak of memory in use.
type MemoryPeak struct {
	Device          string
	Allocs, Frees   int
	Segments        int // driver allocations made
	PeakInUse       int64
	PeakAt          time.Duration
	PeakReserved    int64
	InUse, Reserved int64        // after the last event
	Sites           []MemorySite // live at the peak, by bytes, largest first
}

// MemorySite is the blocks one call site holds.
type MemorySite struct {
	Site   Frame
	Blocks int
	Bytes  int64
}

// Peaks returns each device's MemoryPeak, in the order the devices first
// appear.
func (h *MemoryHistory) Peaks() []MemoryPeak {
	var out []MemoryPeak
	idx := map[string]int{}
	peakEvent := map[string]int{}
	for i, e := range h.Events {
		j, ok := idx[e.Device]
		if !ok {
			j = len(out)
			idx[e.Device] = j
			out = append(out, MemoryPeak{Device: e.Device})
			peakEvent[e.Device] = -1
		}
		p := &out[j]
		switch e.Kind {
		case "alloc":
			p.Allocs++
		case "free":
			p.Frees++
		case "segment alloc":
			p.Segments++
		}
		if e.InUse > p.PeakInUse || peakEvent[e.Device] < 0 {
			p.PeakInUse, p.PeakAt, peakEvent[e.Device] = e.InUse, e.Time, i
		}
		p.PeakReserved = max(p.PeakReserved, e.Reserved)
		p.InUse, p.Reserved = e.InUse, e.Reserved
	}
	// Replay each device up to its peak: the blocks live there.
	type live struct {
		site  Frame
		bytes int64
	}
	lives := map[string]map[uint64]live{}
	for i, e := range h.Events {
		if i > peakEvent[e.Device] {
			continue
		}
		m := lives[e.Device]
		if m == nil {
			m = map[uint64]live{}
			lives[e.Device] = m
		}
		switch e.Kind {
		case "alloc":
			m[e.Addr] = live{e.Site, e.Bytes}
		case "free":
			delete(m, e.Addr)
		}
	}
	for j := range out {
		bySite := map[Frame]*MemorySite{}
		for _, l := range lives[out[j].Device] {
			s := bySite[l.site]
			if s == nil {
				s = &MemorySite{Site: l.site}
				bySite[l.site] = s
			}
			s.Blocks++
			s.Bytes += l.bytes
		}
		for _, s := range bySite {
			out[j].Sites = append(out[j].Sites, *s)
		}
		slices.SortFunc(out[j].Sites, func(a, b MemorySite) int {
			if c := cmp.Compare(b.Bytes, a.Bytes); c != 0 {
				return c
			}
			return cmp.Compare(a.Site.String(), b.Site.String())
		})
	}
	return out
}

// WriteSummary writes each device's peaks and the call sites holding the
// most memory at the peak of memory in use (at most top of them).
func (h *MemoryHistory) WriteSummary(w io.Writer, top int) error {
	var b strings.Builder
	if h.Dropped > 0 {
		fmt.Fprintf(&b, "%d events were dropped (past MaxEvents): the figures below are incomplete\n", h.Dropped)
	}
	for _, p := range h.Peaks() {
		fmt.Fprintf(&b, "%s: %d allocations, %d frees, %d driver allocations\n", p.Device, p.Allocs, p.Frees, p.Segments)
		fmt.Fprintf(&b, "  peak in use %s at %v, peak reserved %s; at the end %s in use, %s reserved\n",
			units.Bytes(p.PeakInUse), p.PeakAt.Round(time.Microsecond), units.Bytes(p.PeakReserved), units.Bytes(p.InUse), units.Bytes(p.Reserved))
		if len(p.Sites) > 0 {
			fmt.Fprintf(&b, "  live at the peak, by call site:\n")
		}
		for i, s := range p.Sites {
			if i == top {
				fmt.Fprintf(&b, "  ... %d more call sites\n", len(p.Sites)-top)
				break
			}
			name := s.Site.String()
			if name == "" {
				name = "(no stack)"
			}
			fmt.Fprintf(&b, "  %10s in %5d blocks  %s\n", units.Bytes(s.Bytes), s.Blocks, name)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}
