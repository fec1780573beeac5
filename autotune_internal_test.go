package gocu

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gocu-dev/gocu/cuda"
)

// fakeTuner times candidates with a fake clock: a launch of candidate c
// takes cost[c], whatever it does, and every launch is counted.
type fakeTuner struct {
	cost     map[int]time.Duration
	current  int
	launches int
	timed    int
}

func (f *fakeTuner) env(dir string) *tuneEnv {
	return &tuneEnv{
		device: "fake H100 sm_90 driver 13000",
		dir:    dir,
		time: func(launch func() error, reps int) (time.Duration, error) {
			f.timed++
			for range reps {
				if err := launch(); err != nil {
					return 0, err
				}
			}
			return f.cost[f.current], nil
		},
		close: func() {},
	}
}

// inc is an in-place "kernel": it adds step to every element of the
// buffer's current memory, so a candidate running on the real buffer
// instead of a scratch copy shows up in the result.
func inc(f *fakeTuner, x *Buffer[float32], failing map[Config]error) func(Config) error {
	return func(c Config) error {
		f.current = int(c.Block.X)
		f.launches++
		if err := failing[c]; err != nil {
			return err
		}
		for i := range x.Host() {
			x.Host()[i] += float32(c.Block.X)
		}
		return nil
	}
}

func blocks(xs ...int32) []Config {
	var cs []Config
	for _, x := range xs {
		cs = append(cs, Config{Grid: Dim3{X: 1}, Block: Dim3{X: x}})
	}
	return cs
}

func TestAutotunePicksFastestAndPersists(t *testing.T) {
	memo.Clear()
	d := simDev(t)
	dir := t.TempDir()
	x := filled(t, d, 5, 100)
	f := &fakeTuner{cost: map[int]time.Duration{64: 30 * time.Microsecond, 128: 10 * time.Microsecond, 256: 20 * time.Microsecond}}
	spec := Tuning{Name: "inc", Version: "v1", Shape: []int{5000}, Written: []AnyBuffer{x}, Warmup: 3}
	cands := blocks(64, 128, 256)
	res, err := autotune(f.env(dir), spec, cands, inc(f, x, nil))
	if err != nil {
		t.Fatal(err)
	}
	if res.Index != 1 || res.Best != cands[1] || res.Cached {
		t.Fatalf("picked %d (%v), cached %v; want candidate 1, timed", res.Index, res.Best, res.Cached)
	}
	if res.Times[0] != 30*time.Microsecond || res.Times[1] != 10*time.Microsecond || res.Times[2] != 20*time.Microsecond {
		t.Errorf("times %v", res.Times)
	}
	// The candidates ran on scratch copies: the real buffer holds exactly
	// one application of the winner.
	for i, v := range x.Host() {
		if want := 100 + float32(i) + 128; v != want {
			t.Fatalf("x[%d] = %v after tuning, want %v: candidates corrupted each other's results", i, v, want)
		}
	}
	// Each candidate: 3 warm-up launches, one launch to size the samples
	// (1 ms / cost, capped at 100) and five samples; then the real launch.
	want := 0
	for _, c := range cands {
		reps := min(100, int(time.Millisecond/f.cost[int(c.Block.X)]))
		want += 3 + 1 + 5*reps
	}
	if f.launches != want+1 {
		t.Errorf("%d launches, want %d", f.launches, want+1)
	}

	files, _ := filepath.Glob(filepath.Join(dir, "*.json"))
	if len(files) != 1 {
		t.Fatalf("stored %d files, want 1: %v", len(files), files)
	}
	if st, err := os.Stat(files[0]); err != nil || st.Mode().Perm() != 0o600 {
		t.Errorf("stored file mode %v (%v), want 0600", st.Mode().Perm(), err)
	}

	// The same process: from memory, nothing timed, one real launch.
	f.timed, f.launches = 0, 0
	res, err = autotune(f.env(dir), spec, cands, inc(f, x, nil))
	if err != nil || !res.Cached || res.Index != 1 || f.timed != 0 || f.launches != 1 {
		t.Fatalf("second call: %+v %v, timed %d, launches %d; want the remembered choice", res, err, f.timed, f.launches)
	}
	// A new process: from the file.
	memo.Clear()
	f.timed = 0
	res, err = autotune(f.env(dir), spec, cands, inc(f, x, nil))
	if err != nil || !res.Cached || res.Index != 1 || f.timed != 0 {
		t.Fatalf("after a restart: %+v %v, timed %d; want the stored choice", res, err, f.timed)
	}

	// Another shape class, another candidate list, another version, another
	// device: tuned anew.
	for i, s := range []Tuning{
		{Name: "inc", Version: "v1", Shape: []int{9000}},
		{Name: "inc", Version: "v2", Shape: []int{5000}},
	} {
		f.timed = 0
		if res, err := autotune(f.env(dir), s, cands, inc(f, x, nil)); err != nil || res.Cached || f.timed == 0 {
			t.Errorf("case %d: %+v %v: want a fresh tuning", i, res, err)
		}
	}
	f.timed = 0
	if res, err := autotune(f.env(dir), spec, blocks(64, 128), inc(f, x, nil)); err != nil || res.Cached || f.timed == 0 {
		t.Errorf("other candidates: %+v %v: want a fresh tuning", res, err)
	}
	// 4000 is in the same class as 5000.
	memo.Clear()
	f.timed = 0
	if res, err := autotune(f.env(dir), Tuning{Name: "inc", Version: "v1", Shape: []int{4100}}, cands, inc(f, x, nil)); err != nil || !res.Cached {
		t.Errorf("same shape class: %+v %v: want the stored choice", res, err)
	}
}

