package gocu

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// FuzzAutotuneEntry feeds stored autotuning choices to the reader: as
// files found on disk, and as payloads under a valid checksum line (which
// random bytes never reach otherwise). A damaged, foreign or out-of-range
// entry must be ignored (tuned again), never trusted or crash; an index
// that is recalled must name a candidate. The corpus is
// testdata/fuzz/FuzzAutotuneEntry.
func FuzzAutotuneEntry(f *testing.F) {
	key := tuneKey{Name: "pkg.K", Version: "v1", Device: "NVIDIA H100 sm_90 580", Shape: "4096", Candidates: `[{"X":64},{"X":128},{"X":256}]`}
	k := key
	k.Format = tuneFormat
	entry := func(index int, best string, times []int64) []byte {
		b, _ := json.Marshal(tuneEntry{Key: k, Index: index, Best: json.RawMessage(best), TimesNS: times})
		return b
	}
	f.Add(entry(1, `{"X":128}`, []int64{3, 1, 2}), true)
	f.Add(entry(1<<62, `{"X":128}`, nil), true)
	f.Add(entry(-1, `{"X":64}`, nil), true)
	f.Add(entry(2, `{"X":64}`, nil), true)
	f.Add(entry(0, `{"X":64}`, []int64{-1 << 63, 1<<63 - 1}), true)
	f.Add([]byte(`{"key":{"format":1},"index":0,"best":{"X":64},"times_ns":[`+string(make([]byte, 64))+`]}`), true)
	f.Add([]byte("{}\nsha256:00\n"), false)
	f.Add([]byte("\nsha256:"), false)
	dir := f.TempDir()
	path := filepath.Join(dir, key.hash()+".json")
	type cand struct{ X int }
	cands := []cand{{64}, {128}, {256}}
	// The first seed is a good entry: it is recalled.
	good := entry(1, `{"X":128}`, []int64{3, 1, 2})
	sum := sha256.Sum256(good)
	if err := os.WriteFile(path, append(good, "\nsha256:"+hex.EncodeToString(sum[:])+"\n"...), 0o600); err != nil {
		f.Fatal(err)
	}
	memo.Clear()
	if i, ok := recall(dir, key, cands); !ok || i != 1 {
		f.Fatalf("a good entry is not recalled: %d, %v", i, ok)
	}
	f.Fuzz(func(t *testing.T, data []byte, checksum bool) {
		if checksum {
			sum := sha256.Sum256(data)
			data = append(append([]byte(nil), data...), "\nsha256:"+hex.EncodeToString(sum[:])+"\n"...)
		}
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		memo.Clear()
		i, ok := recall(dir, key, cands)
		if ok && (i < 0 || i >= len(cands)) {
			t.Fatalf("recalled index %d of %d candidates", i, len(cands))
		}
		if ok {
			var e tuneEntry
			payload, _, _ := splitChecksum(data)
			if json.Unmarshal(payload, &e) != nil || e.Key != k {
				t.Fatalf("recalled a choice from an entry for another key")
			}
		}
	})
}
