package gputest

import (
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"
)

func TestOneLine(t *testing.T) {
	err := errors.New("libcuda.so.1: cannot open shared object file\n/usr/lib64/libcuda.so.1: no such file")
	if got, want := OneLine(err), "libcuda.so.1: cannot open shared object file"; got != want {
		t.Errorf("OneLine = %q, want %q", got, want)
	}
}

// TestNeed runs the gate in a child process, with and without the variable,
// and checks that it skips or fails with one line.
func TestNeed(t *testing.T) {
	if os.Getenv("GPUTEST_CHILD") == "1" {
		Need(t, errors.New("no driver\nsecond line"))
		t.Fatal("Need returned on an error")
	}
	Need(t, nil) // nil is a usable GPU: no skip
	for _, c := range []struct {
		require string
		fail    bool
		want    string
	}{
		{"", false, "--- SKIP: TestNeed"},
		{"0", false, "--- SKIP: TestNeed"},
		{"1", true, "--- FAIL: TestNeed"},
	} {
		cmd := exec.Command(os.Args[0], "-test.run=^TestNeed$", "-test.v")
		cmd.Env = append(os.Environ(), "GPUTEST_CHILD=1", Env+"="+c.require)
		out, err := cmd.CombinedOutput()
		if (err != nil) != c.fail {
			t.Errorf("%s=%q: exit error %v, want failure %v\n%s", Env, c.require, err, c.fail, out)
		}
		if !strings.Contains(string(out), c.want) {
			t.Errorf("%s=%q: output lacks %q:\n%s", Env, c.require, c.want, out)
		}
		if !strings.Contains(string(out), "needs a GPU: no driver") || strings.Contains(string(out), "second line") {
			t.Errorf("%s=%q: want the first line of the error only:\n%s", Env, c.require, out)
		}
	}
}
