package meta_test

import (
	"testing"

	"github.com/gocu-dev/gocu/kernel"
	"github.com/gocu-dev/gocu/meta"
)

func kernelA(t *kernel.Thread, x []float32) {}
func twinA(t *kernel.Thread, x []float32)   {}
func notAKernel()                           {}

func TestRegisterLookup(t *testing.T) {
	m := &meta.Module{Package: "example.com/a", Kernels: []meta.Kernel{{Name: "A", Entry: "A", Func: kernelA, Checked: twinA}}}
	meta.Register(m)
	got, k, ok := meta.Lookup(kernelA)
	if !ok || got != m || k.Name != "A" {
		t.Fatalf("Lookup(kernelA) = %v, %v, %v", got, k, ok)
	}
	if _, _, ok := meta.Lookup(notAKernel); ok {
		t.Error("Lookup found a function that is not a registered kernel")
	}
	if _, _, ok := meta.Lookup(42); ok {
		t.Error("Lookup accepted a non-function")
	}
	found := false
	for _, mm := range meta.Modules() {
		found = found || mm == m
	}
	if !found {
		t.Error("Modules does not list the registered module")
	}
}

func TestStrings(t *testing.T) {
	if meta.Slice.String() != "slice" || (meta.Param{Kind: meta.Slice}).Args() != 2 || (meta.Param{Kind: meta.Struct}).Args() != 1 {
		t.Error("Kind/Args")
	}
	if meta.ErrIndex.String() != "index out of range" || meta.ErrDivide.String() != "integer divide by zero" {
		t.Error("ErrorCode.String")
	}
}
