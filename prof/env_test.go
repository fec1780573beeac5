package prof_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gocu-dev/gocu/prof"
)

// TestEnvHelper is the program the GOCU_PROFILE tests run in a child
// process: the test binary itself, so that prof's init sees the variable.
func TestEnvHelper(t *testing.T) {
	mode := os.Getenv("PROF_TEST_MODE")
	if mode == "" {
		t.Skip("helper process for TestEnvProfile")
	}
	if !prof.Running() {
		t.Fatal("GOCU_PROFILE is set but profiling did not start")
	}
	for range 10 {
		grayLaunch(t, 4096)
	}
	switch mode {
	case "flush":
		if err := prof.Flush(); err != nil {
			t.Fatal(err)
		}
	case "stop":
		if _, err := prof.Stop(); err != nil {
			t.Fatal(err)
		}
	case "wait":
		time.Sleep(500 * time.Millisecond) // a few collector ticks, then exit without Flush
	case "exit":
		os.Exit(0) // at once: whatever the last tick wrote must still be a valid trace
	}
}

func TestEnvProfile(t *testing.T) {
	if testing.Short() {
		t.Skip("runs child processes")
	}
	exe, err := os.Executable()
	if err != nil {
		t.Skip(err)
	}
	for _, tc := range []struct {
		mode   string
		events int // -1: any number
	}{{"flush", 10}, {"stop", 10}, {"wait", 10}, {"exit", -1}} {
		t.Run(tc.mode, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "out.json")
			cmd := exec.Command(exe, "-test.run=^TestEnvHelper$", "-test.count=1")
			cmd.Env = append(os.Environ(), prof.EnvFile+"="+path, "PROF_TEST_MODE="+tc.mode)
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("child: %v\n%s", err, out)
			}
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("GOCU_PROFILE wrote no file: %v", err)
			}
			var doc struct {
				TraceEvents []map[string]any `json:"traceEvents"`
				OtherData   map[string]any   `json:"otherData"`
			}
			if err := json.Unmarshal(data, &doc); err != nil {
				t.Fatalf("the trace file is not valid JSON: %v\n%s", err, data)
			}
			p, err := prof.ReadTrace(strings.NewReader(string(data)))
			if err != nil {
				t.Fatal(err)
			}
			if tc.events >= 0 && len(p.Events) != tc.events {
				t.Fatalf("the trace holds %d events, want %d:\n%s", len(p.Events), tc.events, data)
			}
			for _, e := range p.Events {
				if e.Name != "Gray" || e.Device != prof.SimDevice || !e.Timed || e.Duration <= 0 {
					t.Errorf("event %+v", e)
				}
			}
			if doc.OtherData["events"] != float64(len(p.Events)) {
				t.Errorf("otherData says %v events, the file holds %d", doc.OtherData["events"], len(p.Events))
			}
		})
	}
}

func TestEnvBadPath(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a child process")
	}
	exe, err := os.Executable()
	if err != nil {
		t.Skip(err)
	}
	cmd := exec.Command(exe, "-test.run=^TestFormat$", "-test.count=1")
	cmd.Env = append(os.Environ(), prof.EnvFile+"="+filepath.Join(t.TempDir(), "missing", "out.json"))
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("a bad GOCU_PROFILE path must not stop the program: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "GOCU_PROFILE=") || !strings.Contains(string(out), "profiling not started") {
		t.Errorf("no warning about the bad GOCU_PROFILE path:\n%s", out)
	}
}

// TestEnvMemoryHelper is the child of TestEnvMemoryHistory.
func TestEnvMemoryHelper(t *testing.T) {
	if os.Getenv("PROF_TEST_MEMORY") == "" {
		t.Skip("helper process for TestEnvMemoryHistory")
	}
	if _, err := prof.MemorySnapshot(); err != nil {
		t.Fatalf("GOCU_MEMORY_HISTORY is set but no history is recorded: %v", err)
	}
	if err := prof.Flush(); err != nil {
		t.Fatal(err)
	}
}

// GOCU_MEMORY_HISTORY starts a memory history before main, whose file
// Flush completes.
func TestEnvMemoryHistory(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a child process")
	}
	exe, err := os.Executable()
	if err != nil {
		t.Skip(err)
	}
	path := filepath.Join(t.TempDir(), "mem.json")
	cmd := exec.Command(exe, "-test.run=^TestEnvMemoryHelper$", "-test.count=1")
	cmd.Env = append(os.Environ(), prof.EnvMemoryFile+"="+path, "PROF_TEST_MEMORY=1")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatalf("GOCU_MEMORY_HISTORY wrote no file: %v", err)
	}
	defer f.Close()
	if _, err := prof.ReadMemoryHistory(f); err != nil {
		t.Fatal(err)
	}
}
