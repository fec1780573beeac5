package nvrtc

import (
	"crypto/sha256"
	"encoding/binary"
	"hash"
	"io/fs"
	"path/filepath"
	"sort"
	"strconv"
	"sync"
	"time"
)

// Key identifies one compilation in the cache: a SHA-256 over every input.
type Key [sha256.Size]byte

// keyInputs is everything that decides what a compilation produces.
type keyInputs struct {
	formatVersion uint32 // of the cache entries
	compiler      string // compiler and version, e.g. "nvrtc 13.0"
	driver        string // the caller's driver version
	format        Format
	src           string
	opts          *Options
	includeDirs   []string // fingerprints of Options.IncludePaths, in order
}

// hashKey hashes the inputs. Every field is tagged and length-prefixed, so
// no two different inputs can produce the same byte stream.
func hashKey(in *keyInputs) Key {
	h := sha256.New()
	w := keyWriter{h: h}
	w.num('V', uint64(in.formatVersion))
	w.str('C', in.compiler)
	w.str('D', in.driver)
	w.num('F', uint64(in.format))
	w.str('N', in.opts.name())
	w.str('S', in.src)
	names := sortedKeys(in.opts.Headers)
	w.num('H', uint64(len(names)))
	for _, n := range names {
		w.str('h', n)
		w.str('c', in.opts.Headers[n])
	}
	// Args covers Arch, Std, Defines, IncludePaths, the flags and Extra, in
	// the order NVRTC sees them (a later -D can override an earlier one).
	args := in.opts.Args()
	w.num('A', uint64(len(args)))
	for _, a := range args {
		w.str('a', a)
	}
	w.num('E', uint64(len(in.opts.NameExpressions)))
	for _, e := range in.opts.NameExpressions {
		w.str('e', e)
	}
	w.num('I', uint64(len(in.includeDirs)))
	for _, d := range in.includeDirs {
		w.str('i', d)
	}
	var k Key
	h.Sum(k[:0])
	return k
}

type keyWriter struct {
	h   hash.Hash
	buf [9]byte
}

func (w *keyWriter) num(tag byte, v uint64) {
	w.buf[0] = tag
	binary.LittleEndian.PutUint64(w.buf[1:], v)
	w.h.Write(w.buf[:])
}

func (w *keyWriter) str(tag byte, s string) {
	w.num(tag, uint64(len(s)))
	w.h.Write([]byte(s))
}

// Include directories are inputs too: a header found through
// Options.IncludePaths changes what compiles. Their contents cannot be known
// before compiling, so the key covers the path, size and modification time
// of every file under them. Walking a toolkit's include tree takes a few
// milliseconds, so a fingerprint is reused for dirFingerprintTTL.
const dirFingerprintTTL = time.Second

// maxDirFiles bounds the files fingerprinted under one include directory (a
// variable so tests can lower it).
var maxDirFiles = 50000

type dirFingerprint struct {
	digest string
	ok     bool
	at     time.Time
}

var dirFingerprints sync.Map // directory -> dirFingerprint

// fingerprintDir returns a digest of the files under dir. ok is false when
// the directory is too large to cover; such a compilation is not cached.
func fingerprintDir(dir string) (string, bool) {
	if v, found := dirFingerprints.Load(dir); found {
		fp := v.(dirFingerprint)
		if time.Since(fp.at) < dirFingerprintTTL {
			return fp.digest, fp.ok
		}
	}
	type file struct {
		rel   string
		size  int64
		mtime int64
	}
	var files []file
	ok := true
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil // unreadable parts cannot be included either
		}
		if len(files) >= maxDirFiles {
			ok = false
			return filepath.SkipAll
		}
		if d.IsDir() {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return nil
		}
		rel, _ := filepath.Rel(dir, p)
		files = append(files, file{rel, info.Size(), info.ModTime().UnixNano()})
		return nil
	})
	h := sha256.New()
	if err != nil {
		h.Write([]byte("unreadable:" + err.Error()))
	}
	sort.Slice(files, func(i, j int) bool { return files[i].rel < files[j].rel })
	for _, f := range files {
		h.Write([]byte(f.rel + "\x00" + strconv.FormatInt(f.size, 10) + "\x00" + strconv.FormatInt(f.mtime, 10) + "\n"))
	}
	digest := dir + "=" + string(h.Sum(nil))
	dirFingerprints.Store(dir, dirFingerprint{digest, ok, time.Now()})
	return digest, ok
}
