package prof_test

import (
	"bytes"
	"reflect"
	"testing"

	"github.com/gocu-dev/gocu/prof"
)

// FuzzReadMemoryHistory feeds memory history files to their reader
// (gocu prof memory reads them). It must never panic; what it accepts
// must hold only sane sizes and times and must survive WriteTrace and
// ReadMemoryHistory unchanged.
func FuzzReadMemoryHistory(f *testing.F) {
	head := `{"displayTimeUnit":"ns","traceEvents":[`
	alloc := `{"name":"alloc 512 B","cat":"memory","ph":"i","s":"t","ts":12.5,"pid":1,"tid":1,"args":{"kind":"alloc","device":"cuda:0","addr":"0x7f0000000000","bytes":512,"requested":500,"stream":"default","in_use":512,"reserved":2097152,"site":"main.go:9 (main.main)","stack":[{"func":"main.main","file":"main.go","line":9}]}}`
	counter := `{"name":"device memory","ph":"C","ts":12.5,"pid":1,"args":{"in use":512,"reserved":2097152}}`
	tail := `],"otherData":{"producer":"gocu memory history","began":"2026-11-28T17:00:00Z","events":1,"dropped":0}}`
	for _, s := range []string{
		head + counter + "," + alloc + tail,
		head + counter + "," + alloc, // cut short
		"[" + alloc + ",",
		head + `{"name":"x","cat":"memory","ph":"i","ts":1e300,"args":{"kind":"free","device":"d","addr":"0x1"}}` + tail,
		head + `{"name":"x","cat":"memory","ph":"i","ts":1,"args":{"kind":"free","device":"d","addr":"0x1","bytes":9223372036854775807}}` + tail,
		head + `{"name":"x","cat":"memory","ph":"i","ts":1,"args":{"kind":"free","device":"d","addr":"-0x1"}}` + tail,
		`{"traceEvents":[],"otherData":{"producer":"gocu memory history","dropped":-1}}`,
		"", "null", "[", "{}",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		h, err := prof.ReadMemoryHistory(bytes.NewReader(data))
		if err != nil {
			return
		}
		if h.Dropped < 0 {
			t.Fatalf("accepted %d dropped events", h.Dropped)
		}
		for i, e := range h.Events {
			if e.Time < 0 || e.Bytes < 0 || e.Requested < 0 || e.InUse < 0 || e.Reserved < 0 {
				t.Fatalf("event %d accepted with a negative time or size: %+v", i, e)
			}
		}
		var b bytes.Buffer
		if err := h.WriteTrace(&b); err != nil {
			t.Fatalf("WriteTrace of an accepted history: %v", err)
		}
		back, err := prof.ReadMemoryHistory(&b)
		if err != nil {
			t.Fatalf("its own trace refused: %v\n%s", err, b.Bytes())
		}
		if len(back.Events) != len(h.Events) || back.Dropped != h.Dropped {
			t.Fatalf("read back %d events (%d dropped), wrote %d (%d)", len(back.Events), back.Dropped, len(h.Events), h.Dropped)
		}
		for i := range h.Events {
			x, y := h.Events[i], back.Events[i]
			x.Time, y.Time = 0, 0 // microseconds in the file: checked by the unit tests
			if !reflect.DeepEqual(x, y) {
				t.Fatalf("event %d changed:\n%+v\n%+v", i, x, y)
			}
		}
	})
}
