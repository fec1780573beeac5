package gen

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// tempPackage writes files into a new package directory inside the module
// (so that it can import the kernel package) and returns its path.
func tempPackage(t *testing.T, files map[string]string) string {
	t.Helper()
	dir, err := os.MkdirTemp("testdata", "tmp-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	for name, src := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return "./" + filepath.ToSlash(dir)
}

const scaleSrc = `package scale

import "github.com/gocu-dev/gocu/kernel"

// Scale multiplies x by a.
//
//gocu:kernel
func Scale(t *kernel.Thread, x []float32, a float32) {
	if i := t.Index(); i < int32(len(x)) {
		x[i] *= a
	}
}
`

// TestRunWritesOnce runs gocu gen twice: the first run writes the
// generated file, the second changes nothing.
func TestRunWritesOnce(t *testing.T) {
	needGo(t)
	dir := tempPackage(t, map[string]string{"scale.go": scaleSrc})
	var out bytes.Buffer
	diags, err := Run(Config{}, &out, dir)
	if err != nil || len(diags) > 0 {
		t.Fatalf("Run: %v %v", diags, err)
	}
	goFile := filepath.Join(dir, "zz_gocu_scale.go")
	if !strings.Contains(out.String(), "wrote") || !fileExists(goFile) {
		t.Fatalf("first run wrote nothing: %q", out.String())
	}
	first := readFile(t, goFile)
	if !strings.HasPrefix(first, generatedMarker) {
		t.Errorf("generated file does not start with %q", generatedMarker)
	}
	out.Reset()
	if _, err := Run(Config{}, &out, dir); err != nil {
		t.Fatal(err)
	}
	if out.Len() != 0 {
		t.Errorf("second run wrote files: %q", out.String())
	}
	if readFile(t, goFile) != first {
		t.Error("second run changed the generated file")
	}
}

// TestStaleFileRemoved checks that a package whose kernels are gone loses
// its generated file, and that a stale generated file never breaks the
// load (it may reference kernels that no longer exist).
func TestStaleFileRemoved(t *testing.T) {
	needGo(t)
	dir := tempPackage(t, map[string]string{
		"plain.go":         "package plain\n\nfunc Add(a, b int) int { return a + b }\n",
		"zz_gocu_plain.go": generatedMarker + "\n\npackage plain\n\nvar _ = gocuChecked_Gone\n",
		"zz_gocu_plain.cu": "// old\n",
	})
	res, err := Generate(Config{}, dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Packages) != 0 || len(res.Stale) != 2 {
		t.Fatalf("packages %d, stale %v; want 0 and the two generated files", len(res.Packages), res.Stale)
	}
	if _, err := res.Write(); err != nil {
		t.Fatal(err)
	}
	if fileExists(filepath.Join(dir, "zz_gocu_plain.go")) || fileExists(filepath.Join(dir, "zz_gocu_plain.cu")) {
		t.Error("stale generated files survive")
	}
}

// TestTypeErrors checks that type errors outside kernel code are ignored
// (code that calls generated launchers does not type-check before the
// first run) and that those inside kernel code are reported.
func TestTypeErrors(t *testing.T) {
	needGo(t)
	dir := tempPackage(t, map[string]string{
		"scale.go": scaleSrc,
		"use.go":   "package scale\n\nfunc use() { LaunchScale() }\n",
	})
	if _, err := Generate(Config{}, dir); err != nil {
		t.Fatalf("a type error outside kernels stopped the translation: %v", err)
	}
	dir = tempPackage(t, map[string]string{
		"scale.go": strings.Replace(scaleSrc, "x[i] *= a", "x[i] *= b", 1),
	})
	_, err := Generate(Config{}, dir)
	var e *Error
	if !errors.As(err, &e) || !strings.Contains(err.Error(), "undefined: b") || !strings.Contains(err.Error(), "scale.go:10:") {
		t.Fatalf("error = %v, want undefined: b at scale.go:10", err)
	}
}

func TestNoPackages(t *testing.T) {
	needGo(t)
	_, err := Generate(Config{}, "./testdata/kernels/does-not-exist")
	if err == nil {
		t.Fatal("no error for a missing package")
	}
}

// TestCrossPackage checks that a device function of another package is
// translated with the kernels that call it, and its checked copy lives in
// the kernels' package.
func TestCrossPackage(t *testing.T) {
	needGo(t)
	res, err := Generate(Config{}, "./testdata/kernels/features")
	if err != nil {
		t.Fatal(err)
	}
	p := res.Packages[0]
	for _, want := range []string{"static __device__ __forceinline__ int util_Clamp(int x, int lo, int hi)", "struct util_Vec3 {", "util_Vec3_Dot("} {
		if !strings.Contains(p.CUDA, want) {
			t.Errorf("CUDA lacks %q", want)
		}
	}
	for _, want := range []string{"func gocuChecked_util_Clamp(gocuT *kernel.Thread, x int32, lo int32, hi int32) int32", "(1048576)"} {
		if !bytes.Contains(p.Go, []byte(want)) {
			t.Errorf("Go file lacks %q", want)
		}
	}
}

// TestHandWrittenFileKept: gocu gen refuses to replace a zz_gocu_*.go file
// that it did not write, and writes nothing.
func TestHandWrittenFileKept(t *testing.T) {
	needGo(t)
	const mine = "package scale\n\n// My own notes, in a file with gocu gen's name.\n"
	dir := tempPackage(t, map[string]string{"scale.go": scaleSrc, "zz_gocu_scale.go": mine})
	var out bytes.Buffer
	_, err := Run(Config{}, &out, dir)
	if !errors.Is(err, ErrHandWritten) || !strings.Contains(err.Error(), "zz_gocu_scale.go") {
		t.Fatalf("Run over a hand-written file: %v, want ErrHandWritten naming it", err)
	}
	if got := readFile(t, filepath.Join(dir, "zz_gocu_scale.go")); got != mine {
		t.Errorf("the hand-written file became\n%s", got)
	}
	if out.Len() != 0 {
		t.Errorf("Run reported %q", out.String())
	}
}
