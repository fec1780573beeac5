// Package dynlib finds and opens NVIDIA's shared libraries (libcuda,
// libnvrtc, libcublas, ...) at run time through purego, and calls into them,
// so that gocu builds without cgo and without a CUDA toolkit, and lights up
// where the libraries exist. It is the one loader and the one call path of
// the driver bindings (cuda, nvrtc, cublas, nccl).
//
// The search is the same for every library: an explicit file named by an
// environment variable, then the dynamic loader's own search (LD_LIBRARY_PATH,
// the ldconfig cache, RUNPATH), then fixed files, then the usual toolkit
// directories, then the layouts of NVIDIA's pip wheels inside Python
// environments. A candidate that loads but lacks a required symbol is closed
// and the search goes on. When nothing loads, the error lists every place
// that was tried and why it failed.
package dynlib

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/ebitengine/purego"
)

// Spec says where to look for one library.
type Spec struct {
	// What names the library in messages, e.g. "libnvrtc (NVRTC)".
	What string
	// Env names the variable holding an explicit file; when it is set only
	// that file is tried, so a wrong override is reported rather than
	// silently replaced by another library.
	Env string
	// Sonames are tried in order, newest first (libnvrtc.so.13, .so.12, ...).
	Sonames []string
	// Paths are names or files passed to dlopen as they are, in order,
	// after Sonames; each attempt is recorded under the path itself (the
	// CUDA driver's list of the directories distributions put it in).
	Paths []string
	// Dirs are toolkit directories; shell globs are expanded.
	Dirs []string
	// Wheel are directories relative to a Python site-packages folder
	// (nvidia/cu13/lib, nvidia/cuda_nvrtc/lib).
	Wheel []string
	// Deps are sonames opened from a candidate's own directory, before the
	// candidate, so that a wheel library whose dependencies sit beside it
	// (libcublas needs libcublasLt) loads without LD_LIBRARY_PATH.
	Deps []string
	// Require names symbols the library must export: a candidate that
	// loads without one of them is closed and recorded as "loaded, but it
	// has no SYMBOL: not WHAT", and the search goes on.
	Require []string
	// Global opens the library with RTLD_GLOBAL instead of RTLD_LOCAL.
	Global bool
	// NotFound is the sentinel the returned error unwraps to.
	NotFound error
}

// Attempt is one place that was tried and why it failed.
type Attempt struct {
	Path   string
	Reason string
}

// NotFoundError lists everything that was tried.
type NotFoundError struct {
	What  string
	Env   string
	Tried []Attempt
	err   error
}

// Error is one line: Summary and what to do. The places searched and why
// each failed are in Places, and in Error too when GOCU_LOAD_VERBOSE=1.
func (e *NotFoundError) Error() string {
	s := e.Summary()
	if e.Env != "" {
		s += "; set " + e.Env + " to the library file to use a specific one"
	}
	if os.Getenv("GOCU_LOAD_VERBOSE") == "1" {
		return s + "; tried:\n" + e.Places()
	}
	return s + " (GOCU_LOAD_VERBOSE=1 lists the places)"
}

// Places lists every path tried and why it failed, one a line.
func (e *NotFoundError) Places() string {
	var b strings.Builder
	for i, a := range e.Tried {
		if i > 0 {
			b.WriteByte('\n')
		}
		fmt.Fprintf(&b, "  %s: %s", a.Path, a.Reason)
	}
	return b.String()
}

// Summary says in one line what Error lists: "libnvrtc (NVRTC) not found
// (12 places searched)".
func (e *NotFoundError) Summary() string {
	return fmt.Sprintf("%s not found (%d places searched)", e.What, len(e.Tried))
}

// Unwrap returns the sentinel given in Spec.NotFound.
func (e *NotFoundError) Unwrap() error { return e.err }

// Lib is an opened library.
type Lib struct {
	Handle uintptr
	Path   string // the name or file that loaded
}

// Sym returns the address of a symbol, or an error naming it and the library.
func (l *Lib) Sym(name string) (uintptr, error) {
	if p := dlsym(l.Handle, name); p != 0 {
		return p, nil
	}
	return 0, fmt.Errorf("symbol %s not found in %s", name, l.Path)
}

// Close unloads the library (dlclose). Nothing resolved from it may be
// used afterwards.
func (l *Lib) Close() { dlclose(l.Handle) }

// Call calls the C function at fn with args, each an integer or a pointer
// converted to uintptr, and returns what the function left in the result
// register; C enums such as CUresult, nvrtcResult and cublasStatus_t are
// its low 32 bits (convert with int32 or a 32-bit Go type).
//
// Like purego.SyscallN, which it wraps, it is marked uintptrescapes:
// pointers converted to uintptr in the argument list of a call to it move
// to the heap and stay alive until the call returns, so neither the
// garbage collector nor a stack growth moves what C reads or writes. The
// variadic argument slice escapes with them: a call that builds it
// allocates once, a call that passes an existing slice (args...) does not.
//
//go:uintptrescapes
func Call(fn uintptr, args ...uintptr) uintptr {
	r, _, _ := purego.SyscallN(fn, args...)
	return r
}

