package nvrtc

import (
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/gocu-dev/gocu/internal/owner"
)

// Compiler is what a Cache calls on a miss. NVRTC is the real one; tests
// use fakes, so every cache behaviour is tested without the library.
type Compiler interface {
	// ID names the compiler and its version; it is part of every key, so
	// entries of another version are never used.
	ID() (string, error)
	Compile(src string, opts Options) (*Result, error)
}

// NVRTC is the Compiler backed by libnvrtc.
var NVRTC Compiler = nvrtcCompiler{}

type nvrtcCompiler struct{}

// ID is the NVRTC version plus the identity (path, size, modification
// time) of the library file, so that a patch release, which keeps the
// version number, still gets fresh code.
func (nvrtcCompiler) ID() (string, error) {
	l, err := load()
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("nvrtc %d.%d %s", l.major, l.minor, l.fileID), nil
}

func (nvrtcCompiler) Compile(src string, opts Options) (*Result, error) { return Compile(src, opts) }

// CacheConfig configures a Cache. The zero value is the default cache.
type CacheConfig struct {
	// Dir is the cache directory; "" means DefaultDir().
	Dir string
	// Driver is the version of the driver that will load the code (e.g.
	// "13000"). It is part of every key: a new driver gets fresh code.
	Driver string
	// Compiler is called on a miss; nil means NVRTC.
	Compiler Compiler
	// Disabled turns the cache off: every Compile compiles. GOCU_CACHE=off
	// in the environment does the same.
	Disabled bool
}

// Cache is a disk cache of compiled code. Entries are keyed by a hash of every
// input, written atomically, and verified on every read; a bad entry is
// recompiled and replaced, never used. A failed compilation is never stored.
// Any number of goroutines and processes may share one directory.
type Cache struct {
	dir      string
	driver   string
	compiler Compiler
	enabled  bool

	mu      sync.Mutex
	flights map[Key]*flight

	hits, misses, corrupt, writeErrors atomic.Int64
}

type flight struct {
	done chan struct{}
	res  *Result
	err  error
}

// ErrInsecureDir is returned for a cache directory that another user owns:
// code loaded from it would run on the GPU with this user's rights.
var ErrInsecureDir = errors.New("nvrtc: cache directory is not safe")

// Suffix of entry files; temporary files start with tmpPrefix.
const (
	entrySuffix = ".nvrtc"
	tmpPrefix   = ".tmp-"
)

// DefaultDir returns $GOCU_CACHE_DIR, or the gocu folder of the user's cache
// directory (~/.cache/gocu on Linux).
func DefaultDir() (string, error) {
	if d := os.Getenv("GOCU_CACHE_DIR"); d != "" {
		return d, nil
	}
	base, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("nvrtc: no cache directory (set GOCU_CACHE_DIR): %w", err)
	}
	return filepath.Join(base, "gocu"), nil
}

// CacheDisabledByEnv reports whether GOCU_CACHE turns the cache off ("off",
// "0", "false", "no").
func CacheDisabledByEnv() bool {
	switch strings.ToLower(strings.TrimSpace(os.Getenv("GOCU_CACHE"))) {
	case "off", "0", "false", "no", "disable", "disabled":
		return true
	}
	return false
}

// NewCache opens (creating it 0700 if needed) the cache directory. In a
// directory that others can read or write it uses its own private
// subdirectory (see UsableDir); one that belongs to another user is refused
// with ErrInsecureDir. A disabled cache touches no directory.
func NewCache(cfg CacheConfig) (*Cache, error) {
	c := &Cache{driver: cfg.Driver, compiler: cfg.Compiler, enabled: !cfg.Disabled && !CacheDisabledByEnv()}
	if c.compiler == nil {
		c.compiler = NVRTC
	}
	c.dir = cfg.Dir
	if c.dir == "" {
		d, err := DefaultDir()
		if err != nil {
			if !c.enabled {
				return c, nil
			}
			return nil, err
		}
		c.dir = d
	}
	if abs, err := filepath.Abs(c.dir); err == nil {
		c.dir = abs
	}
	if c.enabled {
		d, err := prepareDir(c.dir)
		if err != nil {
			return nil, err
		}
		c.dir = d
	} else {
		c.dir = UsableDir(c.dir)
	}
	return c, nil
}