func TestAutotuneRejectsBadEntries(t *testing.T) {
	d := simDev(t)
	dir := t.TempDir()
	x := filled(t, d, 3, 0)
	f := &fakeTuner{cost: map[int]time.Duration{32: 5 * time.Microsecond, 64: 2 * time.Microsecond}}
	spec := Tuning{Name: "bad", Version: "v1", Shape: []int{3}, Reps: 2}
	cands := blocks(32, 64)
	memo.Clear()
	if _, err := autotune(f.env(dir), spec, cands, inc(f, x, nil)); err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*.json"))
	if len(files) != 1 {
		t.Fatalf("%d files", len(files))
	}
	good, _ := os.ReadFile(files[0])
	damage := []struct {
		name string
		data []byte
	}{
		{"flipped byte", []byte(strings.Replace(string(good), `"index": 1`, `"index": 0`, 1))},
		{"truncated", good[:len(good)/2]},
		{"no checksum", []byte(strings.SplitN(string(good), "\nsha256:", 2)[0])},
		{"empty", nil},
		{"checksummed, but names another candidate", resum(strings.Replace(string(good), `"index": 1`, `"index": 0`, 1))},
	}
	for _, dm := range damage {
		if err := os.WriteFile(files[0], dm.data, 0o600); err != nil {
			t.Fatal(err)
		}
		memo.Clear()
		f.timed = 0
		res, err := autotune(f.env(dir), spec, cands, inc(f, x, nil))
		if err != nil || res.Cached || f.timed == 0 || res.Index != 1 {
			t.Errorf("%s: %+v %v: want a fresh tuning", dm.name, res, err)
		}
		if now, _ := os.ReadFile(files[0]); string(now) != string(good) && !strings.Contains(string(now), `"index": 1`) {
			t.Errorf("%s: entry not rewritten:\n%s", dm.name, now)
		}
	}
	// An intact entry moved to another key's name is refused.
	other := Tuning{Name: "bad", Version: "v2", Shape: []int{3}, Reps: 2}
	memo.Clear()
	f.timed = 0
	if _, err := autotune(f.env(t.TempDir()), other, cands, inc(f, x, nil)); err != nil {
		t.Fatal(err)
	}
	k2 := tuneKey{Name: "bad", Version: "v2", Device: "fake H100 sm_90 driver 13000", Shape: shapeClass(other.Shape)}
	k2.Candidates = mustJSON(t, cands)
	if err := os.WriteFile(filepath.Join(dir, k2.hash()+".json"), good, 0o600); err != nil {
		t.Fatal(err)
	}
	memo.Clear()
	f.timed = 0
	if res, err := autotune(f.env(dir), other, cands, inc(f, x, nil)); err != nil || res.Cached || f.timed == 0 {
		t.Errorf("entry of another key: %+v %v: want a fresh tuning", res, err)
	}
}

