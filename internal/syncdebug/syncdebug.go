// Package syncdebug reports the host synchronisations that gocu's
// operations cause, like torch.cuda.set_sync_debug_mode: an operation
// that makes the host wait for the GPU (reading an array, a copy that
// waits, a copy into pageable memory) calls Report, which names the
// user's call site. The mode comes from GOCU_SYNC_DEBUG (off, warn,
// error) and gocu.SetSyncDebugMode, the public face of Set.
//
// When the mode is off, callers pay one atomic load (On) and nothing else.
// It imports only the standard library, so that every package of gocu,
// the driver bindings included, may use it.
package syncdebug

import (
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Mode says what happens at a synchronisation an operation causes.
type Mode int32

// The modes.
const (
	Off   Mode = iota // nothing is reported
	Warn              // one line to standard error, rate-limited per call site
	Error             // the operation fails with ErrHiddenSync
)

func (m Mode) String() string {
	switch m {
	case Off:
		return "off"
	case Warn:
		return "warn"
	case Error:
		return "error"
	}
	return "Mode(" + strconv.Itoa(int(m)) + ")"
}

// EnvVar is the environment variable that sets the initial mode.
const EnvVar = "GOCU_SYNC_DEBUG"

var mode atomic.Int32

func init() {
	m, err := Parse(os.Getenv(EnvVar))
	if err != nil {
		fmt.Fprintf(os.Stderr, "gocu: %s: %v; synchronisations are not reported\n", EnvVar, err)
		return
	}
	mode.Store(int32(m))
}

// Parse reads a mode as GOCU_SYNC_DEBUG spells it: off, warn or error
// (or 0, 1, 2, as PyTorch numbers them); "" is off.
func Parse(s string) (Mode, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "", "0", "off", "default":
		return Off, nil
	case "1", "warn":
		return Warn, nil
	case "2", "error":
		return Error, nil
	}
	return Off, fmt.Errorf("%q is not a mode: want off, warn or error", s)
}

// On reports whether synchronisations are reported; callers test it
// before anything else, so that the off mode costs one atomic load.
func On() bool { return mode.Load() != 0 }

// Get returns the mode.
func Get() Mode { return Mode(mode.Load()) }

// Set sets the mode and returns the previous one. A mode out of range is
// taken as Warn.
func Set(m Mode) Mode {
	if m < Off || m > Error {
		m = Warn
	}
	return Mode(mode.Swap(int32(m)))
}

// Kind says why an operation waits for the device.
type Kind uint8

// The kinds of synchronisation.
const (
	Read         Kind = iota + 1 // device data read to the host: Item, ToSlice, String
	Copy                         // a copy that waits for the device: Buffer.CopyTo, CopyFrom
	PageableCopy                 // an asynchronous device-to-host copy into pageable memory
	DataSize                     // a result whose size depends on the data on the device
	Launch                       // a launch with In, Out or InOut buffers, which waits for the kernel
	OutOfMemory                  // an allocation that found the device full and waits to retry
)

func (k Kind) String() string {
	switch k {
	case Read:
		return "a read to the host"
	case Copy:
		return "a copy that waits"
	case PageableCopy:
		return "a copy into pageable memory"
	case DataSize:
		return "a data-dependent size"
	case Launch:
		return "a launch with host buffers"
	case OutOfMemory:
		return "an out-of-memory retry"
	}
	return "Kind(" + strconv.Itoa(int(k)) + ")"
}

// ErrHiddenSync is the sentinel of the errors that the error mode makes
// operations fail with.
var ErrHiddenSync = errors.New("hidden synchronisation")

// Site is where a synchronisation was asked for: the first caller outside
// gocu's packages.
type Site struct {
	Function string // package path and name, as runtime.Frame has it
	File     string
	Line     int
}

func (s Site) String() string {
	if s.File == "" {
		return "an unknown call site"
	}
	return s.File + ":" + strconv.Itoa(s.Line) + " (" + s.Function + ")"
}

// SyncError is the error of an operation refused in the error mode.
type SyncError struct {
	Op   string // the operation, such as "Item" or "CopyTo"
	Kind Kind
	Site Site
}

