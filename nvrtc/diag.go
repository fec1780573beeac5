package nvrtc

import (
	"fmt"
	"path"
	"regexp"
	"strconv"
	"strings"
)

// Diagnostic is one message of the compiler's log.
type Diagnostic struct {
	File     string // file name as NVRTC printed it; "" for messages about options
	Line     int    // 1-based; 0 when the message has no location
	Column   int    // 1-based byte column in Source; 0 when unknown
	Severity string // "error", "warning", "remark", "catastrophic error", ...
	Number   string // diagnostic number, e.g. "177-D", when NVRTC printed one
	Message  string
	Source   string   // the text of the offending line, when known
	Notes    []string // further lines: "detected during instantiation of ..."
}

// IsError reports whether the diagnostic stops the compilation.
func (d *Diagnostic) IsError() bool { return strings.Contains(d.Severity, "error") }

// String formats the diagnostic like a compiler does: location, severity,
// message, then the source line with a caret under the column.
func (d *Diagnostic) String() string {
	var b strings.Builder
	d.format(&b)
	return b.String()
}

func (d *Diagnostic) format(b *strings.Builder) {
	switch {
	case d.File != "" && d.Line > 0 && d.Column > 0:
		fmt.Fprintf(b, "%s:%d:%d: ", d.File, d.Line, d.Column)
	case d.File != "" && d.Line > 0:
		fmt.Fprintf(b, "%s:%d: ", d.File, d.Line)
	case d.File != "":
		fmt.Fprintf(b, "%s: ", d.File)
	}
	b.WriteString(d.Severity)
	if d.Number != "" {
		b.WriteString(" #" + d.Number)
	}
	b.WriteString(": " + d.Message + "\n")
	if d.Source != "" {
		num := strconv.Itoa(d.Line)
		pad := strings.Repeat(" ", len(num))
		fmt.Fprintf(b, " %s | %s\n", num, d.Source)
		if d.Column > 0 && d.Column <= len(d.Source)+1 {
			// Keep tabs so the caret lines up however the terminal shows them.
			indent := []byte(d.Source[:d.Column-1])
			for i, c := range indent {
				if c != '\t' {
					indent[i] = ' '
				}
			}
			fmt.Fprintf(b, " %s | %s^\n", pad, indent)
		}
	}
	for _, n := range d.Notes {
		b.WriteString("    " + n + "\n")
	}
}

// CompileError is a program NVRTC refused to compile. errors.Is(err,
// nvrtc.Compilation) is true for it.
type CompileError struct {
	Program     string // program name
	Arch        string
	Log         string // NVRTC's full log
	Diagnostics []Diagnostic
}

// maxShown bounds the diagnostics Error prints; the log keeps them all.
const maxShown = 20

func (e *CompileError) Error() string {
	var b strings.Builder
	nerr, nwarn := 0, 0
	for i := range e.Diagnostics {
		if e.Diagnostics[i].IsError() {
			nerr++
		} else {
			nwarn++
		}
	}
	fmt.Fprintf(&b, "nvrtc: compiling %s for %s failed", e.Program, e.Arch)
	if len(e.Diagnostics) == 0 {
		if log := strings.TrimSpace(e.Log); log != "" {
			b.WriteString(":\n" + log)
		}
		return b.String()
	}
	b.WriteString(": " + plural(nerr, "error"))
	if nwarn > 0 {
		b.WriteString(", " + plural(nwarn, "warning"))
	}
	b.WriteString("\n")
	for i := range e.Diagnostics {
		if i == maxShown {
			fmt.Fprintf(&b, "... and %d more (see CompileError.Log)\n", len(e.Diagnostics)-maxShown)
			break
		}
		e.Diagnostics[i].format(&b)
	}
	return strings.TrimRight(b.String(), "\n")
}

// Unwrap lets errors.Is(err, Compilation) match.
func (e *CompileError) Unwrap() error { return Compilation }

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return strconv.Itoa(n) + " " + word + "s"
}

