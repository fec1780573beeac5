package main

import (
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gocu-dev/gocu/prof"
)

// gocu prof memory prints a history's peaks and sites and draws its
// timeline.
func TestProfMemory(t *testing.T) {
	site := prof.Frame{Function: "main.step", File: "/app/main.go", Line: 7}
	var evs []prof.MemoryEvent
	var inUse int64
	for i := range 20 {
		kind, bytes := "alloc", int64(1<<20)
		if i%3 == 2 {
			kind = "free"
		}
		if kind == "alloc" {
			inUse += bytes
		} else {
			inUse -= bytes
		}
		evs = append(evs, prof.MemoryEvent{Kind: kind, Device: "cuda:0", Addr: uint64(0x1000 * (i - i%3)), Bytes: bytes,
			InUse: inUse, Reserved: 32 << 20, Time: time.Duration(i) * time.Millisecond, Site: site, Stack: []prof.Frame{site}})
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "mem.json")
	if err := (&prof.MemoryHistory{Began: time.Now(), Events: evs}).WriteFile(path); err != nil {
		t.Fatal(err)
	}
	img := filepath.Join(dir, "timeline.png")
	out, err := run(t, "prof", "memory", path, "-o", img)
	if err != nil {
		t.Fatalf("gocu prof memory: %v\n%s", err, out)
	}
	for _, want := range []string{"cuda:0: 14 allocations, 6 frees", "peak in use 8.00 MiB", "/app/main.go:7 (main.step)", "timeline: " + img} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	f, err := os.Open(img)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if cfg, err := png.DecodeConfig(f); err != nil || cfg.Width < 500 {
		t.Errorf("the timeline is not a PNG of some size: %v, %+v", err, cfg)
	}

	if _, err := run(t, "prof", "memory", filepath.Join(dir, "missing.json")); err == nil {
		t.Error("gocu prof memory of a missing file succeeded")
	}
	bad := filepath.Join(dir, "bad.json")
	os.WriteFile(bad, []byte(`{"traceEvents":[{"cat":"memory","ph":"i","ts":1,"args":{"kind":"leak"}}]}`), 0o644)
	if _, err := run(t, "prof", "memory", bad); err == nil || !strings.Contains(err.Error(), `kind "leak"`) {
		t.Errorf("gocu prof memory of a bad file: %v", err)
	}
	empty := filepath.Join(dir, "empty.json")
	if err := (&prof.MemoryHistory{}).WriteFile(empty); err != nil {
		t.Fatal(err)
	}
	if out, err := run(t, "prof", "memory", empty, "-o", img); err == nil || !strings.Contains(out, "no device memory was allocated") {
		t.Errorf("an empty history with -o: %v\n%s", err, out)
	}
}
