package gen

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"math"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/gocu-dev/gocu/gen/internal/difftest"
)

func diffCases(t *testing.T, n int) []*difftest.Case {
	r := newRand(t)
	var cs []*difftest.Case
	for i := 0; i < n; i++ {
		cs = append(cs, difftest.Generate(r, difftest.Config{Exprs: 200}))
	}
	return cs
}

// TestDifferentialHost translates random expressions, compiles the kernel
// for the GPU with clang, runs it as host C++ and compares every result
// with Go's.
func TestDifferentialHost(t *testing.T) {
	for i, c := range diffCases(t, 4) {
		p := mustTranslate(t, c.Source)
		compileCUDA(t, "diff", p.CUDA)
		for _, debug := range []bool{false, true} {
			out, errBuf := hostRunSource(t, p.CUDA, &p.Meta[0], dim(1, 1, 1), dim(1, 1, 1), debug, c.Args()...)
			if bad := c.Check(out[len(out)-1].([]uint64)); len(bad) > 0 {
				t.Errorf("case %d (debug=%v): %d of %d expressions differ between Go and the translated C++:\n%s",
					i, debug, len(bad), len(c.Exprs), strings.Join(bad[:min(len(bad), 20)], "\n"))
			}
			if debug && errBuf[0] != 0 {
				t.Errorf("case %d: debug build reports error %d at site %d", i, errBuf[0], errBuf[1])
			}
		}
	}
}

// TestDifferentialGPU is the same on the GPU, compiled with NVRTC and
// --fmad=false (Go on amd64 fuses no multiply-add; see DESIGN.md). Fresh
// random cases are translated where the go command is there to load the
// kernel package; the GPU machine, which runs prebuilt test binaries,
// uses the translated cases kept in testdata (see TestDifferentialStored).
func TestDifferentialGPU(t *testing.T) {
	needGPU(t)
	var cases []diffStored
	if _, err := exec.LookPath("go"); err == nil {
		for _, c := range diffCases(t, 20) {
			p := mustTranslate(t, c.Source)
			cases = append(cases, diffStored{Case: c, CUDA: p.CUDA, Entry: p.Meta[0].Entry})
		}
	} else {
		t.Logf("no go command to translate fresh cases (%v): using the %s", err, diffStoredFile)
		cases = loadDiffStored(t)
	}
	for i, c := range cases {
		for _, opts := range [][]string{{"--fmad=false"}, {"--fmad=false", "-DGOCU_DEBUG"}} {
			out, errBuf, err := gpuLaunch(c.CUDA, c.Entry, opts, dim(1, 1, 1), dim(1, 1, 1), 0, c.Case.Args())
			if err != nil {
				t.Fatal(err)
			}
			if bad := c.Case.Check(out[len(out)-1].([]uint64)); len(bad) > 0 {
				t.Errorf("case %d %v: %d of %d expressions differ between Go and the GPU:\n%s",
					i, opts, len(bad), len(c.Case.Exprs), strings.Join(bad[:min(len(bad), 20)], "\n"))
			}
			if len(errBuf) > 0 && errBuf[0] != 0 {
				t.Errorf("case %d: debug build reports error %d at site %d", i, errBuf[0], errBuf[1])
			}
		}
	}
}

// diffStored is a differential case translated ahead of time.
type diffStored struct {
	Case  *difftest.Case
	CUDA  string
	Entry string
}

// storedForm is diffStored as JSON, which has no NaN: the absolute
// tolerances travel as bits.
type storedForm struct {
	Case       difftest.Case
	AbsTolBits []uint64
	CUDA       string
	Entry      string
}

func (d diffStored) MarshalJSON() ([]byte, error) {
	// The runtime header is the same in every case: it is stored once, in
	// the translator.
	f := storedForm{Case: *d.Case, CUDA: strings.Replace(d.CUDA, header, headerMark, 1), Entry: d.Entry}
	f.Case.AbsTol = nil
	for _, v := range d.Case.AbsTol {
		f.AbsTolBits = append(f.AbsTolBits, math.Float64bits(v))
	}
	return json.Marshal(f)
}

func (d *diffStored) UnmarshalJSON(b []byte) error {
	var f storedForm
	if err := json.Unmarshal(b, &f); err != nil {
		return err
	}
	for _, v := range f.AbsTolBits {
		f.Case.AbsTol = append(f.Case.AbsTol, math.Float64frombits(v))
	}
	*d = diffStored{Case: &f.Case, CUDA: strings.Replace(f.CUDA, headerMark, header, 1), Entry: f.Entry}
	return nil
}

const (
	diffStoredFile = "testdata/diffgpu.json.gz"
	headerMark     = "\n// @gocu runtime header@\n"
)

func loadDiffStored(t testing.TB) []diffStored {
	t.Helper()
	f, err := os.Open(diffStoredFile)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	z, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	var cs []diffStored
	if err := json.NewDecoder(z).Decode(&cs); err != nil {
		t.Fatalf("%s: %v", diffStoredFile, err)
	}
	return cs
}

// TestDifferentialStored keeps the stored cases current: each must still
// translate to exactly its stored CUDA source. go test -run
// TestDifferentialStored -update makes a fresh set.
func TestDifferentialStored(t *testing.T) {
	if *update {
		var cs []diffStored
		for _, c := range diffCases(t, 8) {
			p := mustTranslate(t, c.Source)
			cs = append(cs, diffStored{Case: c, CUDA: p.CUDA, Entry: p.Meta[0].Entry})
		}
		var buf bytes.Buffer
		z, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
		if err := json.NewEncoder(z).Encode(cs); err != nil {
			t.Fatal(err)
		}
		z.Close()
		if err := os.WriteFile(diffStoredFile, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cs := loadDiffStored(t)
	if len(cs) < 8 {
		t.Fatalf("%s holds %d cases", diffStoredFile, len(cs))
	}
	for i, c := range cs {
		p := mustTranslate(t, c.Case.Source)
		if p.CUDA != c.CUDA || p.Meta[0].Entry != c.Entry {
			t.Fatalf("stored case %d no longer matches the translator: run go test ./gen -run TestDifferentialStored -update", i)
		}
		if got := len(c.Case.Args()); got != 13 {
			t.Fatalf("stored case %d has %d arguments", i, got)
		}
	}
}
