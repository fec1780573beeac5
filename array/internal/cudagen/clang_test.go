package cudagen

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gocu-dev/gocu/array/internal/backend"
	"github.com/gocu-dev/gocu/internal/clangtest"
)

// clangPath returns Debian's clang-16, or skips the test (fails it under
// GOCU_REQUIRE_CLANG=1) where there is none: package clangtest.
func clangPath(t testing.TB) string {
	t.Helper()
	return clangtest.Need(t, "clang-16")
}

// compilePTX compiles a generated kernel for sm_90 with clang and returns
// the PTX.
func compilePTX(t testing.TB, k *Kernel) string {
	t.Helper()
	clang := clangPath(t)
	dir := t.TempDir()
	src := filepath.Join(dir, k.Name+".cu")
	if err := os.WriteFile(src, []byte(devicePrelude+"\n#line 1 \"generated\"\n"+k.Source), 0o600); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, k.Name+".ptx")
	cmd := exec.Command(clang, "-x", "cuda", "--cuda-device-only", "-nocudainc", "-nocudalib", clangtest.NoCUDA,
		"--cuda-gpu-arch=sm_90", "-std=c++17", "-O2", "-Wall", "-Wno-unused-function", "-Werror=return-type",
		"-Werror=implicit-function-declaration", "-S", "-o", out, src)
	msg, err := cmd.CombinedOutput()
	if err != nil || strings.Contains(string(msg), "warning") {
		t.Fatalf("clang rejected %s: %v\n%s\n--- source ---\n%s", k.Name, err, msg, numbered(k.Source))
	}
	ptx, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(ptx), ".entry "+k.Name) {
		t.Fatalf("PTX of %s lacks its entry point", k.Name)
	}
	// The parameter list in PTX matches the declared one.
	if n := strings.Count(entryParams(string(ptx), k.Name), ".param"); n != len(k.Params) {
		t.Fatalf("%s: PTX has %d parameters, Kernel.Params %d", k.Name, n, len(k.Params))
	}
	return string(ptx)
}

func entryParams(ptx, name string) string {
	i := strings.Index(ptx, ".entry "+name)
	if i < 0 {
		return ""
	}
	j := strings.Index(ptx[i:], ")")
	return ptx[i : i+j]
}

func numbered(s string) string {
	lines := strings.Split(s, "\n")
	for i := range lines {
		lines[i] = fmt.Sprintf("%4d  %s", i+1, lines[i])
	}
	return strings.Join(lines, "\n")
}

// compileAll compiles kernels with clang: all of them in one translation
// unit (shared helpers once), and one by one only if that fails, to name
// the culprit.
func compileAll(t *testing.T, ks []*Kernel) {
	clang := clangPath(t)
	var body strings.Builder
	shared := map[string]bool{}
	seen := map[string]bool{}
	var uniq []*Kernel
	seenSrc := map[string]bool{}
	for _, k := range ks {
		if seen[k.Name] {
			continue
		}
		seen[k.Name] = true
		uniq = append(uniq, k)
		if seenSrc[k.Source] {
			continue // several entry points of one module
		}
		seenSrc[k.Source] = true
		src := k.Source
		for _, pre := range sharedSources {
			if strings.Contains(src, pre) {
				shared[pre] = true
				src = strings.Replace(src, pre, "", 1)
			}
		}
		body.WriteString(src)
		body.WriteString("\n")
	}
	var head strings.Builder
	for _, pre := range sharedSources {
		if shared[pre] {
			head.WriteString(pre)
		}
	}
	dir := t.TempDir()
	src := filepath.Join(dir, "all.cu")
	if err := os.WriteFile(src, []byte(devicePrelude+head.String()+body.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "all.ptx")
	cmd := exec.Command(clang, "-x", "cuda", "--cuda-device-only", "-nocudainc", "-nocudalib", clangtest.NoCUDA,
		"--cuda-gpu-arch=sm_90", "-std=c++17", "-O1", "-Wall", "-Wno-unused-function", "-Werror=return-type",
		"-S", "-o", out, src)
	msg, err := cmd.CombinedOutput()
	if err == nil && !strings.Contains(string(msg), "warning") {
		ptx, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range uniq {
			if !strings.Contains(string(ptx), ".entry "+k.Name) {
				t.Errorf("PTX lacks entry %s", k.Name)
			} else if n := strings.Count(entryParams(string(ptx), k.Name), ".param"); n != len(k.Params) {
				t.Errorf("%s: PTX has %d parameters, Kernel.Params %d", k.Name, n, len(k.Params))
			}
		}
		t.Logf("clang compiled %d kernels to PTX for sm_90", len(uniq))
		return
	}
	t.Logf("batch compile failed (%v): %s", err, firstLines(string(msg), 20))
	done := map[string]bool{}
	for _, k := range uniq {
		if !done[k.Source] {
			done[k.Source] = true
			compilePTX(t, k)
		}
	}
}

// sharedSources are the common preludes generated sources start with.
var sharedSources = []string{helpersSource, philoxSource(), reduceHelpers}

func firstLines(s string, n int) string {
	l := strings.SplitN(s, "\n", n+1)
	if len(l) > n {
		l = l[:n]
	}
	return strings.Join(l, "\n")
}

// The vectorised path really issues 128-bit loads and stores.
func TestVectorisedLoadsInPTX(t *testing.T) {
	b := newProg(1 << 20)
	x := b.input(backend.Float32)
	y := b.input(backend.Float32)
	b.node(backend.OpAdd, backend.Float32, x, y)
	k, err := Elementwise(b.p, ElemSpec{Rank: 1, In: []Class{Contig, Contig}, OutContig: true, Vec: 4})
	if err != nil {
		t.Fatal(err)
	}
	ptx := compilePTX(t, k)
	if !strings.Contains(ptx, ".v4.f32") && !strings.Contains(ptx, ".v4.u32") && !strings.Contains(ptx, ".v4.b32") {
		t.Errorf("no 128-bit vector access in the PTX of a Vec=4 kernel")
	}
	if !strings.Contains(ptx, "st.global.v4") {
		t.Errorf("no 128-bit vector store")
	}
	d := newProg(1 << 20)
	d.node(backend.OpNeg, backend.Float64, d.input(backend.Float64))
	k2, err := Elementwise(d.p, ElemSpec{Rank: 1, In: []Class{Contig}, OutContig: true, Vec: 2})
	if err != nil {
		t.Fatal(err)
	}
	if ptx := compilePTX(t, k2); !strings.Contains(ptx, "ld.global.nc.v2.f64") && !strings.Contains(ptx, "ld.global.v2.f64") {
		t.Errorf("no 128-bit vector load of doubles")
	}
}
