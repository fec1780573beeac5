package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gocu-dev/gocu/cuda"
)

// run executes the gocu command line with args and returns its output.
func run(t *testing.T, args ...string) (string, error) {
	t.Helper()
	root := newRoot()
	var out bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&out)
	root.SetArgs(args)
	err := root.Execute()
	return out.String(), err
}

func TestDevices(t *testing.T) {
	out, err := run(t, "devices")
	if err != nil {
		t.Fatalf("gocu devices: %v\n%s", err, out)
	}
	if cuda.Available() {
		if !strings.Contains(out, "CUDA driver") || !strings.Contains(out, "sm_") && !strings.Contains(out, ".") {
			t.Errorf("gocu devices with a GPU printed:\n%s", out)
		}
	} else if strings.Count(out, "\n") != 3 || !strings.HasPrefix(out, "no CUDA GPU: ") {
		t.Errorf("gocu devices without a GPU must print one line starting 'no CUDA GPU: ', then cpu and sim, got:\n%s", out)
	} else if v, err := run(t, "devices", "-v"); err != nil || !strings.Contains(v, "places searched for libcuda.so.1:\n") || strings.Count(v, "\n") < 5 {
		t.Errorf("gocu devices -v without a GPU: %v\n%s", err, v)
	}
	if !strings.Contains(out, "\ncpu  the CPU") || !strings.Contains(out, "\nsim  the simulator") {
		t.Errorf("gocu devices lacks cpu and sim:\n%s", out)
	}
	out, err = run(t, "devices", "--json")
	if err != nil {
		t.Fatal(err)
	}
	var rep devicesReport
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("gocu devices --json is not JSON: %v\n%s", err, out)
	}
	if cuda.Available() != (len(rep.Devices) > 0) {
		t.Errorf("devices --json lists %d devices, driver available %v", len(rep.Devices), cuda.Available())
	}
	for _, d := range rep.Devices {
		if d.Name == "" || d.Multiprocessors <= 0 || d.TotalMemory <= 0 || d.FreeMemory <= 0 || d.MaxThreadsPerBlock < 1024 {
			t.Errorf("implausible device %+v", d)
		}
	}
}

func TestCache(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("GOCU_CACHE_DIR", dir)
	out, err := run(t, "cache", "info")
	if err != nil || !strings.Contains(out, "entries:  0") || !strings.Contains(out, "autotune: 0 choices") {
		t.Fatalf("gocu cache info: %v\n%s", err, out)
	}
	out, err = run(t, "cache", "clear")
	if err != nil || !strings.Contains(out, "removed 0 entries") || !strings.Contains(out, "removed 0 autotuning choices") {
		t.Fatalf("gocu cache clear: %v\n%s", err, out)
	}
	if _, err := run(t, "cache", "info", "extra"); err == nil {
		t.Error("gocu cache info extra: no error for an extra argument")
	}
	for _, args := range [][]string{{"cache", "bogus"}, {"completion", "bogus"}} {
		if out, err := run(t, args...); err == nil || !strings.Contains(err.Error(), `unknown command "bogus"`) {
			t.Errorf("gocu %v: %v\n%s", args, err, out)
		}
	}
	if out, err := run(t, "cache"); err != nil || !strings.Contains(out, "gocu cache info") {
		t.Errorf("gocu cache: %v\n%s", err, out)
	}
}

// gocu cache info leaves a shared directory's mode alone (a /tmp
// look-alike) and uses a private subdirectory of its own.
func TestCacheSharedDir(t *testing.T) {
	dir := t.TempDir()
	if err := os.Chmod(dir, 0o777|os.ModeSticky); err != nil {
		t.Fatal(err)
	}
	t.Setenv("GOCU_CACHE_DIR", dir)
	out, err := run(t, "cache", "info")
	if err != nil || !strings.Contains(out, filepath.Join(dir, "gocu-")) {
		t.Fatalf("gocu cache info: %v\n%s", err, out)
	}
	if st, _ := os.Stat(dir); st.Mode()&(os.ModePerm|os.ModeSticky) != 0o777|os.ModeSticky {
		t.Errorf("gocu cache info changed the shared directory's mode to %v", st.Mode())
	}
}

// gocu cache clear removes the autotuning choices too (the README says
// they live in the cache), and leaves other files alone.
func TestCacheClearsAutotuneChoices(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("GOCU_CACHE_DIR", dir)
	tune := filepath.Join(dir, "autotune")
	if err := os.MkdirAll(tune, 0o700); err != nil {
		t.Fatal(err)
	}
	choice := filepath.Join(tune, strings.Repeat("ab", 32)+".json")
	keep := filepath.Join(tune, "notes.txt")
	for _, f := range []string{choice, keep} {
		if err := os.WriteFile(f, []byte("{}\nsha256:00\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	out, err := run(t, "cache", "info")
	if err != nil || !strings.Contains(out, "autotune: 1 choices") || !strings.Contains(out, tune) {
		t.Fatalf("gocu cache info: %v\n%s", err, out)
	}
	out, err = run(t, "cache", "clear")
	if err != nil || !strings.Contains(out, "removed 1 autotuning choices from "+tune) {
		t.Fatalf("gocu cache clear: %v\n%s", err, out)
	}
	if _, err := os.Stat(choice); !os.IsNotExist(err) {
		t.Errorf("the autotuning choice survived gocu cache clear: %v", err)
	}
	if _, err := os.Stat(keep); err != nil {
		t.Errorf("gocu cache clear removed a file that is not a choice: %v", err)
	}
	root := newRoot()
	for _, c := range root.Commands() {
		if c.Name() == "cache" && !strings.Contains(c.Long, "autotune") {
			t.Errorf("gocu cache --help does not say that it holds the autotuning choices:\n%s", c.Long)
		}
	}
}

func TestHelpHasExamples(t *testing.T) {
	root := newRoot()
	for _, c := range root.Commands() {
		if c.Name() == "help" || c.Name() == "completion" {
			continue
		}
		if c.Example == "" && !c.HasSubCommands() {
			t.Errorf("gocu %s has no example in --help", c.Name())
		}
		for _, sub := range c.Commands() {
			if sub.Example == "" {
				t.Errorf("gocu %s %s has no example in --help", c.Name(), sub.Name())
			}
		}
	}
}
