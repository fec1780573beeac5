package demo

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"

	"github.com/gocu-dev/gocu/gen"
)

// The tutorial, docs/tutorial.md, marks every code block it shows with
// where the code comes from, and every output block with the program that
// prints it:
//
//	<!-- from: examples/02-gray-sim/main.go -->   the block appears verbatim in the file
//	<!-- file: examples/01-gray-go/main.go -->    the block is the whole file
//	<!-- output: examples/02-gray-sim -->         the block is what go run prints
//
// TestTutorial checks all three, and that every example program is both
// shown and run, so that the tutorial cannot drift from the code.

type block struct {
	kind, target string // from, file or output; a path
	line         int    // of the marker in the tutorial
	text         string
}

var marker = regexp.MustCompile(`^<!-- (from|file|output): (\S+) -->$`)

// tutorialBlocks parses the marked fenced blocks of the tutorial.
func tutorialBlocks(t *testing.T, path string) []block {
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var (
		blocks []block
		cur    *block
		inside bool
		lines  []string
	)
	s := bufio.NewScanner(f)
	for n := 1; s.Scan(); n++ {
		line := s.Text()
		switch {
		case inside && line == "```":
			inside = false
			if cur != nil {
				cur.text = strings.Join(lines, "\n") + "\n"
				blocks = append(blocks, *cur)
				cur = nil
			}
		case inside:
			lines = append(lines, line)
		case strings.HasPrefix(line, "```"):
			inside, lines = true, nil
		case marker.MatchString(line):
			if cur != nil {
				t.Errorf("tutorial line %d: marker not followed by a code block", cur.line)
			}
			m := marker.FindStringSubmatch(line)
			cur = &block{kind: m[1], target: m[2], line: n}
		case cur != nil && strings.TrimSpace(line) != "":
			t.Errorf("tutorial line %d: text between the marker of line %d and its code block", n, cur.line)
			cur = nil
		}
	}
	if err := s.Err(); err != nil {
		t.Fatal(err)
	}
	return blocks
}

func TestTutorial(t *testing.T) {
	root, err := moduleRoot()
	if err != nil {
		t.Fatal(err)
	}
	tutorial := filepath.Join(root, "docs", "tutorial.md")
	if _, err := os.Stat(tutorial); err != nil {
		t.Skipf("no tutorial here: %v", err)
	}
	blocks := tutorialBlocks(t, tutorial)
	shown, printed := map[string]bool{}, map[string]string{}
	for _, b := range blocks {
		switch b.kind {
		case "from", "file":
			src, err := os.ReadFile(filepath.Join(root, b.target))
			if err != nil {
				t.Errorf("tutorial line %d: %v", b.line, err)
				continue
			}
			if b.kind == "file" && string(src) != b.text || !strings.Contains(string(src), b.text) {
				t.Errorf("tutorial line %d: the code block is not %s %s; update the tutorial:\n%s",
					b.line, map[string]string{"file": "the whole of", "from": "in"}[b.kind], b.target, b.text)
			}
			shown[filepath.Dir(b.target)] = true
		case "output":
			if _, dup := printed[b.target]; dup {
				t.Errorf("tutorial line %d: a second output block for %s", b.line, b.target)
			}
			printed[b.target] = b.text
		}
	}
	examples, err := filepath.Glob(filepath.Join(root, "examples", "[0-9][0-9]-*", "main.go"))
	if err != nil || len(examples) == 0 {
		t.Fatalf("no tutorial examples: %v", err)
	}
	var dirs []string
	for _, e := range examples {
		dir, _ := filepath.Rel(root, filepath.Dir(e))
		dir = filepath.ToSlash(dir)
		dirs = append(dirs, dir)
		if !shown[dir] {
			t.Errorf("the tutorial shows no code of %s", dir)
		}
		if _, ok := printed[dir]; !ok {
			t.Errorf("the tutorial shows no output of %s", dir)
		}
	}
	for dir := range printed {
		if _, err := os.Stat(filepath.Join(root, dir, "main.go")); err != nil {
			t.Errorf("the tutorial shows the output of %s, which is no program", dir)
		}
	}

	// Run them all on cpu, as without a GPU, and compare what they print, times
	// and rates aside.
	if testing.Short() {
		t.Skip("running the examples: not in -short")
	}
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("running the examples needs the go command")
	}
	bin := t.TempDir()
	build := exec.Command("go", append([]string{"build", "-o", bin + string(filepath.Separator)}, prefix("./", dirs)...)...)
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building the examples: %v\n%s", err, out)
	}
	tmp := t.TempDir()
	for _, dir := range dirs {
		exe := filepath.Join(bin, filepath.Base(dir))
		if runtime.GOOS == "windows" {
			exe += ".exe"
		}
		cmd := exec.Command(exe)
		cmd.Dir = root
		cmd.Env = append(withoutEnv(os.Environ(), "GOCU_DEVICE", "GOCU_SIM_SEED", "GOCU_SIM_CHECKED", "TMPDIR"),
			"GOCU_DEVICE=cpu", "TMPDIR="+tmp) // what a reader without a GPU sees
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Errorf("%s: %v\n%s", dir, err, out)
			continue
		}
		got := strings.ReplaceAll(string(out), tmp+string(filepath.Separator), "/tmp/")
		if g, w := normalize(got), normalize(printed[dir]); g != w {
			t.Errorf("%s prints, times and rates aside, what the tutorial does not show; update it:\n%s\ndiff (tutorial -, program +):\n%s",
				dir, got, lineDiff(w, g))
		}
	}
}

