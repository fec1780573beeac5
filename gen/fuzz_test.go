package gen

import (
	"errors"
	"strings"
	"testing"

	"github.com/gocu-dev/gocu/internal/clangtest"
)

// FuzzTranslate feeds kernel bodies to the translator: it must never crash
// or report an internal error, and whatever it accepts must compile with
// clang (when present) and come with a parseable Go file.
//
//	go test ./gen -run '^$' -fuzz FuzzTranslate -fuzztime 60s
func FuzzTranslate(f *testing.F) {
	for _, c := range errorCases {
		if c.file == "" {
			f.Add(c.decls, c.body)
		}
	}
	f.Add("", "i := t.Index()\nif i < n {\n\tx[i] = float32(k[i]) * 0.5\n}")
	f.Add("func sq(v float32) float32 { return v * v }", "for i := range n {\n\tx[i] = sq(x[i])\n}")
	f.Add("type P struct{ A, B int32 }", "p := P{1, 2}\nk[0] = p.A << p.B\nb[0] = uint8(k[1] % 7)")
	f.Add("", "s := kernel.Shared[[32]float32](t)\ns[t.LaneID()] = x[0]\nt.SyncThreads()\nx[1] = kernel.ShflDown(t, kernel.FullMask, s[0], 1)")
	f.Add("", "switch {\ncase n > 3:\n\tx[0] = 1\ndefault:\n\tx[0] = min(x[1], x[2])\n}")
	_, clangErr := clangtest.Find("clang-16")
	f.Fuzz(func(t *testing.T, decls, body string) {
		if strings.Contains(decls+body, "//go:") || strings.Contains(decls+body, "import") {
			return
		}
		src := kernelSrc(decls, "x []float32, k []int32, b []uint8, n int32", body)
		p, err := translate(t, src)
		if err != nil {
			var e *Error
			if errors.As(err, &e) && strings.Contains(err.Error(), "internal error") {
				t.Fatalf("internal error for\n%s\n%v", src, err)
			}
			return
		}
		if p == nil {
			return
		}
		if len(p.Go) == 0 {
			t.Fatalf("no Go file for\n%s", src)
		}
		if clangErr == nil || clangtest.Required() {
			compileCUDA(t, "fuzz", p.CUDA)
		}
	})
}
