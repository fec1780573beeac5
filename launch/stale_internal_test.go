package launch

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gocu-dev/gocu"
	"github.com/gocu-dev/gocu/kernel"
	"github.com/gocu-dev/gocu/meta"
)

const staleSrc = `package k

// Scale is a kernel.
func Scale(x []float32) { x[0] *= 2 }

type P struct{ v float32 }

func (p *P) Get() float32 { return p.v }
`

// TestStale checks the comparison of a module's recorded Go sources with
// the files beside its generated file, and that the launch of a stale
// module fails in the default and the checked simulator modes.
func TestStale(t *testing.T) {
	dir := t.TempDir()
	genFile := filepath.Join(dir, "zz_gocu_k.go")
	write := func(name, src string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, name), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("zz_gocu_k.go", "package k\n")
	write("k.go", staleSrc)
	hash := func(decl string) string {
		s := sha256.Sum256([]byte(decl))
		return hex.EncodeToString(s[:])
	}
	m := &meta.Module{GoSources: []meta.GoSource{
		{File: "k.go", Func: "P.Get", SHA256: hash("func (p *P) Get() float32 { return p.v }")},
		{File: "k.go", Func: "Scale", SHA256: hash("func Scale(x []float32) { x[0] *= 2 }")},
	}}
	if err := checkSources(genFile, m); err != nil {
		t.Fatalf("unchanged sources: %v", err)
	}
	// Comments and other declarations may change.
	write("k.go", strings.Replace(staleSrc, "is a kernel", "scales", 1)+"\nfunc Other() {}\n")
	if err := checkSources(genFile, m); err != nil {
		t.Fatalf("a changed comment: %v", err)
	}
	// GOCU_NO_STALE_CHECK=1 turns the comparison off.
	write("k.go", strings.Replace(staleSrc, "*= 2", "*= 5", 1))
	t.Setenv("GOCU_NO_STALE_CHECK", "1")
	if err := checkSources(genFile, m); err != nil {
		t.Fatalf("with GOCU_NO_STALE_CHECK=1: %v", err)
	}
	t.Setenv("GOCU_NO_STALE_CHECK", "")
	write("k.go", staleSrc)
	// Without the generated file on disk there is nothing to compare.
	if err := checkSources(filepath.Join(dir, "gone", "zz_gocu_k.go"), m); err != nil {
		t.Fatalf("no generated file: %v", err)
	}
	for _, c := range []struct{ src, want string }{
		{strings.Replace(staleSrc, "*= 2", "*= 3", 1), "(Scale is not the one zz_gocu_k.go was generated from)"},
		{strings.Replace(staleSrc, "func (p *P) Get", "func (p *P) Got", 1), "(P.Get is no longer in it)"},
		{"", "(the file is gone)"},
	} {
		if c.src == "" {
			os.Remove(filepath.Join(dir, "k.go"))
		} else {
			write("k.go", c.src)
		}
		err := checkSources(genFile, m)
		want := "gocu: k.go changed since gocu gen: run go generate in " + dir + " " + c.want
		if !errors.Is(err, gocu.ErrStale) || err.Error() != want {
			t.Errorf("got %v\nwant %s", err, want)
		}
	}

	// A launch of a stale program fails in both simulator modes, before
	// running anything.
	write("k.go", "package k\n")
	mod := *testModule
	mod.GoSources = []meta.GoSource{{File: "k.go", Func: "AddOffByOne", SHA256: hash("x")}}
	dev, err := gocu.Open("sim")
	if err != nil {
		t.Fatal(err)
	}
	c, _ := gocu.Alloc[float32](dev, 4)
	for _, checked := range []bool{false, true} {
		p := &Program{mod: &mod, file: genFile}
		var l Call
		if l.Start(p, 0, dev, gocu.Config{N: 4, Checked: checked}) {
			t.Fatal("Start on the simulator reported a GPU launch")
		}
		s := SimArg(&l, 2, c)
		err := l.Simulate(func(*kernel.Thread) { t.Error("a stale kernel ran") }, func(*kernel.Thread) { t.Error("a stale kernel ran") }, s)
		if !errors.Is(err, gocu.ErrStale) || !strings.Contains(err.Error(), "AddOffByOne is no longer in it") {
			t.Errorf("checked=%v: launch of a stale kernel: %v", checked, err)
		}
	}
}

// FuzzCheckSources runs the comparison on arbitrary file contents: it may
// report a change, never panic.
func FuzzCheckSources(f *testing.F) {
	f.Add([]byte(staleSrc))
	f.Add([]byte("package k\nfunc (p *P[T]) Get() {}\nfunc Scale("))
	f.Fuzz(func(t *testing.T, src []byte) {
		dir := t.TempDir()
		genFile := filepath.Join(dir, "zz_gocu_k.go")
		if err := os.WriteFile(genFile, []byte("package k\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "k.go"), src, 0o644); err != nil {
			t.Fatal(err)
		}
		m := &meta.Module{GoSources: []meta.GoSource{{File: "k.go", Func: "Scale", SHA256: "x"}, {File: "k.go", Func: "P.Get", SHA256: "y"}}}
		if err := checkSources(genFile, m); err != nil && !errors.Is(err, gocu.ErrStale) {
			t.Errorf("error not ErrStale: %v", err)
		}
	})
}
