package nvrtc

import (
	"errors"
	"strings"
	"testing"
)

const diagSrc = "#include \"util.cuh\"\n" + // 1
	"extern \"C\" __global__ void k(float* x, int n) {\n" + // 2
	"    int i = threadIdx.x;\n" + // 3
	"    x[i] = undefined_thing + 1;\n" + // 4
	"\tint unused;\n" + // 5
	"}\n"

const diagHeader = "#pragma once\n__device__ int two() { return 2 }\n"

// A log in the form NVRTC 12 and 13 write: the line echoed with two more
// spaces of indentation, a caret under the column, blank lines between.
const log12 = `kernel.cu(4): error: identifier "undefined_thing" is undefined
      x[i] = undefined_thing + 1;
             ^

kernel.cu(5): warning #177-D: variable "unused" was declared but never referenced
  	int unused;
  	    ^

Remark: The warnings can be suppressed with "-diag-suppress <warning-number>"

util.cuh(2): error: expected a ";"
  __device__ int two() { return 2 }
                                  ^

2 errors detected in the compilation of "kernel.cu".
`

func TestParseLogWithEchoAndCaret(t *testing.T) {
	ds := ParseLog(log12, sourcesOf(diagSrc, "kernel.cu", map[string]string{"util.cuh": diagHeader}))
	want := []Diagnostic{
		{File: "kernel.cu", Line: 4, Column: 12, Severity: "error", Message: `identifier "undefined_thing" is undefined`, Source: "    x[i] = undefined_thing + 1;"},
		{File: "kernel.cu", Line: 5, Column: 6, Severity: "warning", Number: "177-D", Message: `variable "unused" was declared but never referenced`, Source: "\tint unused;"},
		{File: "util.cuh", Line: 2, Column: 33, Severity: "error", Message: `expected a ";"`, Source: "__device__ int two() { return 2 }"},
	}
	if len(ds) != len(want) {
		t.Fatalf("got %d diagnostics, want %d: %+v", len(ds), len(want), ds)
	}
	for i := range want {
		g, w := ds[i], want[i]
		if g.File != w.File || g.Line != w.Line || g.Column != w.Column || g.Severity != w.Severity ||
			g.Number != w.Number || g.Message != w.Message || g.Source != w.Source || len(g.Notes) != 0 {
			t.Errorf("diagnostic %d:\n got %+v\nwant %+v", i, g, w)
		}
	}
	// The column points at the identifier in the real line.
	if d := ds[0]; d.Source[d.Column-1:][:len("undefined_thing")] != "undefined_thing" {
		t.Errorf("column %d does not point at the identifier", d.Column)
	}
	if d := ds[1]; d.Source[d.Column-1:][:len("unused")] != "unused" {
		t.Errorf("column %d does not point at the variable past a tab", d.Column)
	}
}

// NVRTC 11 prints no echo: the source line comes from the program.
func TestParseLogWithoutEcho(t *testing.T) {
	log := "kernel.cu(4): error: identifier \"undefined_thing\" is undefined\n\n" +
		"util.cuh(2): error: expected a \";\"\n\n2 errors detected in the compilation of \"kernel.cu\".\n"
	ds := ParseLog(log, sourcesOf(diagSrc, "kernel.cu", map[string]string{"util.cuh": diagHeader}))
	if len(ds) != 2 {
		t.Fatalf("%+v", ds)
	}
	if ds[0].Source != "    x[i] = undefined_thing + 1;" || ds[0].Column != 0 {
		t.Errorf("%+v", ds[0])
	}
	if ds[1].Source != "__device__ int two() { return 2 }" {
		t.Errorf("header line not found: %+v", ds[1])
	}
}

func TestParseLogUnknownFileUsesEcho(t *testing.T) {
	log := "/usr/local/cuda/include/thing.h(10): error: expected a \")\"\n    foo(a b);\n          ^\n"
	ds := ParseLog(log, nil)
	if len(ds) != 1 {
		t.Fatalf("%+v", ds)
	}
	d := ds[0]
	if d.File != "/usr/local/cuda/include/thing.h" || d.Line != 10 || d.Source != "foo(a b);" || d.Column != 7 {
		t.Errorf("%+v", d)
	}
}

