package gen

import "testing"

// BenchmarkGenerate measures gocu gen on the test kernels: loading with
// go/packages, translating seven packages and formatting the output (what
// go generate costs).
func BenchmarkGenerate(b *testing.B) {
	needGo(b)
	dirs := kernelDirs(b)
	var patterns []string
	for _, d := range dirs {
		patterns = append(patterns, "./"+d)
	}
	for b.Loop() {
		if _, err := Generate(Config{}, patterns...); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkTranslate measures the translation of one package without the
// go command.
func BenchmarkTranslate(b *testing.B) {
	src := readFile(b, "testdata/kernels/sgemm/sgemm.go")
	for b.Loop() {
		if _, err := translate(b, src); err != nil {
			b.Fatal(err)
		}
	}
}
