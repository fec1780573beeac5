package gosrc_test

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/gocu-dev/gocu/datasets/gosrc"
)

// Pack a folder of Go files, write the packed file and draw batches from
// it.
func Example() {
	dir, _ := os.MkdirTemp("", "gosrc")
	defer os.RemoveAll(dir)
	src := filepath.Join(dir, "src")
	os.MkdirAll(src, 0o755)
	os.WriteFile(filepath.Join(src, "hello.go"), []byte("package main\n\nfunc main() { println(\"hello\") }\n"), 0o644)

	c, err := gosrc.Pack(src, &gosrc.Options{ValFraction: 0}) // 0: the default 5%
	if err != nil {
		fmt.Println(err)
		return
	}
	path := filepath.Join(dir, "go.tok")
	if err := c.WriteFile(path); err != nil {
		fmt.Println(err)
		return
	}
	c, err = gosrc.ReadFile(path)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(len(c.Train), "training tokens in", c.TrainFiles, "file")
	s, err := c.Sampler(gosrc.Train, 2, 8, 1) // 2 windows of 8+1 tokens
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(len(s.Next()), "tokens per batch")
	// Output:
	// 47 training tokens in 1 file
	// 18 tokens per batch
}
