package bugs_test

import (
	"bufio"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gocu-dev/gocu/cmd/gocu/internal/demo/bugs"
	"github.com/gocu-dev/gocu/kernel"
	"github.com/gocu-dev/gocu/meta"
	"github.com/gocu-dev/gocu/sim"
)

// The helpers in this file are those of internal/lecture's tests, for the
// planted bugs.

const Tile = bugs.Tile

// newRand returns a generator seeded from the test's name, different for
// every test but reproducible, and logs nothing: the inputs are random, the
// references are computed from them.
func newRand(t testing.TB) *rand.Rand {
	var h uint64 = 14695981039346656037
	for _, c := range t.Name() {
		h = (h ^ uint64(c)) * 1099511628211
	}
	return rand.New(rand.NewPCG(h, rand.Uint64()))
}

func randFloats(r *rand.Rand, n int) []float32 {
	x := make([]float32, n)
	for i := range x {
		x[i] = float32(r.NormFloat64())
	}
	return x
}

// nanFilled returns n NaNs: any element a kernel fails to write stays NaN
// and fails the comparison.
func nanFilled(n int) []float32 {
	x := make([]float32, n)
	for i := range x {
		x[i] = float32(math.NaN())
	}
	return x
}

func cdiv(a, b int) int32 { return int32((a + b - 1) / b) }

func dim(x, y int32) kernel.Dim3 { return kernel.Dim3{X: x, Y: y, Z: 1} }

// asSimError requires err to be a *sim.Error.
func asSimError(t *testing.T, err error) *sim.Error {
	t.Helper()
	var e *sim.Error
	if !errors.As(err, &e) {
		t.Fatalf("want a *sim.Error, got %T: %v", err, err)
	}
	return e
}

// wantLines returns the lines of file that carry the comment "// want:
// what", the lines the simulator must name in its reports.
func wantLines(t testing.TB, file, what string) []int {
	t.Helper()
	var lines []int
	forLines(t, file, func(n int, line string) {
		if strings.HasSuffix(strings.TrimSpace(line), "// want: "+what) {
			lines = append(lines, n)
		}
	})
	if len(lines) == 0 {
		t.Fatalf("%s has no line marked // want: %s", file, what)
	}
	return lines
}

func forLines(t testing.TB, file string, f func(n int, line string)) {
	fd, err := os.Open(sourceFile(file))
	if err != nil {
		t.Fatal(err)
	}
	defer fd.Close()
	s := bufio.NewScanner(fd)
	for n := 1; s.Scan(); n++ {
		f(n, s.Text())
	}
}

func contains(lines []int, l int) bool {
	for _, x := range lines {
		if x == l {
			return true
		}
	}
	return false
}

// sites builds the site table of a hand-written checked twin the way gocu
// gen will: one kernel.Site per instrumented access, naming the line and
// column of the access in the kernel's source. Each spec is {code, expr}:
// the first line of function fn in file containing code, and the access
// expression within it (expr@n for its n-th occurrence on the line).
func sites(file, fn string, specs ...[2]string) []kernel.Site {
	src, err := os.ReadFile(sourceFile(file))
	if err != nil {
		panic(err)
	}
	lines := strings.Split(string(src), "\n")
	start := -1
	for i, l := range lines {
		if strings.HasPrefix(l, "func "+fn+"(") {
			start = i
			break
		}
	}
	if start < 0 {
		panic(fmt.Sprintf("%s: no func %s", file, fn))
	}
	out := make([]kernel.Site, len(specs))
	for k, sp := range specs {
		found := false
		for i := start; i < len(lines) && !found; i++ {
			if i > start && strings.HasPrefix(lines[i], "func ") {
				break
			}
			if strings.Contains(lines[i], sp[0]) {
				// expr@n names the n-th occurrence of expr on the line.
				expr, nth := sp[1], 1
				if j := strings.LastIndex(expr, "@"); j > 0 {
					fmt.Sscan(expr[j+1:], &nth)
					expr = expr[:j]
				}
				col := -1
				for from := 0; nth > 0; nth-- {
					c := strings.Index(lines[i][from:], expr)
					if c < 0 {
						panic(fmt.Sprintf("%s:%d: no %q", file, i+1, sp[1]))
					}
					col, from = from+c, from+c+1
				}
				out[k] = kernel.Site{File: file, Line: int32(i + 1), Col: int32(col + 1), Expr: expr}
				found = true
			}
		}
		if !found {
			panic(fmt.Sprintf("%s: func %s has no line with %q", file, fn, sp[0]))
		}
	}
	return out
}

// sourceFile finds a test's source file from the path runtime.Caller gives:
// absolute normally, module-relative in a binary built with -trimpath (as
// the GPU bundle is), where the package directory is the working directory.
func sourceFile(path string) string {
	if _, err := os.Stat(path); err == nil {
		return path
	}
	return filepath.Base(path)
}

// twinOf returns the checked twin gocu gen wrote for the kernel fn (found
// through package meta, where the generated file registers it), typed as
// the kernel, so that tests call it directly.
func twinOf[F any](fn F) F {
	_, k, ok := meta.Lookup(fn)
	if !ok {
		panic(fmt.Sprintf("%T is not a kernel registered by gocu gen: run go generate", fn))
	}
	return k.Checked.(F)
}

var (
	tiledMatMulNoSyncChecked = twinOf(bugs.TiledMatMulNoSync)
	addOffByOneChecked       = twinOf(bugs.AddOffByOne)
)
