package attn

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/gocu-dev/gocu/gen"
	"github.com/gocu-dev/gocu/internal/clangtest"
	"github.com/gocu-dev/gocu/meta"
)

// needGo skips where there is no go command, which gocu gen runs to load
// packages (the GPU machine runs prebuilt test binaries).
func needGo(t testing.TB) {
	t.Helper()
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command to load packages with:", err)
	}
}

// TestGeneratedUpToDate translates the package again and requires the
// committed zz_gocu_attn.go to be exactly the translation, and fwd64.go
// and bwd64.go to be what gen64.sh makes of the 128 files: run go
// generate after editing a kernel.
func TestGeneratedUpToDate(t *testing.T) {
	needGo(t)
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("no bash to run gen64.sh with:", err)
	}
	dir := t.TempDir()
	if out, err := exec.Command("bash", "gen64.sh", dir).CombinedOutput(); err != nil {
		t.Fatalf("gen64.sh: %v\n%s", err, out)
	}
	for _, f := range []string{"fwd64.go", "bwd64.go"} {
		fresh, err := os.ReadFile(filepath.Join(dir, f))
		must(t, err)
		committed, err := os.ReadFile(f)
		must(t, err)
		if !bytes.Equal(fresh, committed) {
			t.Errorf("%s is stale: run go generate in internal/attn (the fresh one is in %s)", f, dir)
		}
	}

	res, err := gen.Generate(gen.Config{}, ".")
	must(t, err)
	if len(res.Packages) != 1 {
		t.Fatalf("translated %d packages, want 1", len(res.Packages))
	}
	p := res.Packages[0]
	committed, err := os.ReadFile("zz_gocu_attn.go")
	must(t, err)
	if !bytes.Equal(p.Go, committed) {
		os.WriteFile(filepath.Join(dir, "zz_gocu_attn.go"), p.Go, 0o644)
		t.Fatalf("zz_gocu_attn.go is stale: run go generate in internal/attn (the fresh translation is in %s)", dir)
	}
	want := []string{"bwdPrep", "fwd128", "bwdQ128", "bwdKV128", "fwd64", "bwdQ64", "bwdKV64", "fwd128WG", "fwd128WS", "bwdKVWG", "bwdQWG", "bwdAllWG", "bwdDQ"}
	if len(p.Kernels) != len(want) {
		t.Errorf("kernels %v, want %v", p.Kernels, want)
	}
	for _, k := range want {
		if !bytes.Contains(p.Go, []byte("func "+gen.LauncherName(k)+"(")) {
			t.Errorf("no launcher %s", gen.LauncherName(k))
		}
	}
}