var (
	// kernel.cu(12): error: identifier "x" is undefined
	// kernel.cu(3): warning #177-D: variable "y" was declared but never referenced
	// (a column, "kernel.cu(12,7)", is accepted should NVRTC ever print one)
	locatedRE = regexp.MustCompile(`^(.+?)\((\d+)(?:,(\d+))?\): (catastrophic error|fatal error|internal error|error|warning|remark|note)(?: #([0-9A-Za-z-]+))?: (.*)$`)
	// nvrtc: error: invalid value for --gpu-architecture (-arch)
	unlocatedRE = regexp.MustCompile(`^(\S+): (catastrophic error|fatal error|internal error|error|warning): (.*)$`)
	caretRE     = regexp.MustCompile(`^[ \t]*\^[ \t]*$`)
)

// ParseLog splits an NVRTC log into diagnostics. sources maps file names (the
// program name, header names) to their text, so that each diagnostic gets the
// offending line and, from the caret NVRTC prints under it, the column. A nil
// map is fine: the line NVRTC echoed is used then.
func ParseLog(log string, sources map[string]string) []Diagnostic {
	var out []Diagnostic
	var cur *Diagnostic
	var echoed string // the source line as NVRTC printed it
	finish := func() {
		if cur != nil {
			out = append(out, *cur)
			cur, echoed = nil, ""
		}
	}
	lines := strings.Split(strings.ReplaceAll(log, "\r\n", "\n"), "\n")
	for _, ln := range lines {
		if m := locatedRE.FindStringSubmatch(ln); m != nil {
			finish()
			n, _ := strconv.Atoi(m[2])
			col, _ := strconv.Atoi(m[3])
			cur = &Diagnostic{File: m[1], Line: n, Column: col, Severity: m[4], Number: m[5], Message: m[6]}
			cur.Source = sourceLine(sources, m[1], n)
			continue
		}
		if m := unlocatedRE.FindStringSubmatch(ln); m != nil {
			finish()
			cur = &Diagnostic{Severity: m[2], Message: m[3]}
			if m[1] != "nvrtc" {
				cur.File = m[1]
			}
			continue
		}
		if strings.TrimSpace(ln) == "" {
			continue // NVRTC sometimes puts a blank line between the echo and the caret
		}
		if ln[0] != ' ' && ln[0] != '\t' {
			finish() // "1 error detected ...", "Compilation terminated.", "Remark: ..."
			continue
		}
		if cur == nil {
			continue
		}
		switch {
		case caretRE.MatchString(ln):
			if cur.Column == 0 {
				cur.Column = column(cur.Source, echoed, strings.IndexByte(ln, '^'))
			}
		case echoed == "" && cur.Line > 0 && (cur.Source == "" || strings.TrimSpace(ln) == strings.TrimSpace(cur.Source)):
			echoed = ln
			if cur.Source == "" {
				cur.Source = strings.TrimSpace(ln)
			}
		default:
			cur.Notes = append(cur.Notes, strings.TrimSpace(ln))
		}
	}
	finish()
	return out
}

// column maps the caret's position under NVRTC's echo of a line to a 1-based
// column of the line itself: both are aligned on their first non-blank
// character, since NVRTC indents the echo.
func column(source, echoed string, caret int) int {
	if echoed == "" || caret < 0 {
		return 0
	}
	text := strings.TrimSpace(echoed)
	if text == "" {
		return 0
	}
	inEcho := strings.Index(echoed, text)
	inSource := strings.Index(source, text)
	if inSource < 0 {
		// source is the trimmed echo itself
		inSource = 0
	}
	col := caret - inEcho + inSource + 1
	if col < 1 || col > len(source)+1 {
		return 0
	}
	return col
}

// sourceLine returns line n (1-based) of the named file, trailing blanks
// removed, or "" when the file or the line is unknown.
func sourceLine(sources map[string]string, file string, n int) string {
	src, ok := sources[file]
	if !ok {
		// NVRTC may print a header with a directory prefix.
		for name, s := range sources {
			if path.Base(name) == path.Base(file) {
				src, ok = s, true
				break
			}
		}
	}
	if !ok || n < 1 {
		return ""
	}
	for i := 1; ; i++ {
		j := strings.IndexByte(src, '\n')
		if i == n {
			if j >= 0 {
				src = src[:j]
			}
			return strings.TrimRight(src, " \t\r")
		}
		if j < 0 {
			return ""
		}
		src = src[j+1:]
	}
}