func (e *SyncError) Error() string {
	return fmt.Sprintf("%v: %s waits for the device (%v) at %v; GOCU_SYNC_DEBUG=error refuses it",
		ErrHiddenSync, e.Op, e.Kind, e.Site)
}

// Is makes errors.Is(err, ErrHiddenSync) true.
func (e *SyncError) Is(target error) bool { return target == ErrHiddenSync }

// Report reports that op is about to wait for the device, for the reason
// kind. In the error mode it returns a *SyncError, which the operation
// returns instead of waiting; otherwise nil. Call it only when On is true.
func Report(kind Kind, op string) error {
	m := Get()
	if m == Off {
		return nil
	}
	pc, site := caller()
	if m == Error && kind != OutOfMemory {
		return &SyncError{Op: op, Kind: kind, Site: site}
	}
	warn(pc, kind, op, site)
	return nil
}

// modulePath is the import path of gocu's module.
const modulePath = "github.com/gocu-dev/gocu"

// Ours reports whether a frame (its function and file) is in gocu's
// library code: the module's packages, but not their tests, examples and
// commands, whose lines are the ones a user wants to see.
func Ours(fn, file string) bool {
	if !strings.HasPrefix(fn, modulePath) {
		return false
	}
	rest := fn[len(modulePath):]
	if rest == "" || (rest[0] != '.' && rest[0] != '/') {
		return false // another module whose path merely starts the same
	}
	if strings.HasSuffix(file, "_test.go") {
		return false
	}
	return !strings.HasPrefix(rest, "/examples/") && !strings.HasPrefix(rest, "/cmd/")
}

// caller returns the program counter and site of the first caller outside
// gocu's packages and the runtime, or of the outermost frame of gocu's
// when there is none (work started by gocu itself).
func caller() (uintptr, Site) {
	var pcs [64]uintptr
	n := runtime.Callers(3, pcs[:])
	frames := runtime.CallersFrames(pcs[:n])
	var last runtime.Frame
	for {
		f, more := frames.Next()
		if !Ours(f.Function, f.File) && !strings.HasPrefix(f.Function, "runtime.") && f.Function != "" {
			return f.PC, Site{Function: f.Function, File: f.File, Line: f.Line}
		}
		if Ours(f.Function, f.File) {
			last = f
		}
		if !more {
			break
		}
	}
	return last.PC, Site{Function: last.Function, File: last.File, Line: last.Line}
}

// Every is how often a call site that keeps synchronising is reported
// again in the warn mode, with the count of the reports held back.
const Every = 5 * time.Second

type key struct {
	pc   uintptr
	kind Kind
	op   string
}

type seen struct {
	last time.Time
	held int // reports held back since last
}

var (
	outMu sync.Mutex
	out   io.Writer = os.Stderr
	sites           = map[key]*seen{}
	now             = time.Now
)

// maxSites bounds the call sites remembered for rate limiting.
const maxSites = 1 << 12

func warn(pc uintptr, kind Kind, op string, site Site) {
	outMu.Lock()
	defer outMu.Unlock()
	k := key{pc, kind, op}
	t := now()
	s := sites[k]
	if s != nil && t.Sub(s.last) < Every {
		s.held++
		return
	}
	more := ""
	if s != nil && s.held > 0 {
		more = fmt.Sprintf(" (and %d more times in the last %v)", s.held, t.Sub(s.last).Round(time.Second))
	}
	if s == nil {
		if len(sites) >= maxSites {
			clear(sites)
		}
		s = &seen{}
		sites[k] = s
	}
	s.last, s.held = t, 0
	fmt.Fprintf(out, "gocu: %s: %s waits for the device (%v) at %v%s\n", ErrHiddenSync, op, kind, site, more)
}

// SetOutput sets where the warn mode writes (standard error by default)
// and forgets the call sites seen, for tests. It returns the previous
// writer.
func SetOutput(w io.Writer) io.Writer {
	outMu.Lock()
	defer outMu.Unlock()
	old := out
	out = w
	clear(sites)
	return old
}
