package syncdebug

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// setMode sets the mode and a buffer for the warnings for one test.
func setMode(t *testing.T, m Mode) *bytes.Buffer {
	t.Helper()
	var b bytes.Buffer
	old, oldOut := Set(m), SetOutput(&b)
	t.Cleanup(func() { Set(old); SetOutput(oldOut) })
	return &b
}

func TestParse(t *testing.T) {
	for s, want := range map[string]Mode{"": Off, "off": Off, "0": Off, " WARN ": Warn, "1": Warn, "error": Error, "2": Error} {
		if m, err := Parse(s); err != nil || m != want {
			t.Errorf("Parse(%q) = %v, %v; want %v", s, m, err, want)
		}
	}
	if _, err := Parse("loud"); err == nil || !strings.Contains(err.Error(), "want off, warn or error") {
		t.Errorf("Parse(loud): %v", err)
	}
}

func TestSetGet(t *testing.T) {
	setMode(t, Warn)
	if !On() || Get() != Warn {
		t.Fatalf("after Set(Warn): On %v, Get %v", On(), Get())
	}
	if old := Set(Mode(9)); old != Warn || Get() != Warn {
		t.Fatalf("Set(9) returned %v and left %v; want Warn, Warn", old, Get())
	}
	Set(Off)
	if On() || Report(Read, "Item") != nil {
		t.Fatal("the off mode reports")
	}
}

func TestWarnNamesCallSite(t *testing.T) {
	b := setMode(t, Warn)
	_, file, line, _ := runtime.Caller(0)
	err := Report(Read, "Item") // the line after Caller's
	if err != nil {
		t.Fatal(err)
	}
	got := b.String()
	want := file + ":" + strconv.Itoa(line+1) + " (github.com/gocu-dev/gocu/internal/syncdebug.TestWarnNamesCallSite)"
	if !strings.Contains(got, want) || !strings.Contains(got, "Item waits for the device (a read to the host)") ||
		strings.Count(got, "\n") != 1 {
		t.Fatalf("warning %q, want one line naming %s", got, want)
	}
}

func TestWarnIsRateLimited(t *testing.T) {
	b := setMode(t, Warn)
	clock := time.Unix(1000, 0)
	now = func() time.Time { return clock }
	defer func() { now = time.Now }()
	for i := range 100 {
		Report(Copy, "CopyTo") // one call site
		if i == 49 {
			clock = clock.Add(Every)
		}
	}
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	if len(lines) != 2 || !strings.Contains(lines[1], "(and 49 more times in the last 5s)") {
		t.Fatalf("100 reports at one site, 5 s apart in the middle, wrote %q; want 2 lines, the second counting 49", lines)
	}
	Report(Copy, "CopyTo") // another site
	if n := strings.Count(b.String(), "\n"); n != 3 {
		t.Fatalf("a second call site was held back: %d lines", n)
	}
}

func TestErrorMode(t *testing.T) {
	b := setMode(t, Error)
	err := Report(PageableCopy, "CopyToAsync")
	var se *SyncError
	if !errors.Is(err, ErrHiddenSync) || !errors.As(err, &se) || se.Op != "CopyToAsync" || se.Kind != PageableCopy ||
		!strings.HasSuffix(se.Site.File, "syncdebug_test.go") {
		t.Fatalf("error mode: %v (%+v)", err, se)
	}
	if !strings.Contains(err.Error(), "CopyToAsync waits for the device (a copy into pageable memory) at ") {
		t.Errorf("message %q", err)
	}
	if b.Len() != 0 {
		t.Errorf("the error mode wrote %q", b)
	}
	// An out-of-memory retry is only warned about: refusing it would turn
	// a slow step into a failed one.
	if err := Report(OutOfMemory, "Alloc"); err != nil || !strings.Contains(b.String(), "an out-of-memory retry") {
		t.Errorf("out-of-memory retry in the error mode: %v, wrote %q", err, b)
	}
}