// UsableDir returns the directory the cache uses for the directory dir,
// without creating anything: dir itself when it does not exist yet or
// others cannot write it, else (a shared directory such as /tmp) its subdirectory
// gocu-<uid>, which gocu creates private to the user. gocu never changes
// the mode of a directory it did not create.
func UsableDir(dir string) string {
	st, err := os.Stat(dir)
	if err != nil || !st.IsDir() {
		return dir
	}
	uid, me, ok := owner.Of(st)
	if st.Mode().Perm()&0o022 == 0 && (!ok || uid == me) {
		return dir // only the user writes it; entries are 0600
	}
	if st.Mode().Perm()&0o022 == 0 {
		return dir // another user's, which prepareDir refuses
	}
	if !ok {
		return filepath.Join(dir, "gocu-private")
	}
	return filepath.Join(dir, fmt.Sprintf("gocu-%d", me))
}

// prepareDir creates the cache directory for dir (see UsableDir), private
// to the user, or checks the one that exists, and returns it.
func prepareDir(dir string) (string, error) {
	dir = UsableDir(dir)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("nvrtc: creating cache directory: %w", err)
	}
	st, err := os.Lstat(dir)
	if err != nil {
		return "", fmt.Errorf("nvrtc: cache directory: %w", err)
	}
	if !st.IsDir() {
		return "", fmt.Errorf("nvrtc: cache directory %s is not a directory", dir)
	}
	if uid, me, ok := owner.Of(st); ok && uid != me {
		return "", fmt.Errorf("%w: %s belongs to uid %d, not to you (uid %d); set GOCU_CACHE_DIR to a directory of your own", ErrInsecureDir, dir, uid, me)
	}
	if st.Mode().Perm()&0o022 != 0 {
		return "", fmt.Errorf("%w: %s is open to others (%v); make it private (chmod 700) or set GOCU_CACHE_DIR to another directory", ErrInsecureDir, dir, st.Mode().Perm())
	}
	return dir, nil
}

// Dir returns the cache directory.
func (c *Cache) Dir() string { return c.dir }

// Enabled reports whether the cache stores and loads entries.
func (c *Cache) Enabled() bool { return c.enabled }

// Compile returns the compiled code for src and opts, from the cache when a
// verified entry exists, otherwise from the compiler (and then stores it).
// Concurrent calls for the same inputs in one process compile once.
func (c *Cache) Compile(src string, opts Options) (*Result, error) {
	format, err := opts.validate()
	if err != nil {
		return nil, err
	}
	if !c.enabled {
		return c.compiler.Compile(src, opts)
	}
	key, ok, err := c.Key(src, opts)
	if err != nil {
		return nil, err
	}
	if !ok {
		slog.Debug("gocu: include directory too large to fingerprint; compiling without the cache", "program", opts.name())
		return c.compiler.Compile(src, opts)
	}

	c.mu.Lock()
	if f, busy := c.flights[key]; busy {
		c.mu.Unlock()
		<-f.done
		return copyResult(f.res), f.err
	}
	// The error stands if the compiler panics before setting the result.
	f := &flight{done: make(chan struct{}), err: errors.New("nvrtc: the compiler panicked")}
	if c.flights == nil {
		c.flights = map[Key]*flight{}
	}
	c.flights[key] = f
	c.mu.Unlock()

	func() {
		// Release the waiters even if the compiler panics.
		defer func() {
			c.mu.Lock()
			delete(c.flights, key)
			c.mu.Unlock()
			close(f.done)
		}()
		f.res, f.err = c.lookupOrCompile(key, format, src, opts)
	}()
	return copyResult(f.res), f.err
}

// copyResult gives each caller its own Result; the code bytes are shared and
// must not be modified.
func copyResult(r *Result) *Result {
	if r == nil {
		return nil
	}
	out := *r
	return &out
}

// Key returns the cache key of a compilation. ok is false when an include
// directory is too large to fingerprint (such compilations are not cached).
func (c *Cache) Key(src string, opts Options) (key Key, ok bool, err error) {
	format, err := opts.validate()
	if err != nil {
		return key, false, err
	}
	id, err := c.compiler.ID()
	if err != nil {
		return key, false, err
	}
	in := keyInputs{formatVersion: entryVersion, compiler: id, driver: c.driver, format: format, src: src, opts: &opts}
	ok = true
	dirs := opts.IncludePaths
	if opts.SearchSourceDir {
		dirs = append(slices.Clip(dirs), filepath.Dir(opts.name()))
	}
	for _, p := range dirs {
		abs, err := filepath.Abs(p)
		if err != nil {
			abs = p
		}
		fp, fpOK := fingerprintDir(abs)
		ok = ok && fpOK
		in.includeDirs = append(in.includeDirs, fp)
	}
	return hashKey(&in), ok, nil
}

func (c *Cache) path(key Key) string {
	return filepath.Join(c.dir, hex.EncodeToString(key[:])+entrySuffix)
}

