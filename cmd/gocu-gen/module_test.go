package main

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// allowed are the modules a user's go.mod may name after following the
// README: gocu, its one run-time dependency, and the translator's.
var allowed = []string{
	"github.com/gocu-dev/gocu",
	"github.com/ebitengine/purego",
	"golang.org/x/tools",
	"golang.org/x/mod",
	"golang.org/x/sync",
}

// TestUserModule does what the README tells a user to do in a module of
// their own: go get gocu and the generator as a tool, add the
// //go:generate line, run go generate and launch a kernel on the
// simulator. The module's go.mod must then name only allowed modules. A
// changed kernel must then fail its first launch, and gocu-gen -check
// must fail, until go generate runs again.
func TestUserModule(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command")
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	cmds, directive := readmeSteps(t, filepath.Join(root, "README.md"))

	// The checkout stands in for the published module: a replace gives
	// its files, a proxy on disk its version, so that go get works
	// without a version as it does for the published module.
	dir := t.TempDir()
	const version = "v0.0.0-20261128000000-000000000000"
	proxyRoot := t.TempDir()
	proxy := filepath.Join(proxyRoot, "github.com", "gocu-dev", "gocu", "@v")
	info := `{"Version":"` + version + `","Time":"2026-11-28T00:00:00Z"}`
	writeFile(t, filepath.Join(proxy, "list"), version+"\n")
	writeFile(t, filepath.Join(proxy, version+".info"), info)
	writeFile(t, filepath.Join(filepath.Dir(proxy), "@latest"), info)
	goproxy := strings.TrimSpace(goOutput(t, "", nil, "env", "GOPROXY"))
	env := []string{
		"GOPROXY=" + "file://" + filepath.ToSlash(proxyRoot) + "," + goproxy,
		"GONOSUMDB=github.com/gocu-dev/gocu",
		"GOWORK=off",
		"GOFLAGS=" + strings.TrimSpace(os.Getenv("GOFLAGS")+" -mod=mod"),
	}

	writeFile(t, filepath.Join(dir, "go.mod"), "module example.com/saxpy\n\ngo 1.26\n\nreplace github.com/gocu-dev/gocu => "+root+"\n")
	writeFile(t, filepath.Join(dir, "kernels.go"), strings.Replace(userKernels, "//go:generate", directive, 1))
	writeFile(t, filepath.Join(dir, "main.go"), userMain)
	for _, c := range cmds {
		goOutput(t, dir, env, c[1:]...)
	}
	goOutput(t, dir, env, "generate", "./...")
	if out := goOutput(t, dir, env, "run", "."); out != "ok\n" {
		t.Fatalf("go run . printed %q, want ok", out)
	}

	mod, err := os.ReadFile(filepath.Join(dir, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range requires(string(mod)) {
		if !slices.Contains(allowed, m) {
			t.Errorf("go.mod requires %s, which is not in the allow-list %v:\n%s", m, allowed, mod)
		}
	}
	if !strings.Contains(string(mod), "tool github.com/gocu-dev/gocu/cmd/gocu-gen") {
		t.Errorf("go.mod lacks the tool line:\n%s", mod)
	}

	// The kernel changes without go generate: its first launch fails,
	// and so does gocu-gen -check.
	writeFile(t, filepath.Join(dir, "kernels.go"), strings.Replace(
		strings.Replace(userKernels, "//go:generate", directive, 1), "a*x[i] + y[i]", "a*x[i] + 2*y[i]", 1))
	out, err := goCmd(dir, env, "run", ".")
	if err == nil || !strings.Contains(out, "kernels.go changed since gocu gen: run go generate") {
		t.Errorf("a launch after the kernel changed: %v\n%s", err, out)
	}
	out, err = goCmd(dir, env, "tool", "gocu-gen", "-check")
	if err == nil || !strings.Contains(out, "run go generate") {
		t.Errorf("gocu-gen -check after the kernel changed: %v\n%s", err, out)
	}
	goOutput(t, dir, env, "generate", "./...")
	goOutput(t, dir, env, "tool", "gocu-gen", "-check")

	// A changed signature breaks the build inside the generated file,
	// whose first lines tell the reader what to do.
	writeFile(t, filepath.Join(dir, "kernels.go"), strings.Replace(
		strings.Replace(userKernels, "//go:generate", directive, 1), "a float32, x, y []float32", "a float64, x, y []float32", 1))
	out, err = goCmd(dir, env, "build", ".")
	if err == nil || !strings.Contains(out, "zz_gocu_main.go") {
		t.Fatalf("go build after a signature change: %v\n%s", err, out)
	}
	head, err := os.ReadFile(filepath.Join(dir, "zz_gocu_main.go"))
	if err != nil {
		t.Fatal(err)
	}
	if first := strings.Join(strings.SplitN(string(head), "\n", 5)[:4], "\n"); !strings.Contains(first, "does not compile") || !strings.Contains(first, "run go generate") {
		t.Errorf("the generated file's first lines do not say to run go generate:\n%s", first)
	}
}

// readmeSteps returns the go commands of the README's first sh block
// after the heading "### In a module of your own", each split into
// words, and the //go:generate line it names.
func readmeSteps(t *testing.T, path string) (cmds [][]string, directive string) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	_, after, ok := strings.Cut(string(data), "\n### In a module of your own\n")
	if !ok {
		t.Fatal("README.md has no heading \"### In a module of your own\"")
	}
	_, block, ok := strings.Cut(after, "```sh\n")
	if !ok {
		t.Fatal("README.md: no sh block after \"### In a module of your own\"")
	}
	block, _, _ = strings.Cut(block, "```")
	sc := bufio.NewScanner(strings.NewReader(block))
	for sc.Scan() {
		line, _, _ := strings.Cut(sc.Text(), "#")
		if f := strings.Fields(line); len(f) > 0 {
			if f[0] != "go" {
				t.Fatalf("README.md: the user-module steps run %q; the test runs only go commands", line)
			}
			cmds = append(cmds, f)
		}
	}
	directive = regexp.MustCompile(`//go:generate [^\x60\n]*`).FindString(after)
	if len(cmds) == 0 || directive == "" {
		t.Fatalf("README.md: the user-module steps name no go command (%d) or no //go:generate line (%q)", len(cmds), directive)
	}
	return cmds, directive
}

// requires returns the module paths of go.mod's require directives.
func requires(mod string) []string {
	var ms []string
	in := false
	for _, line := range strings.Split(mod, "\n") {
		f := strings.Fields(line)
		switch {
		case len(f) == 0:
		case f[0] == "require" && len(f) > 1 && f[1] == "(":
			in = true
		case f[0] == "require" && len(f) > 1:
			ms = append(ms, f[1])
		case in && f[0] == ")":
			in = false
		case in:
			ms = append(ms, f[0])
		}
	}
	return ms
}

func writeFile(t *testing.T, path, data string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

func goCmd(dir string, env []string, args ...string) (string, error) {
	cmd := exec.Command("go", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

func goOutput(t *testing.T, dir string, env []string, args ...string) string {
	t.Helper()
	out, err := goCmd(dir, env, args...)
	if err != nil {
		t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return out
}

const userKernels = `package main

import "github.com/gocu-dev/gocu/kernel"

//go:generate

//gocu:kernel
func Saxpy(t *kernel.Thread, a float32, x, y []float32) {
	if i := t.Index(); i < int32(len(x)) {
		y[i] = a*x[i] + y[i]
	}
}
`

const userMain = `package main

import (
	"fmt"
	"log"

	"github.com/gocu-dev/gocu"
)

func main() {
	dev, err := gocu.Open("sim")
	if err != nil {
		log.Fatal(err)
	}
	const n = 1000
	xs, ys := make([]float32, n), make([]float32, n)
	for i := range xs {
		xs[i], ys[i] = float32(i)/7, 1-float32(i)/3
	}
	x, _ := gocu.FromSlice(dev, xs)
	y, _ := gocu.FromSlice(dev, ys)
	if err := LaunchSaxpy(dev, gocu.Auto(n), 2, x, y); err != nil {
		log.Fatal(err)
	}
	got, err := y.ToSlice()
	if err != nil {
		log.Fatal(err)
	}
	for i := range got {
		if want := 2*xs[i] + ys[i]; got[i] != want {
			log.Fatalf("y[%d] = %v, want %v", i, got[i], want)
		}
	}
	fmt.Println("ok")
}
`