func TestOurs(t *testing.T) {
	for _, c := range []struct {
		fn, file string
		want     bool
	}{
		{"github.com/gocu-dev/gocu/array.(*Array).Item", "/src/gocu/array/host.go", true},
		{"github.com/gocu-dev/gocu.(*Buffer[...]).CopyTo", "/src/gocu/buffer.go", true},
		{"github.com/gocu-dev/gocu/array.ToSlice[...]", "/src/gocu/array/host.go", true},
		{"github.com/gocu-dev/gocu/array.TestItem", "/src/gocu/array/item_test.go", false},
		{"github.com/gocu-dev/gocu/examples/gray.main", "/src/gocu/examples/gray/main.go", false},
		{"github.com/gocu-dev/gocu/cmd/gocu.train", "/src/gocu/cmd/gocu/train.go", false},
		{"github.com/gocu-dev/gocuda.F", "/x.go", false},
		{"main.main", "/src/app/main.go", false},
	} {
		if got := Ours(c.fn, c.file); got != c.want {
			t.Errorf("Ours(%s) = %v", c.fn, got)
		}
	}
}

// The off mode costs the callers one atomic load and no allocation.
func TestOffAllocatesNothing(t *testing.T) {
	setMode(t, Off)
	if n := testing.AllocsPerRun(100, func() {
		if On() {
			Report(Read, "Item")
		}
	}); n != 0 {
		t.Fatalf("%v allocations with the mode off", n)
	}
}

// Every kind has its words in the reports; a data-dependent size, which no
// operation of this version has, is reported like the others.
func TestKinds(t *testing.T) {
	setMode(t, Error)
	for k, want := range map[Kind]string{Read: "a read to the host", Copy: "a copy that waits",
		PageableCopy: "a copy into pageable memory", DataSize: "a data-dependent size",
		Launch: "a launch with host buffers", Kind(99): "Kind(99)"} {
		err := Report(k, "Op")
		if !errors.Is(err, ErrHiddenSync) || !strings.Contains(err.Error(), "Op waits for the device ("+want+")") {
			t.Errorf("kind %d: %v", k, err)
		}
	}
}

// Reports from several goroutines at once (run with -race).
func TestConcurrentReports(t *testing.T) {
	b := setMode(t, Warn)
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 100 {
				Report(Read, "Item")
			}
		}()
	}
	wg.Wait()
	if n := strings.Count(b.String(), "\n"); n != 1 {
		t.Fatalf("400 reports at one site wrote %d lines, want 1", n)
	}
}

// TestEnvHelper is the child of TestEnv: it prints the mode that
// GOCU_SYNC_DEBUG set.
func TestEnvHelper(t *testing.T) {
	if os.Getenv("SYNCDEBUG_CHILD") == "" {
		t.Skip("helper process for TestEnv")
	}
	fmt.Printf("mode=%v\n", Get())
}

// GOCU_SYNC_DEBUG sets the mode before main; a bad value is reported and
// leaves it off.
func TestEnv(t *testing.T) {
	if testing.Short() {
		t.Skip("runs child processes")
	}
	exe, err := os.Executable()
	if err != nil {
		t.Skip(err)
	}
	for v, want := range map[string]string{"error": "mode=error", "warn": "mode=warn", "": "mode=off", "loud": "mode=off"} {
		cmd := exec.Command(exe, "-test.run=^TestEnvHelper$", "-test.count=1", "-test.v")
		cmd.Env = append(os.Environ(), EnvVar+"="+v, "SYNCDEBUG_CHILD=1")
		out, err := cmd.CombinedOutput()
		if err != nil || !strings.Contains(string(out), want) {
			t.Errorf("%s=%q: %v, %s; want %s", EnvVar, v, err, out, want)
		}
		if v == "loud" && !strings.Contains(string(out), `gocu: GOCU_SYNC_DEBUG: "loud" is not a mode`) {
			t.Errorf("no warning about a bad value:\n%s", out)
		}
	}
}