func TestParseLogNotesAndUnlocated(t *testing.T) {
	src := "template <typename T> __device__ T f(T x) { return x.y; }\n__global__ void k(int* p) { *p = f(*p); }\n"
	log := `kernel.cu(1): error: expression must have class type but it has type "int"
  template <typename T> __device__ T f(T x) { return x.y; }
                                                     ^
          detected during instantiation of "T f(T) [with T=int]" at line 2

1 error detected in the compilation of "kernel.cu".
nvrtc: error: invalid value for --gpu-architecture (-arch)
`
	ds := ParseLog(log, map[string]string{"kernel.cu": src})
	if len(ds) != 2 {
		t.Fatalf("%+v", ds)
	}
	if got := ds[0].Notes; len(got) != 1 || !strings.HasPrefix(got[0], "detected during instantiation") {
		t.Errorf("notes = %q", got)
	}
	if ds[0].Column != 52 || src[ds[0].Column-1] != 'x' {
		t.Errorf("column = %d", ds[0].Column)
	}
	if d := ds[1]; d.File != "" || d.Line != 0 || d.Severity != "error" || !strings.Contains(d.Message, "--gpu-architecture") {
		t.Errorf("unlocated diagnostic = %+v", d)
	}
}

func TestParseLogCatastrophic(t *testing.T) {
	log := "kernel.cu(1): catastrophic error: cannot open source file \"nothere.h\"\n  #include \"nothere.h\"\n                      ^\n\n1 catastrophic error detected in the compilation of \"kernel.cu\".\nCompilation terminated.\n"
	ds := ParseLog(log, map[string]string{"kernel.cu": "#include \"nothere.h\"\n"})
	if len(ds) != 1 || ds[0].Severity != "catastrophic error" || !ds[0].IsError() || ds[0].Column != 21 {
		t.Fatalf("%+v", ds)
	}
}

func TestParseLogColumnInHeader(t *testing.T) {
	ds := ParseLog("kernel.cu(2,9): error: bad\n", map[string]string{"kernel.cu": "a\n    int x = ;\n"})
	if len(ds) != 1 || ds[0].Line != 2 || ds[0].Column != 9 || ds[0].Source != "    int x = ;" {
		t.Fatalf("%+v", ds)
	}
}

func TestParseLogEmpty(t *testing.T) {
	if ds := ParseLog("", nil); len(ds) != 0 {
		t.Errorf("%+v", ds)
	}
}

func TestCompileErrorMessage(t *testing.T) {
	e := &CompileError{Program: "kernel.cu", Arch: "sm_90", Log: log12,
		Diagnostics: ParseLog(log12, sourcesOf(diagSrc, "kernel.cu", map[string]string{"util.cuh": diagHeader}))}
	msg := e.Error()
	for _, want := range []string{
		"nvrtc: compiling kernel.cu for sm_90 failed: 2 errors, 1 warning\n",
		"kernel.cu:4:12: error: identifier \"undefined_thing\" is undefined\n",
		" 4 |     x[i] = undefined_thing + 1;\n",
		"   |            ^\n",
		"kernel.cu:5:6: warning #177-D: variable \"unused\" was declared but never referenced\n",
		" 5 | \tint unused;\n",
		"   | \t    ^\n", // the tab is kept so the caret lines up
		"util.cuh:2:33: error: expected a \";\"",
	} {
		if !strings.Contains(msg, want) {
			t.Errorf("message lacks %q:\n%s", want, msg)
		}
	}
	if !errors.Is(e, Compilation) {
		t.Error("errors.Is(CompileError, Compilation) is false")
	}
	var target *CompileError
	if !errors.As(error(e), &target) {
		t.Error("errors.As fails")
	}
}

func TestCompileErrorWithoutDiagnostics(t *testing.T) {
	e := &CompileError{Program: "p.cu", Arch: "sm_90", Log: "something odd happened\n"}
	if got := e.Error(); got != "nvrtc: compiling p.cu for sm_90 failed:\nsomething odd happened" {
		t.Errorf("%q", got)
	}
}

func TestCompileErrorShowsAtMostMaxShown(t *testing.T) {
	var b strings.Builder
	for i := 1; i <= maxShown+5; i++ {
		b.WriteString("kernel.cu(1): error: e\n")
	}
	e := &CompileError{Program: "kernel.cu", Arch: "sm_90", Log: b.String(), Diagnostics: ParseLog(b.String(), nil)}
	if msg := e.Error(); !strings.Contains(msg, "... and 5 more") || strings.Count(msg, "error: e") != maxShown {
		t.Errorf("%s", msg)
	}
}
