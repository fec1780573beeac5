package sim

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/gocu-dev/gocu/kernel"
)

// printer prints from every thread, around a barrier, so that the
// threads of a block interleave.
func printer(t *kernel.Thread, n int32) {
	i := t.Index()
	kernel.Printf(t, "a%d ", i)
	t.SyncThreads()
	kernel.Printf(t, "b%d\nc%d\n", i, n)
}

// TestPrintOrder checks that kernel.Printf output comes after the launch,
// ordered by block and thread whatever the schedule, each line prefixed
// with its block and thread.
func TestPrintOrder(t *testing.T) {
	var want strings.Builder
	for b := range 3 {
		for th := range 4 {
			i := b*4 + th
			fmt.Fprintf(&want, "block (%d,0,0) thread (%d,0,0): a%d b%d\n", b, th, i, i)
			fmt.Fprintf(&want, "block (%d,0,0) thread (%d,0,0): c7\n", b, th)
		}
	}
	for seed := uint64(1); seed <= 5; seed++ {
		var out bytes.Buffer
		cfg := Config{Grid: kernel.Dim3{X: 3}, Block: kernel.Dim3{X: 4}, Seed: seed, Workers: 2, Stdout: &out}
		if err := Run(cfg, printer, int32(7)); err != nil {
			t.Fatal(err)
		}
		if out.String() != want.String() {
			t.Fatalf("seed %d printed\n%s\nwant\n%s", seed, out.String(), want.String())
		}
	}
}

// TestPrintLimit checks that a launch keeps at most maxPrint bytes and
// says so, as a GPU's printf buffer drops what does not fit.
func TestPrintLimit(t *testing.T) {
	var out bytes.Buffer
	big := strings.Repeat("x", 1000) + "\n"
	k := Kernel{Name: "Chatty", Func: func(t *kernel.Thread) { kernel.Printf(t, "%s", big) }}
	cfg := Config{Grid: kernel.Dim3{X: 8}, Block: kernel.Dim3{X: 256}, Stdout: &out}
	if err := Launch(cfg, k); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(out.String(), "xxx\n"); n < maxPrint/len(big)-1 || n > maxPrint/len(big) {
		t.Errorf("%d lines kept, want about %d", n, maxPrint/len(big))
	}
	if !strings.HasSuffix(out.String(), "sim: kernel Chatty: printed more than 1048576 bytes; the rest was dropped, as a GPU drops what does not fit its printf buffer\n") {
		t.Errorf("no note of the dropped output at the end:\n...%s", out.String()[max(0, out.Len()-300):])
	}
}

// TestPrintOnError checks that what the threads printed before a launch
// failed is written too: it is what one debugs with.
func TestPrintOnError(t *testing.T) {
	var out bytes.Buffer
	k := Kernel{Name: "Fails", Func: func(t *kernel.Thread) {
		kernel.Printf(t, "thread %d\n", t.ThreadIdx.X)
		s := make([]int, 4)
		_ = s[t.ThreadIdx.X]
	}}
	err := Launch(Config{Grid: kernel.Dim3{X: 1}, Block: kernel.Dim3{X: 8}, Stdout: &out, Seed: 1}, k)
	if err == nil || !strings.Contains(err.Error(), "out of range") {
		t.Fatalf("launch: %v, want an index out of range", err)
	}
	if !strings.Contains(out.String(), "block (0,0,0) thread (0,0,0): thread 0\n") {
		t.Errorf("the output before the failure is lost:\n%s", out.String())
	}
}