// OpenFile opens one library by name or file, with no search: for the
// stand-ins the tests load from glibc.
func OpenFile(path string) (*Lib, error) {
	h, err := open(path, false)
	if err != nil {
		return nil, err
	}
	return &Lib{Handle: h, Path: path}, nil
}

// Open searches for the library as Spec describes.
func Open(s Spec) (*Lib, error) {
	nf := &NotFoundError{What: s.What, Env: s.Env, err: s.NotFound}
	// try opens path, recorded as label when it fails.
	try := func(path, label string) *Lib {
		h, err := open(path, s.Global)
		if err != nil {
			nf.Tried = append(nf.Tried, Attempt{label, shorten(path, err.Error())})
			return nil
		}
		l := &Lib{Handle: h, Path: path}
		for _, sym := range s.Require {
			if dlsym(h, sym) == 0 {
				l.Close()
				nf.Tried = append(nf.Tried, Attempt{label, fmt.Sprintf("loaded, but it has no %s: not %s", sym, s.What)})
				return nil
			}
		}
		return l
	}
	if s.Env != "" {
		if p := os.Getenv(s.Env); p != "" {
			if l := try(p, p+" (from "+s.Env+")"); l != nil {
				return l, nil
			}
			return nil, nf
		}
	}
	for _, name := range s.Sonames {
		if l := try(name, name+" (dynamic loader)"); l != nil {
			return l, nil
		}
	}
	for _, p := range s.Paths {
		if l := try(p, p); l != nil {
			return l, nil
		}
	}
	for _, dir := range Candidates(s.Dirs, s.Wheel) {
		if dir.Pattern != "" {
			nf.Tried = append(nf.Tried, Attempt{dir.Pattern, "no such directory"})
			continue
		}
		for _, name := range s.Sonames {
			p := filepath.Join(dir.Path, name)
			if _, err := os.Stat(p); err != nil {
				nf.Tried = append(nf.Tried, Attempt{p, "no such file"})
				continue
			}
			for _, dep := range s.Deps {
				// Best effort: a failure shows up when the library itself fails.
				if dp := filepath.Join(dir.Path, dep); fileExists(dp) {
					_, _ = open(dp, true)
				}
			}
			if l := try(p, p); l != nil {
				return l, nil
			}
		}
	}
	return nil, nf
}

// Dir is a directory to search, or (with Pattern set) a pattern that
// matched nothing, kept so the error can say it was looked at.
type Dir struct {
	Path    string
	Pattern string
}

// Candidates expands toolkit directories and wheel layouts into the
// directories to search, in order, without duplicates.
func Candidates(dirs, wheel []string) []Dir {
	var out []Dir
	seen := map[string]bool{}
	add := func(pattern string) {
		matches, _ := filepath.Glob(pattern)
		n := 0
		for _, m := range matches {
			if seen[m] || !isDir(m) {
				continue
			}
			seen[m] = true
			out = append(out, Dir{Path: m})
			n++
		}
		if n == 0 && !seen[pattern] {
			seen[pattern] = true
			out = append(out, Dir{Pattern: pattern})
		}
	}
	for _, d := range dirs {
		add(d)
	}
	for _, sp := range SitePackages() {
		for _, w := range wheel {
			add(filepath.Join(sp, w))
		}
	}
	return out
}

// SitePackages returns the site-packages patterns of the Python environments
// worth probing: the active virtualenv and conda environment, virtualenvs
// under /opt/*/.venv (where images put torch), and the user's ~/.local.
func SitePackages() []string {
	var prefixes []string
	for _, env := range []string{"VIRTUAL_ENV", "CONDA_PREFIX"} {
		if p := os.Getenv(env); p != "" {
			prefixes = append(prefixes, p)
		}
	}
	prefixes = append(prefixes, "/opt/*/.venv")
	if home, err := os.UserHomeDir(); err == nil {
		prefixes = append(prefixes, filepath.Join(home, ".local"))
	}
	out := make([]string, 0, len(prefixes))
	for _, p := range prefixes {
		out = append(out, filepath.Join(p, "lib", "python3*", "site-packages"))
	}
	return out
}

// shorten keeps the loader's reason and drops its repetition of the path.
func shorten(path, msg string) string {
	if s := strings.TrimPrefix(msg, path+": "); s != "" {
		return s
	}
	return "dlopen failed"
}

func fileExists(p string) bool {
	st, err := os.Stat(p)
	return err == nil && !st.IsDir()
}

func isDir(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.IsDir()
}
