package clangtest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fakeClang puts a script named name on a PATH of its own that prints
// version as its --version.
func fakeClang(t *testing.T, name, version string) {
	t.Helper()
	dir := t.TempDir()
	script := "#!/bin/sh\necho '" + version + "'\necho 'Target: x86_64-pc-linux-gnu'\n"
	if err := os.WriteFile(filepath.Join(dir, name), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir)
	cache.Delete(name)
	t.Cleanup(func() { cache.Delete(name) })
}

func TestFind(t *testing.T) {
	for _, c := range []struct {
		version string
		ok      bool
	}{
		{"Debian clang version 16.0.6 (15~deb12u1)", true},
		{"Ubuntu clang version 16.0.6 (15)", false},
		{"Debian clang version 18.1.8 (++20240731024944+3b5b5c1ec4a3-1~exp1~20240731145000.144)", false},
		{"clang version 16.0.0", false},
	} {
		fakeClang(t, "clang-16", c.version)
		p, err := Find("clang-16")
		if ok := err == nil; ok != c.ok {
			t.Errorf("%q: Find = %q, %v; want ok=%v", c.version, p, err, c.ok)
		}
		if err != nil && !strings.Contains(err.Error(), "not Debian's clang 16") {
			t.Errorf("%q: error %v does not say what is wrong", c.version, err)
		}
	}
	t.Setenv("PATH", t.TempDir())
	cache.Delete("clang++-16")
	if _, err := Find("clang++-16"); err == nil || !strings.Contains(err.Error(), "not installed") {
		t.Errorf("no clang++-16: %v", err)
	}
	cache.Delete("clang++-16")
}

func TestUnusableSkips(t *testing.T) {
	t.Setenv(Env, "")
	var skipped bool
	t.Run("inner", func(t *testing.T) {
		defer func() { skipped = t.Skipped() }()
		Unusable(t, "no clang here")
	})
	if !skipped {
		t.Error("Unusable did not skip without " + Env)
	}
	t.Setenv(Env, "0")
	if Required() {
		t.Errorf("%s=0 requires clang", Env)
	}
	t.Setenv(Env, "1")
	if !Required() {
		t.Errorf("%s=1 does not require clang", Env)
	}
}
