package main

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gocu-dev/gocu/internal/sample"
)

// The prefixes of gocu's packages that errors carry; the command adds its
// own "gocu: " unless the error starts with it.
var errPrefixes = []string{"gocu", "array", "sim", "nvrtc", "cuda", "cublas", "prof", "bench", "demo", "gen"}

// stutter returns the prefix said twice in line, or "".
func stutter(line string) string {
	for _, p := range errPrefixes {
		if strings.Count(line, p+": ") > 1 {
			return p
		}
	}
	f := strings.Split(line, ": ")
	for i := 1; i < len(f); i++ {
		if f[i] == f[i-1] {
			return f[i]
		}
	}
	return ""
}

// Every failing command line prints one error line on stderr that starts
// with "gocu: " once, says no package's prefix twice, and exits with
// status 1; some messages must say what really failed.
func TestErrorLinesDoNotStutter(t *testing.T) {
	exe := self(t)
	dir := t.TempDir()
	img := filepath.Join(dir, "in.png")
	if err := os.WriteFile(img, sample.PNG(), 0o644); err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(dir, "bad.json")
	if err := os.WriteFile(bad, []byte(`{"traceEvents":[{"name":"k","cat":"kernel","ph":"X","ts":1,"dur":-5,"pid":1,"tid":1,"args":{"id":0,"device":"cuda:0"}}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	notDir := filepath.Join(dir, "file")
	if err := os.WriteFile(notDir, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out.png")
	cases := []struct {
		env  []string
		args []string
		want []string // substrings of the line
		not  []string
	}{
		{[]string{"GOCU_DEVICE=bogus"}, []string{"demo"}, []string{`gocu: GOCU_DEVICE=bogus: unknown device "bogus": want cpu, sim, cuda or cuda:N`}, nil},
		{[]string{"GOCU_DEVICE=bogus"}, []string{"gray", img, out}, []string{"GOCU_DEVICE=bogus: unknown device"}, nil},
		{[]string{"GOCU_DEVICE=cuda:3"}, []string{"demo"}, []string{"GOCU_DEVICE=cuda:3: "}, nil},
		{nil, []string{"gray", "--device", "bogus", img, out}, []string{`unknown device "bogus"`}, nil},
		{nil, []string{"gray", img, "/proc/out.png"}, []string{"cannot write /proc/out.png: cannot create a file in /proc", "refuses new files"}, []string{"does not exist"}},
		{nil, []string{"gray", img, filepath.Join(dir, "nodir", "out.png")}, []string{"the directory " + filepath.Join(dir, "nodir") + " does not exist"}, nil},
		{nil, []string{"gray", img, filepath.Join(notDir, "out.png")}, []string{notDir + " is not a directory"}, nil},
		{nil, []string{"gray", filepath.Join(dir, "missing.png"), out}, []string{"no such file"}, nil},
		{nil, []string{"compile", filepath.Join(dir, "missing.cu")}, []string{"no such file"}, nil},
		{nil, []string{"prof", filepath.Join(dir, "missing.json")}, []string{"no such file"}, nil},
		{nil, []string{"prof", bad}, []string{"bad.json: prof: event 0 (\"k\", kernel): dur -5 µs is negative"}, nil},
		{nil, []string{"bench", "--device", "bogus"}, nil, nil},
		{nil, []string{"bench", "--device", "sim", "--only", "nope"}, []string{`no workload "nope"`}, nil},
		{[]string{"GOCU_SIM_TIMEOUT=soon"}, []string{"demo", "--device", "sim", "--size", "32", "-o", filepath.Join(dir, "d.png")}, []string{`GOCU_SIM_TIMEOUT="soon" is not a duration`}, nil},
		{[]string{"GOCU_CACHE_DIR=" + filepath.Join(notDir, "cache")}, []string{"cache", "clear"}, nil, nil},
		{nil, []string{"gen", filepath.Join(dir, "nopkg")}, []string{"gocu gen: "}, nil},
		{nil, []string{"gen", "./nothing/..."}, []string{"gocu gen: "}, nil},
		{nil, []string{"nosuchcommand"}, []string{"unknown command"}, nil},
	}
	for _, c := range cases {
		cmd := exec.Command(exe, c.args...)
		cmd.Dir = dir
		cmd.Env = append(append(os.Environ(), "GOCU_TEST_MAIN=1", "GOCU_DEVICE="), c.env...)
		var stderr strings.Builder
		cmd.Stderr = &stderr
		err := cmd.Run()
		var exit *exec.ExitError
		if !errors.As(err, &exit) || exit.ExitCode() != 1 {
			t.Errorf("gocu %v (%v): %v, want exit status 1\n%s", c.args, c.env, err, stderr.String())
			continue
		}
		// The error is the last thing printed; it may span lines (the
		// places searched for a library).
		text := strings.TrimSpace(stderr.String())
		if i := strings.LastIndex(text, "\ngocu"); i >= 0 {
			text = text[i+1:]
		}
		line := strings.ReplaceAll(text, "\n", " ")
		t.Logf("gocu %s: %s", strings.Join(c.args, " "), line)
		if !strings.HasPrefix(line, "gocu: ") && !strings.HasPrefix(line, "gocu gen: ") || strings.HasPrefix(line, "gocu: gocu") {
			t.Errorf("gocu %v: %q does not start with the command's name once", c.args, line)
		}
		if p := stutter(line); p != "" {
			t.Errorf("gocu %v: %q says %q twice", c.args, line, p+": ")
		}
		for _, w := range c.want {
			if !strings.Contains(line, w) {
				t.Errorf("gocu %v: %q lacks %q", c.args, line, w)
			}
		}
		for _, w := range c.not {
			if strings.Contains(line, w) {
				t.Errorf("gocu %v: %q says %q", c.args, line, w)
			}
		}
	}
}