func TestAutotuneFailingCandidates(t *testing.T) {
	memo.Clear()
	d := simDev(t)
	x := filled(t, d, 4, 0)
	f := &fakeTuner{cost: map[int]time.Duration{32: 5 * time.Microsecond, 64: 1 * time.Microsecond, 2048: time.Nanosecond}}
	cands := blocks(32, 64, 2048)
	tooBig := &cuda.ConfigError{Kernel: "inc", Reason: "a block of 2048 threads is too many"}
	res, err := autotune(f.env(""), Tuning{Name: "f", Version: "1", Reps: 1}, cands, inc(f, x, map[Config]error{cands[2]: tooBig}))
	if err != nil {
		t.Fatal(err)
	}
	if res.Index != 1 || !errors.Is(res.Errors[2], cuda.ErrInvalidConfig) || res.Errors[0] != nil || res.Times[2] != 0 {
		t.Errorf("%+v: want candidate 1, candidate 2 skipped with its error", res)
	}
	// None can run: the error lists each.
	memo.Clear()
	all := map[Config]error{cands[0]: tooBig, cands[1]: tooBig, cands[2]: tooBig}
	if _, err := autotune(f.env(""), Tuning{Name: "f", Version: "2", Reps: 1}, cands, inc(f, x, all)); err == nil ||
		!strings.Contains(err.Error(), "no candidate could run") || !strings.Contains(err.Error(), "candidate 2: ") {
		t.Errorf("all failing: %v", err)
	}
	// A lost context ends the tuning at once.
	memo.Clear()
	lost := &cuda.Error{Func: "cuLaunchKernel", Code: 700, Name: "CUDA_ERROR_ILLEGAL_ADDRESS"}
	f.launches = 0
	_, err = autotune(f.env(""), Tuning{Name: "f", Version: "3", Reps: 1}, cands, inc(f, x, map[Config]error{cands[0]: lost}))
	if !errors.Is(err, cuda.ErrContextLost) || f.launches != 1 {
		t.Errorf("lost context: %v after %d launches, want ErrContextLost after 1", err, f.launches)
	}
}

func TestAutotuneScratchBound(t *testing.T) {
	memo.Clear()
	f := &fakeTuner{cost: map[int]time.Duration{1: 2 * time.Microsecond, 2: time.Microsecond}}
	host := []int32{5, 6}
	io := InOut(host)
	launch := func(c Config) error {
		f.current = int(c.Block.X)
		io.bind.host[0] += c.Block.X // what a launch with InOut(host) leaves behind
		return nil
	}
	res, err := autotune(f.env(""), Tuning{Name: "io", Version: "1", Written: []AnyBuffer{io}, Reps: 1}, blocks(1, 2), launch)
	if err != nil || res.Index != 1 {
		t.Fatal(res, err)
	}
	if host[0] != 7 || io.bind.host[0] != 7 {
		t.Errorf("InOut slice %v after tuning, want [7 6]: one launch of the winner", host)
	}
}

func TestAutotuneUsage(t *testing.T) {
	d := simDev(t)
	calls := 0
	res, err := Autotune(d, Tuning{}, blocks(128, 256), func(c Config) error { calls++; return nil })
	if err != nil || res.Index != 0 || res.Best.Block.X != 128 || calls != 1 {
		t.Errorf("simulator: %+v %v after %d calls; want the first candidate launched once", res, err, calls)
	}
	for _, c := range []struct {
		err  error
		want string
	}{
		{func() error {
			_, err := Autotune(nil, Tuning{}, blocks(1), func(Config) error { return nil })
			return err
		}(), "no device"},
		{func() error {
			_, err := Autotune(d, Tuning{}, []Config{}, func(Config) error { return nil })
			return err
		}(), "no candidates"},
		{func() error { _, err := Autotune[Config](d, Tuning{}, blocks(1), nil); return err }(), "nil launch"},
		{func() error {
			_, err := autotune((&fakeTuner{}).env(""), Tuning{}, blocks(1), func(Config) error { return nil })
			return err
		}(), "set Tuning.Kernel"},
		{func() error {
			_, err := autotune((&fakeTuner{}).env(""), Tuning{Kernel: addOffByOne}, blocks(1), func(Config) error { return nil })
			return err
		}(), "is not a kernel translated by gocu gen"},
		{func() error {
			_, err := autotune((&fakeTuner{}).env(""), Tuning{Name: "n", Version: "v", Written: []AnyBuffer{(*Buffer[int8])(nil)}}, blocks(1), func(Config) error { return nil })
			return err
		}(), "nil *gocu.Buffer"},
	} {
		if c.err == nil || !strings.Contains(c.err.Error(), c.want) {
			t.Errorf("got %v, want an error with %q", c.err, c.want)
		}
	}
	if got := shapeClass([]int{1000, 1023, 1024, 1, 0}); got != "2^9x2^9x2^10x2^0x0" {
		t.Errorf("shapeClass = %q", got)
	}
}

