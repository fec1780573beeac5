package gen

import (
	"errors"
	"flag"
	"os"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/gocu-dev/gocu/internal/clangtest"
)

// FuzzTranslate feeds kernel bodies to the translator: it must never crash
// or report an internal error, and whatever it accepts must come with a Go
// file (gofmt-formatted, so valid Go) and CUDA C++ that clang-16 compiles.
//
//	go test ./gen -run '^$' -fuzz FuzzTranslate -fuzztime 60s
//
// Each input is translated from source parsed and type-checked in memory
// against the kernel and math packages loaded once (no go command per
// input): about 0.8 ms. Compiling the CUDA with clang costs 150 ms, which
// made fuzzing crawl at a few inputs per second (0 execs/s while a new
// input was minimised, every step compiling again): clang compiles the seed
// corpus (go test), and inputs while fuzzing only with GOCU_FUZZ_CLANG=1.
// Inputs that are not UTF-8 (no Go source is) or longer than 1 KiB are
// skipped, so that the fuzzer explores the translator rather than
// go/parser's handling of binary noise.
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
	// Huge sizes and lengths: shared arrays beyond any GPU, local arrays
	// beyond an int32, constant indices and shifts at the limits.
	f.Add("", "s := kernel.Shared[[1 << 40]float32](t)\ns[0] = x[0]")
	f.Add("", "s := kernel.Shared[[1 << 20][1 << 20]float32](t)\ns[1<<19][1<<19] = 1")
	f.Add("", "var a [1 << 31]int32\na[n] = 1\nk[0] = a[1<<31-1]")
	f.Add("", "x[1<<62] = 1\nk[0] = k[0] << 63 >> 64")
	f.Add("type B [1 << 16][1 << 16]uint8", "var v B\nb[0] = v[n][n]")
	f.Add("", "for i := int32(0); i < 1<<31-1; i++ {\n\tx[i] += float32(i)\n}")
	// Generics, tables, pointer receivers, printing.
	f.Add("func g[T kernel.Number](a, b T) T { return a*b + T(1)/2 }", "x[0] = g(x[1], x[2])\nk[0] = g(k[1], 3)")
	f.Add("var tab = [3][2]int32{{1, 2}, {3, 4}, {5, 6}}", "for i, r := range tab {\n\tk[i] = r[1] + tab[n%3][0]\n}")
	f.Add("type P struct{ A, B int32 }\n\nfunc (p *P) Inc(d int32) { p.A += d; p.B-- }", "var p P\np.Inc(n)\nk[0] = p.A")
	f.Add("type M [4]float32\n\nfunc (m *M) Set(i int32, v float32) { m[i&3] = v }", "s := kernel.Shared[M](t)\ns.Set(t.ThreadIdx.X, x[0])\nt.SyncThreads()\nx[1] = s[0]")
	f.Add("", "fmt.Printf(\"%d %5.2f %x %t %v\\n\", n, x[0], -k[0], n > 0, b[0])\nfmt.Println(\"n =\", n, x[1])")
	_, clangErr := clangtest.Find("clang-16")
	useClang := (clangErr == nil || clangtest.Required()) && (!fuzzing() || os.Getenv("GOCU_FUZZ_CLANG") == "1")
	f.Fuzz(func(t *testing.T, decls, body string) {
		if len(decls)+len(body) > 1024 || !utf8.ValidString(decls) || !utf8.ValidString(body) {
			return
		}
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
		if useClang {
			compileCUDA(t, "fuzz", p.CUDA)
		}
	})
}

// fuzzing reports whether this process is a fuzzing worker (go test
// -fuzz), as opposed to a run of the seed corpus.
func fuzzing() bool {
	f := flag.Lookup("test.fuzzworker")
	return f != nil && f.Value.String() == "true"
}
