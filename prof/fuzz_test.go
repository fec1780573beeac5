package prof_test

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"
	"unicode"

	"github.com/gocu-dev/gocu/prof"
)

// FuzzReadTrace feeds Chrome traces to gocu prof's reader. It must never
// panic; what it accepts must have sane totals (no negative or overflowing
// time, shares that add up to 100%) and must survive WriteTrace and
// ReadTrace unchanged. Huge and negative times are in the seeds. The corpus
// is testdata/fuzz/FuzzReadTrace.
func FuzzReadTrace(f *testing.F) {
	ev := `{"name":%q,"cat":%q,"ph":"X","ts":%s,"dur":%s,"pid":1,"tid":1,"args":{"id":0,"device":%q,"stream":"default","host_ts":1,"host_dur":2,"bytes":%s}}`
	for _, c := range [][6]string{
		{"Gray", "kernel", "10", "5", "cuda:0", "0"},
		{"memcpy HtoD", "memcpy HtoD", "0", "1e308", "cuda:0", "1048576"},
		{"k", "kernel", "-1", "-5", "cuda:0", "-1"},
		{"k", "sim kernel", "9e18", "9e18", "sim", "9223372036854775807"},
		{"k", "kernel", "1e-300", "4.9e-324", "cuda:0", "0"},
	} {
		f.Add(traceOf(fmt.Sprintf(ev, c[0], c[1], c[2], c[3], c[4], c[5])))
	}
	f.Add(traceOf(kernelEvent("A", "10", "100"), kernelEvent("B", "20", "100")))
	f.Add(`[` + kernelEvent("A", "1", "2") + `,`)
	f.Add(`{"traceEvents":[{"name":"process_name","ph":"M","pid":1,"args":{"name":"cuda:0 H100"}}],"otherData":{"dropped":-5}}`)
	f.Add(traceOf(fmt.Sprintf(ev, "\x1b[2J\x1b]0;pwned\x07", "kernel\u202e", "10", "5", "cuda:0\x9b", "0")))
	f.Add("null")
	f.Fuzz(func(t *testing.T, s string) {
		p, err := prof.ReadTrace(strings.NewReader(s))
		if err != nil {
			return
		}
		for _, r := range p.Table() {
			if r != '\n' && (unicode.IsControl(r) || unicode.Is(unicode.Bidi_Control, r)) {
				t.Fatalf("the table holds %U:\n%q", r, p.Table())
			}
		}
		var total time.Duration
		share := 0.0
		for _, r := range p.Summary() {
			if r.Total < 0 || r.Min < 0 || r.Max < r.Min && r.Calls > r.Untimed || r.Host < 0 || r.Bytes < 0 {
				t.Fatalf("row %+v", r)
			}
			total += r.Total
			share += r.Percent
		}
		if total < 0 {
			t.Fatalf("total %v", total)
		}
		if total > 0 && (share < 99.9 || share > 100.1) {
			t.Fatalf("shares add up to %v%%", share)
		}
		var buf bytes.Buffer
		if err := p.WriteTrace(&buf); err != nil {
			t.Fatalf("WriteTrace of an accepted trace: %v", err)
		}
		back, err := prof.ReadTrace(&buf)
		if err != nil {
			t.Fatalf("ReadTrace of what WriteTrace wrote: %v\n%s", err, buf.String())
		}
		if a, b := p.Table(), back.Table(); a != b {
			t.Fatalf("the summary changed through WriteTrace:\n%s\n%s", a, b)
		}
	})
}