func TestPrivateDir(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "a", "autotune")
	if err := privateDir(dir); err != nil {
		t.Fatal(err)
	}
	if st, _ := os.Stat(dir); st.Mode().Perm() != 0o700 {
		t.Errorf("new directory mode %v, want 0700", st.Mode().Perm())
	}
	os.Chmod(dir, 0o755)
	if err := privateDir(dir); err != nil {
		t.Fatal(err)
	}
	if st, _ := os.Stat(dir); st.Mode().Perm() != 0o700 {
		t.Errorf("open directory left %v, want it made private", st.Mode().Perm())
	}
	file := filepath.Join(t.TempDir(), "f")
	os.WriteFile(file, nil, 0o600)
	if err := privateDir(file); err == nil {
		t.Error("a file was accepted as the directory")
	}
	t.Setenv("GOCU_CACHE", "off")
	if d, err := tuneDir(); d != "" || err != nil {
		t.Errorf("GOCU_CACHE=off: tuneDir = %q, %v; want nowhere", d, err)
	}
	t.Setenv("GOCU_CACHE", "")
	t.Setenv("GOCU_CACHE_DIR", filepath.Join(t.TempDir(), "c"))
	if d, err := tuneDir(); err != nil || !strings.HasSuffix(d, filepath.Join("c", "autotune")) {
		t.Errorf("tuneDir = %q, %v", d, err)
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// resum replaces the checksum line of a stored entry with a valid one.
func resum(data string) []byte {
	payload := strings.SplitN(data, "\nsha256:", 2)[0]
	sum := sha256.Sum256([]byte(payload))
	return []byte(payload + "\nsha256:" + hex.EncodeToString(sum[:]) + "\n")
}

// ClearAutotuneStore removes the stored choices (which gocu cache clear
// relies on) and this process's memory of them, and nothing else.
func TestClearAutotuneStore(t *testing.T) {
	memo.Clear()
	t.Setenv("GOCU_CACHE", "")
	t.Setenv("GOCU_CACHE_DIR", filepath.Join(t.TempDir(), "c"))
	dir, err := tuneDir()
	if err != nil {
		t.Fatal(err)
	}
	key := tuneKey{Name: "inc", Version: "v1", Device: "dev", Shape: "4096", Candidates: `[{"a":1},{"a":2}]`}
	remember(dir, key, 1, []time.Duration{2, 1})
	other := filepath.Join(dir, "README")
	if err := os.WriteFile(other, []byte("not ours"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, ".tmp-123"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	info, err := AutotuneStoreInfo()
	if err != nil || info.Dir != dir || info.Entries != 1 || info.Bytes == 0 {
		t.Fatalf("AutotuneStoreInfo = %+v, %v; want 1 entry in %s", info, err, dir)
	}
	if _, ok := recall(dir, key, []struct{ A int }{{1}, {2}}); !ok {
		t.Fatal("the stored choice is not recalled")
	}
	n, err := ClearAutotuneStore()
	if err != nil || n != 1 {
		t.Fatalf("ClearAutotuneStore = %d, %v; want 1", n, err)
	}
	if _, ok := recall(dir, key, []struct{ A int }{{1}, {2}}); ok {
		t.Error("the choice is still recalled after the clear")
	}
	left, _ := filepath.Glob(filepath.Join(dir, "*"))
	tmp, _ := filepath.Glob(filepath.Join(dir, ".tmp-*"))
	if len(left) != 1 || left[0] != other || len(tmp) != 0 {
		t.Errorf("left %v and %v; want only %s", left, tmp, other)
	}
	if info, err := AutotuneStoreInfo(); err != nil || info.Entries != 0 {
		t.Errorf("after the clear: %+v, %v", info, err)
	}
	// A missing directory is an empty store.
	t.Setenv("GOCU_CACHE_DIR", filepath.Join(t.TempDir(), "none"))
	if n, err := ClearAutotuneStore(); n != 0 || err != nil {
		t.Errorf("missing directory: %d, %v", n, err)
	}
}
