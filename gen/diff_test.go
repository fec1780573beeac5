package gen

import (
	"strings"
	"testing"

	"github.com/gocu-dev/gocu/gen/difftest"
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
// --fmad=false (Go on amd64 fuses no multiply-add; see DESIGN.md).
func TestDifferentialGPU(t *testing.T) {
	needGPU(t)
	for i, c := range diffCases(t, 20) {
		p := mustTranslate(t, c.Source)
		for _, opts := range [][]string{{"--fmad=false"}, {"--fmad=false", "-DGOCU_DEBUG"}} {
			out, errBuf, err := gpuLaunch(p.CUDA, p.Meta[0].Entry, opts, dim(1, 1, 1), dim(1, 1, 1), 0, c.Args())
			if err != nil {
				t.Fatal(err)
			}
			if bad := c.Check(out[len(out)-1].([]uint64)); len(bad) > 0 {
				t.Errorf("case %d %v: %d of %d expressions differ between Go and the GPU:\n%s",
					i, opts, len(bad), len(c.Exprs), strings.Join(bad[:min(len(bad), 20)], "\n"))
			}
			if len(errBuf) > 0 && errBuf[0] != 0 {
				t.Errorf("case %d: debug build reports error %d at site %d", i, errBuf[0], errBuf[1])
			}
		}
	}
}
