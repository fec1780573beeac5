package nvrtc

import (
	"crypto/sha256"
	"encoding/hex"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

// fakeCompiler stands in for NVRTC: its output is a deterministic function of
// every input, so a cache hit can be checked against what compiling gives.
type fakeCompiler struct {
	id    string
	delay time.Duration
	size  int // bytes of code; 0 means 4096
	calls atomic.Int64
}

func (f *fakeCompiler) ID() (string, error) {
	if f.id == "" {
		return "fake 1.0", nil
	}
	return f.id, nil
}

func (f *fakeCompiler) Compile(src string, opts Options) (*Result, error) {
	f.calls.Add(1)
	time.Sleep(f.delay)
	format, err := opts.validate()
	if err != nil {
		return nil, err
	}
	if i := strings.Index(src, "#error"); i >= 0 {
		line := strings.Count(src[:i], "\n") + 1
		log := opts.name() + "(" + strconv.Itoa(line) + "): error: forced failure\n"
		return nil, &CompileError{Program: opts.name(), Arch: opts.Arch, Log: log,
			Diagnostics: ParseLog(log, sourcesOf(src, opts.name(), opts.Headers))}
	}
	return &Result{
		Code:    fakeCode(src, &opts, f.size),
		Format:  format,
		Log:     fakeLog(src, &opts),
		Lowered: fakeLowered(&opts),
	}, nil
}

// fakeCode expands a digest of all inputs into size bytes.
func fakeCode(src string, opts *Options, size int) []byte {
	if size == 0 {
		size = 4096
	}
	seed := sha256.Sum256([]byte(src + "\x00" + strings.Join(opts.Args(), "\x00") + "\x00" + strings.Join(opts.NameExpressions, "\x00") + headerText(opts)))
	out := make([]byte, 0, size+32)
	for len(out) < size {
		out = append(out, seed[:]...)
		seed = sha256.Sum256(seed[:])
	}
	return out[:size]
}

func headerText(opts *Options) string {
	var b strings.Builder
	for _, n := range sortedKeys(opts.Headers) {
		b.WriteString(n + "\x00" + opts.Headers[n] + "\x00")
	}
	return b.String()
}

func fakeLog(src string, opts *Options) string {
	if strings.Contains(src, "unused") {
		return opts.name() + "(1): warning #177-D: variable \"unused\" was declared but never referenced\n"
	}
	return ""
}

func fakeLowered(opts *Options) map[string]string {
	if len(opts.NameExpressions) == 0 {
		return nil
	}
	m := map[string]string{}
	for _, e := range opts.NameExpressions {
		s := sha256.Sum256([]byte(e))
		m[e] = "_Z" + hex.EncodeToString(s[:6])
	}
	return m
}
