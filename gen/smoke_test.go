package gen

import (
	"testing"
)

func TestSmoke(t *testing.T) {
	res, err := Generate(Config{}, "./testdata/kernels/gray")
	if err != nil {
		t.Fatal(err)
	}
	compileCUDA(t, "gray", res.Packages[0].CUDA)
}
