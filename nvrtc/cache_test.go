package nvrtc

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"
)

const testSrc = `extern "C" __global__ void scale(float* x, float a, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] *= a;
}
`

func testOptions() Options {
	return Options{Arch: "sm_90", NameExpressions: []string{"scale", "axpy<float>"}}
}

func newTestCache(t testing.TB, fc *fakeCompiler) *Cache {
	t.Helper()
	t.Setenv("GOCU_CACHE", "")
	c, err := NewCache(CacheConfig{Dir: filepath.Join(t.TempDir(), "cache"), Driver: "13000", Compiler: fc})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// want is what compiling gives, to compare cache hits with.
func want(t *testing.T, src string, opts Options) *Result {
	t.Helper()
	r, err := (&fakeCompiler{}).Compile(src, opts)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func sameResult(t *testing.T, got, want *Result) {
	t.Helper()
	if !bytes.Equal(got.Code, want.Code) || got.Format != want.Format || got.Log != want.Log || !reflect.DeepEqual(got.Lowered, want.Lowered) {
		t.Fatalf("result differs from a fresh compilation:\n got %v %d bytes log %q lowered %v\nwant %v %d bytes log %q lowered %v",
			got.Format, len(got.Code), got.Log, got.Lowered, want.Format, len(want.Code), want.Log, want.Lowered)
	}
}

func entries(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	return names
}

func TestCacheMissThenHit(t *testing.T) {
	fc := &fakeCompiler{}
	c := newTestCache(t, fc)
	src := testSrc + "// unused\n"
	opts := testOptions()

	r1, err := c.Compile(src, opts)
	if err != nil {
		t.Fatal(err)
	}
	if r1.Cached || fc.calls.Load() != 1 {
		t.Fatalf("first compile: Cached=%v calls=%d", r1.Cached, fc.calls.Load())
	}
	sameResult(t, r1, want(t, src, opts))

	names := entries(t, c.Dir())
	if len(names) != 1 || !isEntryName(names[0]) {
		t.Fatalf("cache directory holds %v, want one entry", names)
	}
	st, err := os.Stat(filepath.Join(c.Dir(), names[0]))
	if err != nil {
		t.Fatal(err)
	}
	if perm := st.Mode().Perm(); perm&0o077 != 0 {
		t.Errorf("entry mode %v is open to others", perm)
	}

	r2, err := c.Compile(src, opts)
	if err != nil {
		t.Fatal(err)
	}
	if !r2.Cached || fc.calls.Load() != 1 {
		t.Fatalf("second compile: Cached=%v calls=%d", r2.Cached, fc.calls.Load())
	}
	sameResult(t, r2, r1)
	if len(r2.Diagnostics) != 1 || r2.Diagnostics[0].Severity != "warning" {
		t.Errorf("a cache hit lost the warnings: %+v", r2.Diagnostics)
	}
	if s := c.Stats(); s.Hits != 1 || s.Misses != 1 || s.Corrupt != 0 {
		t.Errorf("Stats = %+v", s)
	}
	// A new Cache on the same directory (another process, say) hits too.
	c2, err := NewCache(CacheConfig{Dir: c.Dir(), Driver: "13000", Compiler: fc})
	if err != nil {
		t.Fatal(err)
	}
	r3, err := c2.Compile(src, opts)
	if err != nil || !r3.Cached || fc.calls.Load() != 1 {
		t.Fatalf("fresh Cache on the same dir: err=%v Cached=%v calls=%d", err, r3 != nil && r3.Cached, fc.calls.Load())
	}
}

// keyMutations change one input each. TestKeyCoversEveryInput checks that
// every Options field has one, so a field added later cannot be forgotten.
var keyMutations = map[string]func(o *Options){
	"Name":            func(o *Options) { o.Name = "other.cu" },
	"Arch":            func(o *Options) { o.Arch = "sm_80" },
	"Headers":         func(o *Options) { o.Headers["util.cuh"] = "#define TWO 2.0f\n" },
	"Std":             func(o *Options) { o.Std = "c++20" },
	"Defines":         func(o *Options) { o.Defines["BLOCK"] = "128" },
	"IncludePaths":    func(o *Options) { o.IncludePaths = append(o.IncludePaths, "/nonexistent/include") },
	"SearchSourceDir": func(o *Options) { o.SearchSourceDir = !o.SearchSourceDir },
	"NoFMAD":          func(o *Options) { o.NoFMAD = !o.NoFMAD },
	"FastMath":        func(o *Options) { o.FastMath = !o.FastMath },
	"LineInfo":        func(o *Options) { o.LineInfo = !o.LineInfo },
	"Debug":           func(o *Options) { o.Debug = !o.Debug },
	"Extra":           func(o *Options) { o.Extra = append(o.Extra, "--restrict") },
	"NameExpressions": func(o *Options) { o.NameExpressions = append(o.NameExpressions, "axpy<double>") },
}

func fullOptions(inc string) Options {
	return Options{
		Name:            "k.cu",
		Arch:            "sm_90",
		Headers:         map[string]string{"util.cuh": "#define TWO 2.0\n", "b.cuh": "// b\n"},
		Std:             "c++17",
		Defines:         map[string]string{"BLOCK": "256", "FAST": ""},
		IncludePaths:    []string{inc},
		Extra:           []string{"--maxrregcount=64"},
		NameExpressions: []string{"scale"},
	}
}

func TestKeyCoversEveryInput(t *testing.T) {
	inc := t.TempDir()
	if err := os.WriteFile(filepath.Join(inc, "lib.cuh"), []byte("#pragma once\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	fc := &fakeCompiler{}
	c := newTestCache(t, fc)
	key := func(c *Cache, src string, o Options) Key {
		t.Helper()
		k, ok, err := c.Key(src, o)
		if err != nil || !ok {
			t.Fatalf("Key: ok=%v err=%v", ok, err)
		}
		return k
	}
	base := key(c, testSrc, fullOptions(inc))

	ty := reflect.TypeFor[Options]()
	for i := range ty.NumField() {
		name := ty.Field(i).Name
		mutate, ok := keyMutations[name]
		if !ok {
			t.Errorf("Options.%s has no mutation in keyMutations: is it part of the cache key?", name)
			continue
		}
		o := fullOptions(inc)
		mutate(&o)
		if key(c, testSrc, o) == base {
			t.Errorf("changing Options.%s leaves the key unchanged", name)
		}
	}

	others := map[string]Key{
		"source":        key(c, testSrc+" ", fullOptions(inc)),
		"PTX not CUBIN": key(c, testSrc, func() Options { o := fullOptions(inc); o.Arch = "compute_90"; return o }()),
	}
	c2, _ := NewCache(CacheConfig{Dir: c.Dir(), Driver: "12080", Compiler: fc})
	others["driver version"] = key(c2, testSrc, fullOptions(inc))
	c3, _ := NewCache(CacheConfig{Dir: c.Dir(), Driver: "13000", Compiler: &fakeCompiler{id: "fake 1.1"}})
	others["compiler version"] = key(c3, testSrc, fullOptions(inc))
	in := keyInputs{formatVersion: entryVersion + 1, compiler: "fake 1.0", driver: "13000", format: CUBIN, src: testSrc, opts: &Options{Arch: "sm_90"}}
	k1 := hashKey(&in)
	in.formatVersion = entryVersion
	if hashKey(&in) == k1 {
		t.Error("the entry format version is not part of the key")
	}
	// Moving bytes between a header's name and its text must change the key.
	o := fullOptions(inc)
	o.Headers = map[string]string{"util.cuhx": "#define TWO 2.0\n", "b.cuh": "// b\n"}
	o2 := fullOptions(inc)
	o2.Headers = map[string]string{"util.cuh": "x#define TWO 2.0\n", "b.cuh": "// b\n"}
	others["header name/text boundary"] = key(c, testSrc, o)
	if key(c, testSrc, o2) == key(c, testSrc, o) {
		t.Error("header name and text are not separated in the key")
	}
	// Included files are inputs: editing one changes the key.
	if err := os.WriteFile(filepath.Join(inc, "lib.cuh"), []byte("#pragma once\n#define X 1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	dirFingerprints.Clear()
	others["file under an include path"] = key(c, testSrc, fullOptions(inc))
	for what, k := range others {
		if k == base {
			t.Errorf("changing the %s leaves the key unchanged", what)
		}
	}
}

func TestKeyIgnoresMapOrder(t *testing.T) {
	c := newTestCache(t, &fakeCompiler{})
	mk := func(rev bool) Options {
		o := Options{Arch: "sm_90", Headers: map[string]string{}, Defines: map[string]string{}}
		names := []string{"a", "b", "c", "d", "e", "f", "g", "h"}
		if rev {
			for i, j := 0, len(names)-1; i < j; i, j = i+1, j-1 {
				names[i], names[j] = names[j], names[i]
			}
		}
		for _, n := range names {
			o.Headers[n+".cuh"] = "// " + n
			o.Defines["D_"+n] = n
		}
		return o
	}
	k0, _, _ := c.Key(testSrc, mk(false))
	for i := range 20 {
		k, _, err := c.Key(testSrc, mk(i%2 == 1))
		if err != nil {
			t.Fatal(err)
		}
		if k != k0 {
			t.Fatal("the key depends on map iteration order")
		}
	}
}

// regions returns named byte offsets of every part of an entry.
func regions(t *testing.T, data []byte, r *Result) map[string]int {
	t.Helper()
	logAt := bytes.Index(data[headerSize:], []byte(r.Log))
	loweredAt := bytes.Index(data[headerSize:], []byte(r.Lowered["scale"]))
	if logAt < 0 || loweredAt < 0 || r.Log == "" {
		t.Fatalf("test entry lacks a log or lowered name")
	}
	return map[string]int{
		"magic":          0,
		"version":        8,
		"format":         12,
		"key":            16 + 31,
		"body length":    48,
		"body checksum":  56 + 5,
		"lowered count":  headerSize,
		"lowered name":   headerSize + loweredAt + 2,
		"log":            headerSize + logAt + 3,
		"code first":     len(data) - len(r.Code),
		"code last byte": len(data) - 1,
	}
}

func TestCorruptEntryIsRecompiled(t *testing.T) {
	src := testSrc + "// unused\n"
	opts := testOptions()
	ref := want(t, src, opts)
	fc0 := &fakeCompiler{}
	c0 := newTestCache(t, fc0)
	if _, err := c0.Compile(src, opts); err != nil {
		t.Fatal(err)
	}
	good, err := os.ReadFile(filepath.Join(c0.Dir(), entries(t, c0.Dir())[0]))
	if err != nil {
		t.Fatal(err)
	}
	for region, off := range regions(t, good, ref) {
		t.Run(region, func(t *testing.T) {
			fc := &fakeCompiler{}
			c := newTestCache(t, fc)
			key, _, _ := c.Key(src, opts)
			bad := bytes.Clone(good)
			bad[off] ^= 0x5a
			if err := os.WriteFile(c.path(key), bad, 0o600); err != nil {
				t.Fatal(err)
			}
			r, err := c.Compile(src, opts)
			if err != nil {
				t.Fatal(err)
			}
			if r.Cached || fc.calls.Load() != 1 {
				t.Fatalf("corrupt %s was trusted: Cached=%v calls=%d", region, r.Cached, fc.calls.Load())
			}
			sameResult(t, r, ref)
			if s := c.Stats(); s.Corrupt != 1 {
				t.Errorf("Stats.Corrupt = %d", s.Corrupt)
			}
			// The entry was replaced by a good one.
			fixed, _ := os.ReadFile(c.path(key))
			if !bytes.Equal(fixed, good) {
				t.Error("the corrupt entry was not overwritten with a good one")
			}
			if r, err := c.Compile(src, opts); err != nil || !r.Cached || fc.calls.Load() != 1 {
				t.Errorf("after repair: err=%v calls=%d", err, fc.calls.Load())
			}
		})
	}
}

func TestTruncatedEntryIsRecompiled(t *testing.T) {
	opts := testOptions()
	ref := want(t, testSrc, opts)
	for _, cut := range []int{0, 1, 7, headerSize - 1, headerSize, headerSize + 3, -1} {
		t.Run(fmt.Sprint(cut), func(t *testing.T) {
			fc := &fakeCompiler{}
			c := newTestCache(t, fc)
			if _, err := c.Compile(testSrc, opts); err != nil {
				t.Fatal(err)
			}
			key, _, _ := c.Key(testSrc, opts)
			data, _ := os.ReadFile(c.path(key))
			n := cut
			if n < 0 {
				n = len(data) + cut
			}
			if err := os.WriteFile(c.path(key), data[:n], 0o600); err != nil {
				t.Fatal(err)
			}
			r, err := c.Compile(testSrc, opts)
			if err != nil {
				t.Fatal(err)
			}
			if r.Cached || fc.calls.Load() != 2 {
				t.Fatalf("truncated to %d bytes and trusted: calls=%d", n, fc.calls.Load())
			}
			sameResult(t, r, ref)
		})
	}
}

func TestEntryOfAnotherKeyIsRecompiled(t *testing.T) {
	fc := &fakeCompiler{}
	c := newTestCache(t, fc)
	optsA, optsB := testOptions(), testOptions()
	optsB.Defines = map[string]string{"B": "1"}
	if _, err := c.Compile(testSrc, optsA); err != nil {
		t.Fatal(err)
	}
	ka, _, _ := c.Key(testSrc, optsA)
	kb, _, _ := c.Key(testSrc, optsB)
	data, _ := os.ReadFile(c.path(ka))
	if err := os.WriteFile(c.path(kb), data, 0o600); err != nil {
		t.Fatal(err)
	}
	r, err := c.Compile(testSrc, optsB)
	if err != nil {
		t.Fatal(err)
	}
	if r.Cached {
		t.Fatal("an entry stored for other inputs was used")
	}
	sameResult(t, r, want(t, testSrc, optsB))
}

func TestFailureIsNotCached(t *testing.T) {
	fc := &fakeCompiler{}
	c := newTestCache(t, fc)
	src := "extern \"C\" __global__ void k() {\n#error nope\n}\n"
	for i := 1; i <= 2; i++ {
		_, err := c.Compile(src, testOptions())
		var ce *CompileError
		if !errors.As(err, &ce) {
			t.Fatalf("err = %v, want *CompileError", err)
		}
		if ce.Diagnostics[0].Line != 2 || !strings.Contains(ce.Diagnostics[0].Source, "#error nope") {
			t.Errorf("diagnostic = %+v", ce.Diagnostics[0])
		}
		if fc.calls.Load() != int64(i) {
			t.Fatalf("call %d: the compiler ran %d times: a failure was cached", i, fc.calls.Load())
		}
	}
	if names := entries(t, c.Dir()); len(names) != 0 {
		t.Errorf("a failed compilation left files: %v", names)
	}
}

func TestInvalidOptionsNeverReachTheCompiler(t *testing.T) {
	fc := &fakeCompiler{}
	c := newTestCache(t, fc)
	_, err := c.Compile(testSrc, Options{Arch: "sm90"})
	if !errors.Is(err, InvalidOption) || !strings.Contains(err.Error(), `"sm90"`) {
		t.Errorf("err = %v", err)
	}
	if fc.calls.Load() != 0 {
		t.Error("the compiler was called with invalid options")
	}
}

func TestWriteFailureStillCompiles(t *testing.T) {
	fc := &fakeCompiler{}
	c := newTestCache(t, fc)
	key, _, _ := c.Key(testSrc, testOptions())
	// A directory where the entry goes makes the rename fail, even for root.
	if err := os.Mkdir(c.path(key), 0o700); err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= 2; i++ {
		r, err := c.Compile(testSrc, testOptions())
		if err != nil {
			t.Fatal(err)
		}
		sameResult(t, r, want(t, testSrc, testOptions()))
	}
	if s := c.Stats(); s.WriteErrors != 2 || fc.calls.Load() != 2 {
		t.Errorf("Stats = %+v, calls = %d", s, fc.calls.Load())
	}
	for _, n := range entries(t, c.Dir()) {
		if strings.HasPrefix(n, tmpPrefix) {
			t.Errorf("temporary file %s left behind", n)
		}
	}
}

func TestCacheDirectoryPermissions(t *testing.T) {
	t.Setenv("GOCU_CACHE", "")
	root := t.TempDir()

	fresh := filepath.Join(root, "a", "b", "gocu")
	c, err := NewCache(CacheConfig{Dir: fresh, Compiler: &fakeCompiler{}})
	if err != nil {
		t.Fatal(err)
	}
	if st, _ := os.Stat(c.Dir()); st.Mode().Perm() != 0o700 {
		t.Errorf("new cache directory has mode %v, want 0700", st.Mode().Perm())
	}

	open := filepath.Join(root, "open")
	if err := os.Mkdir(open, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(open, 0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(open, 0o777|os.ModeSticky); err != nil {
		t.Fatal(err)
	}
	// A shared directory (as /tmp) keeps its mode; the cache lives in a
	// private subdirectory of its own.
	for range 2 {
		c, err = NewCache(CacheConfig{Dir: open, Compiler: &fakeCompiler{}})
		if err != nil {
			t.Fatal(err)
		}
		if st, _ := os.Stat(open); st.Mode()&(fs.ModePerm|fs.ModeSticky) != 0o777|fs.ModeSticky {
			t.Errorf("NewCache changed a shared directory's mode to %v", st.Mode())
		}
		if st, _ := os.Stat(c.Dir()); filepath.Dir(c.Dir()) != open || st.Mode().Perm() != 0o700 {
			t.Errorf("cache directory %s (%v), want a private subdirectory of %s", c.Dir(), st.Mode().Perm(), open)
		}
	}
	// Its own subdirectory opened to others is refused, not changed.
	if err := os.Chmod(c.Dir(), 0o775); err != nil {
		t.Fatal(err)
	}
	if _, err := NewCache(CacheConfig{Dir: open, Compiler: &fakeCompiler{}}); !errors.Is(err, ErrInsecureDir) || !strings.Contains(err.Error(), "is open to others") {
		t.Errorf("an open subdirectory: %v", err)
	}
	if st, _ := os.Stat(c.Dir()); st.Mode().Perm() != 0o775 {
		t.Errorf("NewCache changed its subdirectory's mode to %v", st.Mode().Perm())
	}

	if os.Getuid() != 0 {
		t.Log("not root: cannot make a directory owned by someone else; ownership check not exercised")
		return
	}
	// Another user's private directory is refused; so is another user's
	// subdirectory in a shared one.
	foreign := filepath.Join(root, "foreign")
	if err := os.Mkdir(foreign, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(foreign, 4242, 4242); err != nil {
		t.Fatal(err)
	}
	_, err = NewCache(CacheConfig{Dir: foreign, Compiler: &fakeCompiler{}})
	if !errors.Is(err, ErrInsecureDir) || !strings.Contains(err.Error(), "uid 4242") {
		t.Errorf("a directory of another user was accepted: %v", err)
	}
	shared := filepath.Join(root, "shared")
	if err := os.Mkdir(shared, 0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(shared, 0o777); err != nil {
		t.Fatal(err)
	}
	planted := filepath.Join(shared, fmt.Sprintf("gocu-%d", os.Getuid()))
	if err := os.Mkdir(planted, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(planted, 4242, 4242); err != nil {
		t.Fatal(err)
	}
	_, err = NewCache(CacheConfig{Dir: shared, Compiler: &fakeCompiler{}})
	if !errors.Is(err, ErrInsecureDir) || !strings.Contains(err.Error(), "uid 4242") {
		t.Errorf("a subdirectory planted by another user was accepted: %v", err)
	}
}

func TestCacheOff(t *testing.T) {
	for _, v := range []string{"off", "OFF", "0", "false"} {
		t.Run(v, func(t *testing.T) {
			t.Setenv("GOCU_CACHE", v)
			dir := filepath.Join(t.TempDir(), "never")
			fc := &fakeCompiler{}
			c, err := NewCache(CacheConfig{Dir: dir, Compiler: fc})
			if err != nil {
				t.Fatal(err)
			}
			if c.Enabled() {
				t.Fatal("GOCU_CACHE=" + v + " left the cache on")
			}
			for range 2 {
				r, err := c.Compile(testSrc, testOptions())
				if err != nil || r.Cached {
					t.Fatalf("err=%v", err)
				}
			}
			if fc.calls.Load() != 2 {
				t.Errorf("compiled %d times, want 2", fc.calls.Load())
			}
			if _, err := os.Stat(dir); !os.IsNotExist(err) {
				t.Errorf("a disabled cache created its directory (%v)", err)
			}
		})
	}
	t.Setenv("GOCU_CACHE", "")
	c, err := NewCache(CacheConfig{Dir: t.TempDir(), Compiler: &fakeCompiler{}, Disabled: true})
	if err != nil || c.Enabled() {
		t.Errorf("CacheConfig.Disabled ignored: enabled=%v err=%v", c.Enabled(), err)
	}
}

func TestDefaultDir(t *testing.T) {
	t.Setenv("GOCU_CACHE_DIR", "/somewhere/else")
	if d, err := DefaultDir(); err != nil || d != "/somewhere/else" {
		t.Errorf("DefaultDir() = %q, %v with GOCU_CACHE_DIR set", d, err)
	}
	t.Setenv("GOCU_CACHE_DIR", "")
	xdg := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", xdg)
	if d, err := DefaultDir(); err != nil || d != filepath.Join(xdg, "gocu") {
		t.Errorf("DefaultDir() = %q, %v; want %s", d, err, filepath.Join(xdg, "gocu"))
	}
}

func TestConcurrentGoroutines(t *testing.T) {
	fc := &fakeCompiler{delay: 30 * time.Millisecond}
	c := newTestCache(t, fc)
	const keys, perKey = 6, 8
	var wg sync.WaitGroup
	errs := make(chan error, keys*perKey)
	for k := range keys {
		opts := testOptions()
		opts.Defines = map[string]string{"K": fmt.Sprint(k)}
		ref := want(t, testSrc, opts)
		for range perKey {
			wg.Go(func() {
				r, err := c.Compile(testSrc, opts)
				if err == nil && !bytes.Equal(r.Code, ref.Code) {
					err = fmt.Errorf("key %d: wrong code", k)
				}
				errs <- err
			})
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	if n := fc.calls.Load(); n != keys {
		t.Errorf("compiled %d times for %d distinct inputs", n, keys)
	}
	if n := len(entries(t, c.Dir())); n != keys {
		t.Errorf("%d files in the cache, want %d", n, keys)
	}
}

// Separate Cache values on one directory behave like separate processes:
// no in-process deduplication, real races on the files.
func TestConcurrentCachesOneDirectory(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "shared")
	t.Setenv("GOCU_CACHE", "")
	ref := want(t, testSrc, testOptions())
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			c, err := NewCache(CacheConfig{Dir: dir, Driver: "13000", Compiler: &fakeCompiler{delay: 10 * time.Millisecond}})
			if err != nil {
				t.Error(err)
				return
			}
			for range 20 {
				r, err := c.Compile(testSrc, testOptions())
				if err != nil {
					t.Error(err)
					return
				}
				if !bytes.Equal(r.Code, ref.Code) {
					t.Error("wrong code under concurrency")
					return
				}
			}
		})
	}
	wg.Wait()
	names := entries(t, dir)
	if len(names) != 1 || !isEntryName(names[0]) {
		t.Errorf("directory holds %v, want exactly one entry and no temporary files", names)
	}
}

// TestConcurrentProcesses starts several copies of this test binary that
// compile the same kernel into one directory at the same moment.
func TestConcurrentProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("starts subprocesses")
	}
	dir := filepath.Join(t.TempDir(), "shared")
	gate := filepath.Join(t.TempDir(), "go")
	const n = 4
	cmds := make([]*exec.Cmd, n)
	outs := make([]*bytes.Buffer, n)
	for i := range cmds {
		cmd := exec.Command(os.Args[0], "-test.run=^TestCacheChildProcess$", "-test.v")
		cmd.Env = append(os.Environ(), "GOCU_TEST_CHILD_DIR="+dir, "GOCU_TEST_CHILD_GATE="+gate, "GOCU_CACHE=")
		outs[i] = &bytes.Buffer{}
		cmd.Stdout, cmd.Stderr = outs[i], outs[i]
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds[i] = cmd
	}
	time.Sleep(200 * time.Millisecond) // let them all reach the gate
	if err := os.WriteFile(gate, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	ref := want(t, testSrc, testOptions())
	for i, cmd := range cmds {
		if err := cmd.Wait(); err != nil {
			t.Fatalf("child %d failed: %v\n%s", i, err, outs[i])
		}
		if !strings.Contains(outs[i].String(), fmt.Sprintf("child code %x", ref.Code[:16])) {
			t.Errorf("child %d did not get the right code:\n%s", i, outs[i])
		}
	}
	names := entries(t, dir)
	if len(names) != 1 || !isEntryName(names[0]) {
		t.Fatalf("directory holds %v, want one entry", names)
	}
	data, _ := os.ReadFile(filepath.Join(dir, names[0]))
	c := newTestCache(t, &fakeCompiler{})
	key, _, _ := c.Key(testSrc, testOptions())
	if _, err := decodeEntry(data, key, CUBIN, testOptions().NameExpressions); err != nil {
		t.Errorf("the entry the processes left is bad: %v", err)
	}
}

// TestCacheChildProcess is the body of each child of TestConcurrentProcesses.
func TestCacheChildProcess(t *testing.T) {
	dir := os.Getenv("GOCU_TEST_CHILD_DIR")
	if dir == "" {
		t.Skip("only runs as a child of TestConcurrentProcesses")
	}
	gate := os.Getenv("GOCU_TEST_CHILD_GATE")
	deadline := time.Now().Add(20 * time.Second)
	for {
		if _, err := os.Stat(gate); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("gate never opened")
		}
		time.Sleep(time.Millisecond)
	}
	c, err := NewCache(CacheConfig{Dir: dir, Driver: "13000", Compiler: &fakeCompiler{delay: 100 * time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		r, err := c.Compile(testSrc, testOptions())
		if err != nil {
			t.Fatal(err)
		}
		fmt.Printf("child code %x cached=%v\n", r.Code[:16], r.Cached)
	}
}

func TestInfoAndClear(t *testing.T) {
	c := newTestCache(t, &fakeCompiler{size: 1000})
	var total int64
	for i := range 3 {
		opts := testOptions()
		opts.Defines = map[string]string{"I": fmt.Sprint(i)}
		if _, err := c.Compile(testSrc, opts); err != nil {
			t.Fatal(err)
		}
		key, _, _ := c.Key(testSrc, opts)
		st, err := os.Stat(c.path(key))
		if err != nil {
			t.Fatal(err)
		}
		total += st.Size()
	}
	other := filepath.Join(c.Dir(), "notes.txt")
	stale := filepath.Join(c.Dir(), tmpPrefix+"12345")
	for _, p := range []string{other, stale} {
		if err := os.WriteFile(p, []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	info, err := c.Info()
	if err != nil {
		t.Fatal(err)
	}
	if info.Entries != 3 || info.Bytes != total || info.Dir != c.Dir() || !info.Enabled {
		t.Errorf("Info = %+v, want 3 entries of %d bytes", info, total)
	}
	n, err := c.Clear()
	if err != nil || n != 3 {
		t.Fatalf("Clear() = %d, %v", n, err)
	}
	if names := entries(t, c.Dir()); len(names) != 1 || names[0] != "notes.txt" {
		t.Errorf("after Clear the directory holds %v, want only notes.txt", names)
	}
	if info, _ := c.Info(); info.Entries != 0 || info.Bytes != 0 {
		t.Errorf("Info after Clear = %+v", info)
	}
}

func TestIncludeDirectoryTooLargeIsNotCached(t *testing.T) {
	defer func(n int) { maxDirFiles = n }(maxDirFiles)
	maxDirFiles = 40
	dirFingerprints.Clear()
	inc := t.TempDir()
	for i := range maxDirFiles + 1 {
		if err := os.WriteFile(filepath.Join(inc, fmt.Sprintf("h%d.cuh", i)), nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	fc := &fakeCompiler{}
	c := newTestCache(t, fc)
	opts := testOptions()
	opts.IncludePaths = []string{inc}
	for range 2 {
		if _, err := c.Compile(testSrc, opts); err != nil {
			t.Fatal(err)
		}
	}
	if fc.calls.Load() != 2 || len(entries(t, c.Dir())) != 0 {
		t.Errorf("an uncoverable include directory was cached: calls=%d", fc.calls.Load())
	}
}

// BenchmarkCacheHit measures a warm load: key, read, verify, for a 24 KiB
// CUBIN-sized entry. Target: well under 1 ms.
func BenchmarkCacheHit(b *testing.B) {
	fc := &fakeCompiler{size: 24 << 10}
	c := newTestCache(b, fc)
	src := strings.Repeat(testSrc, 20)
	opts := testOptions()
	if _, err := c.Compile(src, opts); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		r, err := c.Compile(src, opts)
		if err != nil || !r.Cached {
			b.Fatal("miss", err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N), "us/load")
}

// A FIFO in place of an entry is not read (it would block forever): the
// kernel is compiled again and the entry replaced.
func TestCacheEntryFIFO(t *testing.T) {
	fc := &fakeCompiler{}
	c := newTestCache(t, fc)
	opts := testOptions()
	key, _, err := c.Key(testSrc, opts)
	if err != nil {
		t.Fatal(err)
	}
	if err := mkfifo(c.path(key)); err != nil {
		t.Skip("no FIFO here:", err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := c.Compile(testSrc, opts)
		done <- err
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(time.Minute):
		t.Fatal("Compile blocks on a FIFO entry")
	}
	if fc.calls.Load() != 1 {
		t.Errorf("%d compiles, want 1", fc.calls.Load())
	}
	if st, err := os.Lstat(c.path(key)); err != nil || !st.Mode().IsRegular() {
		t.Errorf("the FIFO was not replaced by an entry: %v", err)
	}
}