// Times, rates and the other figures that vary from run to run or
// machine to machine; what remains must match exactly.
var varying = []*regexp.Regexp{
	regexp.MustCompile(`(\d+h)?(\d+m)?\d+(\.\d+)? ?(ns|µs|us|ms|s)\b`),                           // durations
	regexp.MustCompile(`\d+(\.\d+)?(e[-+]?\d+)? ?(GB/s|GFLOP/s|TFLOP/s|%|FLOP per byte|ns per)`), // rates
	regexp.MustCompile(`on \d+ cores|all \d+ cores|in \d+ places`),
	// which roof bounds a kernel follows from the machine's measured
	// ridge, which moves with the machine and its load
	regexp.MustCompile(`(?m)(memory|compute) roof$`),
}

func normalize(s string) string {
	for _, re := range varying {
		s = re.ReplaceAllString(s, "<>")
	}
	var lines []string
	for _, l := range strings.Split(strings.TrimSpace(s), "\n") {
		lines = append(lines, strings.Join(strings.Fields(l), " "))
	}
	return strings.Join(lines, "\n")
}

func lineDiff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	var b strings.Builder
	for i := range max(len(w), len(g)) {
		var wl, gl string
		if i < len(w) {
			wl = w[i]
		}
		if i < len(g) {
			gl = g[i]
		}
		if wl != gl {
			fmt.Fprintf(&b, "- %s\n+ %s\n", wl, gl)
		}
	}
	return b.String()
}

func prefix(p string, s []string) []string {
	out := make([]string, len(s))
	for i, x := range s {
		out[i] = p + x
	}
	return out
}

func withoutEnv(env []string, names ...string) []string {
	var out []string
	for _, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		keep := true
		for _, n := range names {
			keep = keep && name != n
		}
		if keep {
			out = append(out, kv)
		}
	}
	return out
}

// moduleRoot finds the directory holding go.mod, from the working
// directory up.
func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		up := filepath.Dir(dir)
		if up == dir {
			return "", fmt.Errorf("no go.mod above %s", dir)
		}
		dir = up
	}
}

// TestExamplesGenerated requires the files gocu gen wrote into the
// tutorial's example programs (those with a go:generate line running it)
// to be what it writes now: run go generate there after editing a kernel.
func TestExamplesGenerated(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("gocu gen needs the go command to load packages")
	}
	root, err := moduleRoot()
	if err != nil {
		t.Fatal(err)
	}
	files, err := filepath.Glob(filepath.Join(root, "examples", "*", "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	dirs := map[string]bool{}
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(src), "\n//go:generate go tool gocu-gen\n") {
			dirs[filepath.Dir(f)] = true
		}
	}
	if len(dirs) == 0 {
		t.Skip("no example runs gocu gen")
	}
	for dir := range dirs {
		res, err := gen.Generate(gen.Config{Dir: dir}, ".")
		if err != nil {
			t.Errorf("%s: %v", dir, err)
			continue
		}
		for _, p := range res.Packages {
			name := p.GoFile
			committed, err := os.ReadFile(name)
			if err != nil {
				t.Errorf("%v: run go generate in %s", err, dir)
			} else if !bytes.Equal(committed, p.Go) {
				t.Errorf("%s is stale: run go generate in %s", name, dir)
			}
		}
	}
}