// TestClang compiles the package's CUDA C for sm_90 with Debian's
// clang-16 (no GPU needed), release and debug, with gen's test prelude,
// and checks that every kernel is there and that the tensor-core kernels
// use mma.sync, ldmatrix and cp.async.
func TestClang(t *testing.T) {
	clang := clangtest.Need(t, "clang-16")
	m, _, ok := meta.Lookup(fwd128)
	if !ok {
		t.Fatal("internal/attn is not registered")
	}
	dir := t.TempDir()
	cu := filepath.Join(dir, "attn.cu")
	must(t, os.WriteFile(cu, []byte(m.Source), 0o644))
	prelude, err := filepath.Abs("../../gen/testdata/clang")
	must(t, err)
	for _, debug := range []bool{false, true} {
		ptx := filepath.Join(dir, "attn.ptx")
		args := []string{"-x", "cuda", "--cuda-device-only", "-nocudainc", "-nocudalib", clangtest.NoCUDA, "--cuda-gpu-arch=sm_90",
			"-Xclang", "-target-feature", "-Xclang", "+ptx78", "-O2", "-S",
			"-I", prelude, "-include", "gocu_clang_prelude.h", "-Werror=return-type", "-Wno-unused-value", "-o", ptx, cu}
		if debug {
			args = append([]string{"-DGOCU_DEBUG"}, args...)
		}
		out, err := exec.Command(clang, args...).CombinedOutput()
		if err != nil {
			t.Fatalf("clang-16 (debug=%v) rejects the generated CUDA: %v\n%s", debug, err, out)
		}
		if debug {
			continue
		}
		b, err := os.ReadFile(ptx)
		must(t, err)
		for _, k := range []string{"fwd128", "bwdQ128", "bwdKV128", "fwd64", "bwdQ64", "bwdKV64"} {
			i := strings.Index(string(b), ".entry "+k+"(")
			if i < 0 {
				t.Fatalf("no entry %s in the PTX", k)
			}
			body := string(b[i:])
			if j := strings.Index(body[1:], ".entry "); j >= 0 {
				body = body[:j+1]
			}
			for _, re := range []string{`mma\.sync\.aligned\.m16n8k16\.row\.col\.f32\.bf16\.bf16\.f32`, `ldmatrix\.sync\.aligned`, `cp\.async`} {
				if !regexp.MustCompile(re).MatchString(body) {
					t.Errorf("%s: no %s in its PTX", k, re)
				}
			}
		}
		// fwd128WG: S from shared memory, P v from registers, both as
		// m64n128k16 with the operand kinds the PTX ISA gives them.
		body := ptxEntry(t, string(b), "fwd128WG")
		for _, re := range []string{
			`wgmma\.mma_async\.sync\.aligned\.m64n128k16\.f32\.bf16\.bf16 \{(%f\d+, ){63}%f\d+\}, %rd\d+, %rd\d+, p, 1, 1, 0, 0;`,
			`wgmma\.mma_async\.sync\.aligned\.m64n128k16\.f32\.bf16\.bf16 \{(%f\d+, ){63}%f\d+\}, \{%r\d+, %r\d+, %r\d+, %r\d+\}, %rd\d+, p, 1, 1, 1;`,
			`wgmma\.wait_group\.sync\.aligned 1;`, `wgmma\.wait_group\.sync\.aligned 0;`,
			`fence\.proxy\.async\.shared::cta;`, `cp\.async\.cg\.shared\.global`, `ex2\.approx`,
		} {
			if !regexp.MustCompile(re).MatchString(body) {
				t.Errorf("fwd128WG: no %s in its PTX", re)
			}
		}
		// fwd128WS: fwd128WG's instructions, the named barriers and the
		// register reallocation.
		body = ptxEntry(t, string(b), "fwd128WS")
		for _, re := range []string{
			`wgmma\.mma_async\.sync\.aligned\.m64n128k16\.f32\.bf16\.bf16 \{(%f\d+, ){63}%f\d+\}, %rd\d+, %rd\d+, p, 1, 1, 0, 0;`,
			`wgmma\.mma_async\.sync\.aligned\.m64n128k16\.f32\.bf16\.bf16 \{(%f\d+, ){63}%f\d+\}, \{%r\d+, %r\d+, %r\d+, %r\d+\}, %rd\d+, p, 1, 1, 1;`,
			`fence\.proxy\.async\.shared::cta;`, `cp\.async\.cg\.shared\.global`,
			`bar\.sync %r\d+, %r\d+;`, `bar\.arrive %r\d+, %r\d+;`,
			`setmaxnreg\.dec\.sync\.aligned\.u32 40;`, `setmaxnreg\.inc\.sync\.aligned\.u32 232;`,
		} {
			if !regexp.MustCompile(re).MatchString(body) {
				t.Errorf("fwd128WS: no %s in its PTX", re)
			}
		}
		// bwdKVWG and bwdQWG: Sᵀ and dPᵀ (S and dP) from shared memory
		// as m64n64k16, the products with P and dS from registers as
		// m64n128k16.
		for _, k := range []string{"bwdKVWG", "bwdQWG"} {
			body := ptxEntry(t, string(b), k)
			for _, re := range []string{
				`wgmma\.mma_async\.sync\.aligned\.m64n64k16\.f32\.bf16\.bf16 \{(%f\d+, ){31}%f\d+\}, %rd\d+, %rd\d+, p, 1, 1, 0, 0;`,
				`wgmma\.mma_async\.sync\.aligned\.m64n128k16\.f32\.bf16\.bf16 \{(%f\d+, ){63}%f\d+\}, \{%r\d+, %r\d+, %r\d+, %r\d+\}, %rd\d+, p, 1, 1, 1;`,
				`wgmma\.wait_group\.sync\.aligned 1;`, `wgmma\.wait_group\.sync\.aligned 0;`,
				`fence\.proxy\.async\.shared::cta;`, `cp\.async\.cg\.shared\.global`, `ex2\.approx`,
			} {
				if !regexp.MustCompile(re).MatchString(body) {
					t.Errorf("%s: no %s in its PTX", k, re)
				}
			}
		}
		// bwdAllWG: dS k for dq from shared memory, added with float
		// atomics (red or atom .add.f32).
		body = ptxEntry(t, string(b), "bwdAllWG")
		for _, re := range []string{
			`wgmma\.mma_async\.sync\.aligned\.m64n64k16\.f32\.bf16\.bf16 \{(%f\d+, ){31}%f\d+\}, %rd\d+, %rd\d+, p, 1, 1, 0, 1;`,
			`wgmma\.mma_async\.sync\.aligned\.m64n128k16\.f32\.bf16\.bf16 \{(%f\d+, ){63}%f\d+\}, \{%r\d+, %r\d+, %r\d+, %r\d+\}, %rd\d+, p, 1, 1, 1;`,
			`(red|atom)\.global\.add\.f32`,
		} {
			if !regexp.MustCompile(re).MatchString(body) {
				t.Errorf("bwdAllWG: no %s in its PTX", re)
			}
		}
		for _, k := range []string{"bwdPrep", "bwdDQ"} {
			if !strings.Contains(string(b), ".entry "+k+"(") {
				t.Errorf("no entry %s in the PTX", k)
			}
		}
	}
}

// ptxEntry returns the PTX of the entry point name.
func ptxEntry(t *testing.T, ptx, name string) string {
	t.Helper()
	i := strings.Index(ptx, ".entry "+name+"(")
	if i < 0 {
		t.Fatalf("no entry %s in the PTX", name)
	}
	body := ptx[i:]
	if j := strings.Index(body[1:], ".entry "); j >= 0 {
		body = body[:j+1]
	}
	return body
}
