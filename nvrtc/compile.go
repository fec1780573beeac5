package nvrtc

import (
	"runtime"
	"sort"
	"unsafe"

	"github.com/gocu-dev/gocu/internal/dynlib"
)

// Result is compiled code.
type Result struct {
	// Code is the CUBIN image, or the PTX text followed by its NUL byte (as
	// cuModuleLoadData expects it).
	Code   []byte
	Format Format
	// Log is NVRTC's log; it can hold warnings when compilation succeeds.
	Log string
	// Diagnostics are the log's messages (warnings, remarks) with their
	// source lines.
	Diagnostics []Diagnostic
	// Lowered maps each of Options.NameExpressions to its mangled name, the
	// name to look the kernel up by in the loaded module.
	Lowered map[string]string
	// Cached is true when the result came from the disk cache.
	Cached bool
}

// PTXText returns PTX code as text, without the NUL byte. It returns "" for
// a CUBIN.
func (r *Result) PTXText() string {
	if r.Format != PTX {
		return ""
	}
	c := r.Code
	for len(c) > 0 && c[len(c)-1] == 0 {
		c = c[:len(c)-1]
	}
	return string(c)
}

// Compile compiles CUDA C++ source with NVRTC. It does not use the disk
// cache (see Cache). A program NVRTC rejects gives a *CompileError; other
// failures give an *Error (or, before NVRTC is called, an error matching
// errors.Is(err, InvalidOption)). Compile is safe for concurrent use.
func Compile(src string, opts Options) (*Result, error) {
	format, err := opts.validate()
	if err != nil {
		return nil, err
	}
	l, err := load()
	if err != nil {
		return nil, err
	}
	return l.compile(src, &opts, format)
}

func (l *lib) compile(src string, opts *Options, format Format) (*Result, error) {
	name := opts.name()
	prog, err := l.create(src, name, opts.Headers)
	if err != nil {
		return nil, err
	}
	defer dynlib.Call(l.destroyProgram, uintptr(unsafe.Pointer(&prog)))

	exprs := make([]*byte, len(opts.NameExpressions))
	for i, e := range opts.NameExpressions {
		exprs[i] = dynlib.CString(e)
		if err := l.check("nvrtcAddNameExpression", Code(dynlib.Call(l.addNameExpression, prog, uintptr(unsafe.Pointer(exprs[i]))))); err != nil {
			return nil, err
		}
	}

	args := opts.Args()
	argv := make([]uintptr, len(args))
	keep := make([]*byte, len(args))
	for i, a := range args {
		keep[i] = dynlib.CString(a)
		argv[i] = uintptr(unsafe.Pointer(keep[i]))
	}
	code := Code(dynlib.Call(l.compileProgram, prog, uintptr(len(argv)), uintptr(unsafe.Pointer(unsafe.SliceData(argv)))))
	runtime.KeepAlive(keep)

	log, logErr := l.log(prog)
	switch {
	case code == Compilation:
		return nil, &CompileError{
			Program:     name,
			Arch:        opts.Arch,
			Log:         log,
			Diagnostics: ParseLog(log, sourcesOf(src, name, opts.Headers)),
		}
	case code != Success:
		return nil, &Error{Func: "nvrtcCompileProgram", Code: code, Message: l.errorString(code), Log: log}
	case logErr != nil:
		return nil, logErr
	}

	res := &Result{Format: format, Log: log}
	if log != "" {
		res.Diagnostics = ParseLog(log, sourcesOf(src, name, opts.Headers))
	}
	if format == CUBIN {
		res.Code, err = l.output(prog, "nvrtcGetCUBIN", l.getCUBINSize, l.getCUBIN)
	} else {
		res.Code, err = l.output(prog, "nvrtcGetPTX", l.getPTXSize, l.getPTX)
	}
	if err != nil {
		return nil, err
	}
	if len(opts.NameExpressions) > 0 {
		res.Lowered = make(map[string]string, len(opts.NameExpressions))
		for i, e := range opts.NameExpressions {
			var p *byte
			if err := l.check("nvrtcGetLoweredName", Code(dynlib.Call(l.getLoweredName, prog, uintptr(unsafe.Pointer(exprs[i])), uintptr(unsafe.Pointer(&p))))); err != nil {
				return nil, err
			}
			// The name lives in the program: copy it before it is destroyed.
			res.Lowered[e] = dynlib.GoString(p)
		}
	}
	runtime.KeepAlive(exprs)
	return res, nil
}

// create makes an nvrtcProgram. Headers are passed sorted by name so that
// the same inputs always make the same program.
func (l *lib) create(src, name string, headers map[string]string) (uintptr, error) {
	names := make([]string, 0, len(headers))
	for n := range headers {
		names = append(names, n)
	}
	sort.Strings(names)
	var contents, includes []uintptr
	keep := make([]*byte, 0, 2*len(names)+2)
	for _, n := range names {
		c, i := dynlib.CString(headers[n]), dynlib.CString(n)
		keep = append(keep, c, i)
		contents = append(contents, uintptr(unsafe.Pointer(c)))
		includes = append(includes, uintptr(unsafe.Pointer(i)))
	}
	csrc, cname := dynlib.CString(src), dynlib.CString(name)
	var prog uintptr
	code := Code(dynlib.Call(l.createProgram,
		uintptr(unsafe.Pointer(&prog)),
		uintptr(unsafe.Pointer(csrc)),
		uintptr(unsafe.Pointer(cname)),
		uintptr(len(names)),
		uintptr(unsafe.Pointer(unsafe.SliceData(contents))),
		uintptr(unsafe.Pointer(unsafe.SliceData(includes)))))
	runtime.KeepAlive(keep)
	runtime.KeepAlive(csrc)
	runtime.KeepAlive(cname)
	if err := l.check("nvrtcCreateProgram", code); err != nil {
		return 0, err
	}
	return prog, nil
}

// log returns the program log without its NUL byte.
func (l *lib) log(prog uintptr) (string, error) {
	b, err := l.output(prog, "nvrtcGetProgramLog", l.getProgramLogSize, l.getProgramLog)
	for len(b) > 0 && b[len(b)-1] == 0 {
		b = b[:len(b)-1]
	}
	return string(b), err
}

// output reads one of the program's size-then-bytes outputs.
func (l *lib) output(prog uintptr, fn string, sizeFn, getFn uintptr) ([]byte, error) {
	var size uint64 // size_t
	if err := l.check(fn+"Size", Code(dynlib.Call(sizeFn, prog, uintptr(unsafe.Pointer(&size))))); err != nil {
		return nil, err
	}
	if size == 0 {
		return nil, &Error{Func: fn + "Size", Code: InvalidProgram, Message: "the compilation produced no output of this kind"}
	}
	buf := make([]byte, size)
	if err := l.check(fn, Code(dynlib.Call(getFn, prog, uintptr(unsafe.Pointer(&buf[0]))))); err != nil {
		return nil, err
	}
	return buf, nil
}

// sourcesOf maps every file name a diagnostic can point at to its text.
func sourcesOf(src, name string, headers map[string]string) map[string]string {
	m := make(map[string]string, len(headers)+1)
	for n, s := range headers {
		m[n] = s
	}
	m[name] = src
	return m
}
