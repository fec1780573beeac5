package prof_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/gocu-dev/gocu/prof"
)

// traceOf is a trace in the object form with the given events.
func traceOf(events ...string) string {
	return `{"displayTimeUnit":"ns","traceEvents":[` + strings.Join(events, ",") + `],"otherData":{"producer":"gocu prof","events":1}}`
}

// kernelEvent is a GPU kernel on the default stream of cuda:0.
func kernelEvent(name string, ts, dur string) string {
	return fmt.Sprintf(`{"name":%q,"cat":"kernel","ph":"X","ts":%s,"dur":%s,"pid":1,"tid":1,"args":{"id":0,"device":"cuda:0","stream":"default","host_ts":1,"host_dur":2}}`, name, ts, dur)
}

// ReadTrace (and so gocu prof) refuses times no profile contains, and
// files that are not one trace (two run together, garbage after one), with
// an error naming the event and the field, instead of printing nonsense
// totals.
func TestReadTraceRefusesGarbage(t *testing.T) {
	good := traceOf(kernelEvent("A", "10", "5"), kernelEvent("B", "16", "4"), kernelEvent("A", "21", "5"))
	p, err := prof.ReadTrace(strings.NewReader(good))
	if err != nil {
		t.Fatalf("a good trace: %v", err)
	}
	if rows := p.Summary(); len(rows) != 2 || rows[0].Name != "A" || rows[0].Total.Microseconds() != 10 {
		t.Fatalf("summary %+v", rows)
	}
	cases := []struct{ name, trace, want string }{
		{"negative dur", traceOf(kernelEvent("A", "10", "-5")), `prof: event 0 ("A", kernel): dur -5 µs is negative`},
		{"negative ts", traceOf(kernelEvent("A", "-10", "5")), `ts -10 µs is negative`},
		{"1e308 dur", traceOf(kernelEvent("A", "10", "1e308")), `dur 1e+308 µs is beyond any profile (at most 8760h0m0s)`},
		{"overflowing float", traceOf(kernelEvent("A", "10", "1e999")), `cannot unmarshal number 1e999`},
		{"NaN as a string", traceOf(kernelEvent("A", "10", `"NaN"`)), `not a Chrome trace`},
		{"huge host time", traceOf(strings.Replace(kernelEvent("A", "10", "5"), `"host_dur":2`, `"host_dur":1e300`, 1)), `host_dur 1e+300 µs is beyond any profile`},
		{"negative bytes", traceOf(strings.Replace(kernelEvent("A", "10", "5"), `"stream"`, `"bytes":-4,"stream"`, 1)), `negative size (bytes -4`},
		{"negative grid", traceOf(strings.Replace(kernelEvent("A", "10", "5"), `"stream"`, `"grid":[-1,1,1],"stream"`, 1)), `negative launch shape [-1 1 1]`},
		{"sum beyond a year", traceOf(kernelEvent("A", "0", "3e13"), kernelEvent("A", "0", "3e13")), `the durations add up to more than 8760h0m0s`},
		{"two traces run together", good + good, `not a Chrome trace`},
		{"garbage after the array form", `[` + kernelEvent("A", "1", "1") + `] xyz`, `not a Chrome trace`},
	}
	for _, c := range cases {
		_, err := prof.ReadTrace(strings.NewReader(c.trace))
		if err == nil {
			t.Errorf("%s: no error", c.name)
			continue
		}
		if !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %q lacks %q", c.name, err, c.want)
		}
	}
	// Operations overlap legitimately: simulator launches, and operations
	// that goroutines queue on one stream at once, whose event intervals
	// then include each other's work.
	if _, err := prof.ReadTrace(strings.NewReader(traceOf(kernelEvent("A", "10", "100"), kernelEvent("B", "20", "100")))); err != nil {
		t.Errorf("operations queued concurrently on one stream: %v", err)
	}
	sim := `{"name":"k","cat":"sim kernel","ph":"X","ts":%d,"dur":100,"pid":1,"tid":%d,"args":{"id":0,"device":"sim","host_ts":1,"host_dur":2}}`
	if _, err := prof.ReadTrace(strings.NewReader(traceOf(fmt.Sprintf(sim, 10, 1), fmt.Sprintf(sim, 20, 2)))); err != nil {
		t.Errorf("overlapping simulator launches: %v", err)
	}
}