func (c *Cache) lookupOrCompile(key Key, format Format, src string, opts Options) (*Result, error) {
	p := c.path(key)
	data, err := readRegular(p)
	switch {
	case err == nil:
		e, derr := decodeEntry(data, key, format, opts.NameExpressions)
		if derr == nil {
			c.hits.Add(1)
			res := &Result{Code: e.code, Format: format, Log: e.log, Lowered: e.lowered, Cached: true}
			if e.log != "" {
				res.Diagnostics = ParseLog(e.log, sourcesOf(src, opts.name(), opts.Headers))
			}
			return res, nil
		}
		c.corrupt.Add(1)
		slog.Debug("gocu: cache entry failed verification; recompiling", "path", p, "reason", derr)
	case errors.Is(err, fs.ErrNotExist):
	default:
		slog.Debug("gocu: cache entry unreadable; recompiling", "path", p, "err", err)
	}

	c.misses.Add(1)
	res, err := c.compiler.Compile(src, opts)
	if err != nil {
		return nil, err // never cached
	}
	if res == nil || len(res.Code) == 0 || res.Format != format {
		return nil, fmt.Errorf("nvrtc: compiler returned no %v code", format)
	}
	data = encodeEntry(&entry{key: key, format: format, code: res.Code, log: res.Log, lowered: res.Lowered})
	if err := writeAtomic(c.dir, p, data); err != nil {
		c.writeErrors.Add(1)
		slog.Debug("gocu: could not store cache entry", "path", p, "err", err)
	}
	res.Cached = false
	return res, nil
}

// readRegular reads the file at path if it is a regular file: a FIFO or a
// device in its place would block or never end, and is an error.
func readRegular(path string) ([]byte, error) {
	st, err := os.Lstat(path)
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file (%v)", path, st.Mode().Type())
	}
	return os.ReadFile(path)
}

// writeAtomic writes data to a temporary file in dir and renames it onto
// path, so a reader sees the old entry or the new one, never a part. Two
// writers of one key both succeed; the last rename wins, and both wrote the
// same bytes.
func writeAtomic(dir, path string, data []byte) error {
	f, err := os.CreateTemp(dir, tmpPrefix+"*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	_, werr := f.Write(data)
	cerr := f.Close()
	if werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = os.Rename(tmp, path)
	}
	if werr != nil {
		os.Remove(tmp)
	}
	return werr
}

// CacheInfo describes what a cache directory holds.
type CacheInfo struct {
	Dir     string
	Enabled bool
	Entries int
	Bytes   int64
}

// Info counts the entries on disk and their size.
func (c *Cache) Info() (CacheInfo, error) {
	info := CacheInfo{Dir: c.dir, Enabled: c.enabled}
	ents, err := os.ReadDir(c.dir)
	if errors.Is(err, fs.ErrNotExist) {
		return info, nil
	}
	if err != nil {
		return info, fmt.Errorf("nvrtc: reading cache directory: %w", err)
	}
	for _, e := range ents {
		if !isEntryName(e.Name()) || !e.Type().IsRegular() {
			continue
		}
		if fi, err := e.Info(); err == nil {
			info.Entries++
			info.Bytes += fi.Size()
		}
	}
	return info, nil
}

// Clear removes every entry (and leftover temporary file) from the cache
// directory and returns how many entries it removed. Other files are left
// alone, in case the directory is shared.
func (c *Cache) Clear() (int, error) {
	ents, err := os.ReadDir(c.dir)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("nvrtc: reading cache directory: %w", err)
	}
	n := 0
	var firstErr error
	for _, e := range ents {
		name := e.Name()
		if !isEntryName(name) && !strings.HasPrefix(name, tmpPrefix) {
			continue
		}
		if err := os.Remove(filepath.Join(c.dir, name)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			if firstErr == nil {
				firstErr = fmt.Errorf("nvrtc: clearing cache: %w", err)
			}
			continue
		}
		if isEntryName(name) {
			n++
		}
	}
	return n, firstErr
}

func isEntryName(name string) bool {
	if !strings.HasSuffix(name, entrySuffix) {
		return false
	}
	h := strings.TrimSuffix(name, entrySuffix)
	if len(h) != 2*len(Key{}) {
		return false
	}
	_, err := hex.DecodeString(h)
	return err == nil
}

// CacheStats counts what this Cache did since it was made.
type CacheStats struct {
	Hits, Misses int64
	Corrupt      int64 // entries that failed verification and were recompiled
	WriteErrors  int64 // entries that could not be stored
}

// Stats returns this process's counters.
func (c *Cache) Stats() CacheStats {
	return CacheStats{Hits: c.hits.Load(), Misses: c.misses.Load(), Corrupt: c.corrupt.Load(), WriteErrors: c.writeErrors.Load()}
}
