package gocu

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/gocu-dev/gocu/internal/owner"
	"github.com/gocu-dev/gocu/nvrtc"
)

// tuneFormat is the version of the stored choices; a new one ignores the
// old entries.
const tuneFormat = 1

// tuneKey is everything a tuning choice depends on.
type tuneKey struct {
	Format     int    `json:"format"`
	Name       string `json:"name"`       // package.Kernel, or Tuning.Name
	Version    string `json:"version"`    // source hash, or Tuning.Version
	Device     string `json:"device"`     // GPU name, compute capability, driver
	Shape      string `json:"shape"`      // shape class
	Candidates string `json:"candidates"` // the candidates as JSON, "" when they have none
}

func (k tuneKey) hash() string {
	k.Format = tuneFormat
	b, _ := json.Marshal(k)
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// tuneEntry is a stored choice.
type tuneEntry struct {
	Key   tuneKey `json:"key"`
	Index int     `json:"index"`
	// Best is the chosen candidate as JSON: an entry whose candidate is not
	// at Index any more is not used.
	Best    json.RawMessage `json:"best"`
	TimesNS []int64         `json:"times_ns"`
	Stored  time.Time       `json:"stored"`
}

// memo holds this process's choices by directory and key hash.
var memo sync.Map // string -> int

// tuneDir returns the directory of stored choices, created private to the
// user, or "" when GOCU_CACHE turns the cache off.
func tuneDir() (string, error) {
	if nvrtc.CacheDisabledByEnv() {
		return "", nil
	}
	base, err := nvrtc.DefaultDir()
	if err != nil {
		return "", err
	}
	dir := filepath.Join(nvrtc.UsableDir(base), "autotune")
	if err := privateDir(dir); err != nil {
		slog.Debug("gocu: autotune choices are not stored", "dir", dir, "err", err)
		return "", err
	}
	return dir, nil
}

// privateDir creates dir (0700) or checks that it belongs to the user, and
// makes it private if others can read it.
func privateDir(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	st, err := os.Lstat(dir)
	if err != nil {
		return err
	}
	if !st.IsDir() {
		return fmt.Errorf("%s is not a directory", dir)
	}
	if uid, me, ok := owner.Of(st); ok && uid != me {
		return fmt.Errorf("%s belongs to uid %d, not to you (uid %d)", dir, uid, me)
	}
	if st.Mode().Perm()&0o077 != 0 {
		return os.Chmod(dir, 0o700)
	}
	return nil
}

// recall returns the index of the stored choice for key, from this
// process's memory or from dir.
func recall[C any](dir string, key tuneKey, candidates []C) (int, bool) {
	h := key.hash()
	if v, ok := memo.Load(dir + "\x00" + h); ok {
		return v.(int), true
	}
	if dir == "" || key.Candidates == "" {
		return 0, false
	}
	e, err := readEntry(filepath.Join(dir, h+".json"), key)
	if err != nil {
		if !errors.Is(err, os.ErrNotExist) {
			slog.Debug("gocu: stored autotune choice not used; tuning again", "err", err)
		}
		return 0, false
	}
	if e.Index < 0 || e.Index >= len(candidates) {
		return 0, false
	}
	var stored bytes.Buffer
	enc, err := json.Marshal(candidates[e.Index])
	if err != nil || json.Compact(&stored, e.Best) != nil || !bytes.Equal(enc, stored.Bytes()) {
		slog.Debug("gocu: stored autotune choice is not among the candidates; tuning again", "file", h)
		return 0, false
	}
	memo.Store(dir+"\x00"+h, e.Index)
	return e.Index, true
}

// readEntry reads and verifies a stored choice: its checksum line, then
// its key.
func readEntry(path string, key tuneKey) (*tuneEntry, error) {
	// Only a regular file: a FIFO in its place would block the read.
	st, err := os.Lstat(path)
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file (%v)", path, st.Mode().Type())
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	payload, sum, ok := splitChecksum(data)
	if !ok {
		return nil, fmt.Errorf("%s: damaged (no checksum line)", path)
	}
	if s := sha256.Sum256(payload); hex.EncodeToString(s[:]) != sum {
		return nil, fmt.Errorf("%s: damaged (checksum mismatch)", path)
	}
	var e tuneEntry
	if err := json.Unmarshal(payload, &e); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	key.Format = tuneFormat
	if e.Key != key {
		return nil, fmt.Errorf("%s: stored for another key", path)
	}
	return &e, nil
}

// splitChecksum splits "payload\nsha256:<hex>\n".
func splitChecksum(data []byte) (payload []byte, sum string, ok bool) {
	data = bytes.TrimSuffix(data, []byte("\n"))
	i := bytes.LastIndexByte(data, '\n')
	if i < 0 {
		return nil, "", false
	}
	line, found := bytes.CutPrefix(data[i+1:], []byte("sha256:"))
	if !found {
		return nil, "", false
	}
	return data[:i], string(line), true
}

// remember keeps a choice for this process and stores it in dir.
func remember(dir string, key tuneKey, index int, times []time.Duration) {
	h := key.hash()
	memo.Store(dir+"\x00"+h, index)
	if dir == "" || key.Candidates == "" {
		return
	}
	var cands []json.RawMessage
	if err := json.Unmarshal([]byte(key.Candidates), &cands); err != nil || index >= len(cands) {
		return
	}
	key.Format = tuneFormat
	e := tuneEntry{Key: key, Index: index, Best: cands[index], Stored: time.Now().UTC()}
	for _, t := range times {
		e.TimesNS = append(e.TimesNS, t.Nanoseconds())
	}
	payload, err := json.MarshalIndent(e, "", "  ")
	if err != nil {
		return
	}
	sum := sha256.Sum256(payload)
	data := append(payload, "\nsha256:"+hex.EncodeToString(sum[:])+"\n"...)
	if err := writeFileAtomic(filepath.Join(dir, h+".json"), data); err != nil {
		slog.Debug("gocu: autotune choice not stored", "err", err)
	}
}

// writeFileAtomic writes a private file through a temporary file in the
// same directory and a rename, so that readers never see half of it.
func writeFileAtomic(path string, data []byte) error {
	f, err := os.CreateTemp(filepath.Dir(path), ".tmp-*")
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(f.Name(), 0o600)
	}
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		os.Remove(f.Name())
	}
	return err
}

// AutotuneStore describes the stored autotuning choices.
type AutotuneStore struct {
	Dir     string // nvrtc.UsableDir(nvrtc.DefaultDir())/autotune
	Entries int    // stored choices
	Bytes   int64  // their size
}

// autotuneStoreDir is where choices are stored, whether or not it exists
// and whether or not GOCU_CACHE turns the cache off.
func autotuneStoreDir() (string, error) {
	base, err := nvrtc.DefaultDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(nvrtc.UsableDir(base), "autotune"), nil
}

// isTuneEntryName reports whether name is a stored choice: 64 hex digits
// and .json, as remember writes it.
func isTuneEntryName(name string) bool {
	h, ok := strings.CutSuffix(name, ".json")
	if !ok || len(h) != 2*sha256.Size {
		return false
	}
	_, err := hex.DecodeString(h)
	return err == nil
}

// AutotuneStoreInfo counts the autotuning choices stored on disk (see
// Autotune) and their size.
func AutotuneStoreInfo() (AutotuneStore, error) {
	dir, err := autotuneStoreDir()
	if err != nil {
		return AutotuneStore{}, err
	}
	info := AutotuneStore{Dir: dir}
	ents, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return info, nil
	}
	if err != nil {
		return info, fmt.Errorf("gocu: reading the autotuning choices: %w", err)
	}
	for _, e := range ents {
		if !isTuneEntryName(e.Name()) || !e.Type().IsRegular() {
			continue
		}
		if fi, err := e.Info(); err == nil {
			info.Entries++
			info.Bytes += fi.Size()
		}
	}
	return info, nil
}

// ClearAutotuneStore removes every stored autotuning choice (and leftover
// temporary file) and forgets this process's choices, so that the next
// Autotune times its candidates again; it returns how many choices it
// removed. Other files in the directory are left alone.
func ClearAutotuneStore() (int, error) {
	memo.Clear()
	dir, err := autotuneStoreDir()
	if err != nil {
		return 0, err
	}
	ents, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("gocu: reading the autotuning choices: %w", err)
	}
	n := 0
	var firstErr error
	for _, e := range ents {
		name := e.Name()
		entry := isTuneEntryName(name)
		if !entry && !strings.HasPrefix(name, ".tmp-") {
			continue
		}
		if err := os.Remove(filepath.Join(dir, name)); err != nil && !errors.Is(err, os.ErrNotExist) {
			if firstErr == nil {
				firstErr = fmt.Errorf("gocu: clearing the autotuning choices: %w", err)
			}
			continue
		}
		if entry {
			n++
		}
	}
	return n, firstErr
}
